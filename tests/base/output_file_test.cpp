// gguftool::OutputFile: the output appears whole under its name or not at all, an earlier file of
// that name survives a failure, and the library leaves the program's signal dispositions and
// signal mask as they were. remove_pending_outputs() cleans up from a program's own handler.
#include "gguftool/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gguf_test_support.hpp"
#include "gguftool/error.hpp"
#include "signal_test_support.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using testkit::DefaultDispositions;
using testkit::install_cleanup_handler;
using testkit::read_file;
using testkit::TempDir;
using testkit::write_file;

std::vector<std::string> files_in(const std::string &dir) {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string text_of(const std::string &path) {
    const std::vector<uint8_t> b = read_file(path);
    return std::string(b.begin(), b.end());
}

void write_text(const std::string &path, const std::string &text) {
    write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// Runs `body` in a child process and returns its wait status.
template <class F>
int in_child(F body) {
    const pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

TEST(OutputFile, AppearsUnderItsNameOnlyWhenCommitted) {
    TempDir dir;
    const mode_t old_mask = ::umask(027);
    {
        OutputFile out(dir.file("out.bin"));
        out.write("hello", 5);
        out.pad_to(8);
        EXPECT_EQ(out.size(), 8u);
        const std::vector<std::string> names = files_in(dir.path());
        ASSERT_EQ(names.size(), 1u);
        EXPECT_EQ(names[0].rfind(".out.bin.tmp-", 0), 0u) << names[0];
        out.commit();
        out.keep();
    }
    ::umask(old_mask);
    EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"out.bin"});
    EXPECT_EQ(text_of(dir.file("out.bin")), std::string("hello\0\0\0", 8));
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("out.bin").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);  // 0666 under the umask 027
}

TEST(OutputFile, AbandonedOutputLeavesTheEarlierFile) {
    TempDir dir;
    write_text(dir.file("out"), "earlier");
    {
        OutputFile out(dir.file("out"));
        out.write("newer and longer", 16);
    }
    EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"out"});
    EXPECT_EQ(text_of(dir.file("out")), "earlier");
}

TEST(OutputFile, CommittedButNotKeptIsRemoved) {
    TempDir dir;
    {
        OutputFile out(dir.file("out"));
        out.write("x", 1);
        out.commit();
        EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"out"});
    }
    EXPECT_TRUE(files_in(dir.path()).empty());
}

TEST(OutputFile, MissingDirectoryIsAnErrorNamingIt) {
    TempDir dir;
    try {
        OutputFile out(dir.file("no/such/out"));
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), dir.file("no/such/out") + ": cannot create a temporary " +
                                             "file in " + dir.file("no/such") +
                                             ": No such file or directory");
    }
}

// Under RLIMIT_FSIZE, with SIGXFSZ ignored as a program should: the write fails with the file
// and the offset where it stopped, and nothing is left.
TEST(OutputFile, FileSizeLimitIsAWriteError) {
    TempDir dir;
    const int status = in_child([&] {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{1000, 1000};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        try {
            OutputFile out(dir.file("out"));
            const std::vector<uint8_t> bytes(4000, 7);
            out.write(bytes.data(), bytes.size());
            _exit(10);
        } catch (const Error &e) {
            _exit(std::string(e.what()) ==
                          dir.file("out") + ": offset 1000: cannot write: File too large"
                      ? 0
                      : 11);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no error, 11: another message";
    EXPECT_TRUE(files_in(dir.path()).empty());
}

// The library changes no signal disposition and gives the signal mask back after each call.
TEST(OutputFile, InstallsNoSignalHandler) {
    TempDir dir;
    const DefaultDispositions dispositions;
    sigset_t mask_before;
    pthread_sigmask(SIG_SETMASK, nullptr, &mask_before);
    const auto expect_untouched = [&](const char *when) {
        const int sig = DefaultDispositions::changed();
        EXPECT_EQ(sig, 0) << strsignal(sig) << " handled " << when;
        sigset_t mask;
        pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        for (int s = 1; s < NSIG; ++s)
            EXPECT_EQ(sigismember(&mask, s), sigismember(&mask_before, s))
                << strsignal(s) << " blocked or unblocked " << when;
    };
    {
        OutputFile out(dir.file("out"));
        expect_untouched("while pending");
        out.write("x", 1);
        out.commit();
        expect_untouched("after commit");
        out.keep();
    }
    expect_untouched("after keep");
}

// A program's handler calling remove_pending_outputs(): the temporary file and a committed but
// not kept output go, a kept one and the earlier file of a pending output's name stay.
TEST(RemovePendingOutputs, FromAHandlerLeavesOnlyFinishedFiles) {
    TempDir dir;
    write_text(dir.file("a"), "earlier");
    const int status = in_child([&] {
        install_cleanup_handler(SIGINT);
        OutputFile a(dir.file("a"));
        a.write("new", 3);
        OutputFile b(dir.file("b"));
        b.write("committed", 9);
        b.commit();
        OutputFile c(dir.file("c"));
        c.write("kept", 4);
        c.commit();
        c.keep();
        ::raise(SIGINT);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
    EXPECT_EQ(files_in(dir.path()), (std::vector<std::string>{"a", "c"}));
    EXPECT_EQ(text_of(dir.file("a")), "earlier");
    EXPECT_EQ(text_of(dir.file("c")), "kept");
}

// Once outputs are being removed, no new one can start (it would outlive the removal): the
// thread that tries waits for the end of the process.
TEST(RemovePendingOutputs, ThenNoOutputStarts) {
    TempDir dir;
    const pid_t pid = fork();
    if (pid == 0) {
        remove_pending_outputs();
        OutputFile out(dir.file("late"));
        _exit(10);
    }
    ::usleep(300000);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "ended with status " << status;
    EXPECT_TRUE(files_in(dir.path()).empty());
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
}

// A signal to the process lands on any thread that does not block it. While one thread creates
// or renames outputs over and over, a SIGINT from outside (delivered to the idle second thread
// whenever the first blocks it) must still leave nothing: no temporary file, no renamed output.
TEST(RemovePendingOutputs, SignalToAnotherThreadMidRename) {
    for (int round = 0; round < 20; ++round) {
        TempDir dir;
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t pid = fork();
        if (pid == 0) {
            install_cleanup_handler(SIGINT);
            std::thread idle([] {
                for (;;) ::pause();
            });
            idle.detach();
            for (uint64_t i = 0;; ++i) {
                OutputFile out(dir.file("out"));
                out.write(&i, sizeof i);
                out.commit();
                if (i == 100) (void)!::write(ready[1], "r", 1);
            }
        }
        char c = 0;
        ASSERT_EQ(::read(ready[0], &c, 1), 1);
        ::usleep(static_cast<useconds_t>(round * 150));
        ::kill(pid, SIGINT);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ::close(ready[0]);
        ::close(ready[1]);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
        EXPECT_TRUE(files_in(dir.path()).empty()) << "round " << round;
    }
}

// Many outputs pending at once (a split model's shards), more than the fixed block of slots, each
// closed before any is committed: a signal removes every one of them.
TEST(RemovePendingOutputs, ManyPendingOutputsAllGo) {
    TempDir dir;
    const int status = in_child([&] {
        install_cleanup_handler(SIGTERM);
        std::vector<std::unique_ptr<OutputFile>> outs;
        for (int i = 0; i < 100; ++i) {
            outs.push_back(std::make_unique<OutputFile>(dir.file("shard-" + std::to_string(i))));
            outs.back()->write("x", 1);
            outs.back()->close();
        }
        for (int i = 0; i < 50; ++i) outs[i]->commit();  // renamed, not kept
        ::raise(SIGTERM);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
    EXPECT_TRUE(files_in(dir.path()).empty());
    // And in a process that is not interrupted, slots are reused: 1000 outputs in turn.
    for (int i = 0; i < 1000; ++i) {
        OutputFile out(dir.file("again"));
        out.write("y", 1);
    }
    EXPECT_TRUE(files_in(dir.path()).empty());
}

TEST(OutputFile, ClosedTakesNoWrite) {
    TempDir dir;
    OutputFile out(dir.file("out"));
    out.write("abc", 3);
    out.close();
    try {
        out.write("d", 1);
        ADD_FAILURE() << "wrote to a closed output";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  dir.file("out") + ": offset 3: cannot write: the file is closed");
    }
    out.commit();
    out.keep();
    EXPECT_EQ(text_of(dir.file("out")), "abc");
}

// A descriptor of `path`, closed with this object.
struct Fd {
    explicit Fd(const std::string &path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~Fd() { ::close(fd); }
    int fd;
};

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    uint32_t x = 1;
    for (uint8_t &b : v) b = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
    return v;
}

void expect_copies(const std::string &source_dir, const std::string &out_dir) {
    const std::vector<uint8_t> src = pattern(3 << 20);
    write_file(source_dir + "/src", src);
    const Fd in(source_dir + "/src");
    ASSERT_GE(in.fd, 0);
    {
        OutputFile out(out_dir + "/out");
        out.write("head", 4);
        out.copy_from(in.fd, 1000, src.size() - 2000, source_dir + "/src");  // > the 1 MiB buffer
        out.copy_from(in.fd, 0, 0, source_dir + "/src");
        out.copy_from(in.fd, 7, 5, source_dir + "/src");
        EXPECT_EQ(out.size(), 4 + src.size() - 2000 + 5);
        out.commit();
        out.keep();
    }
    std::vector<uint8_t> expected = {'h', 'e', 'a', 'd'};
    expected.insert(expected.end(), src.begin() + 1000, src.end() - 1000);
    expected.insert(expected.end(), src.begin() + 7, src.begin() + 12);
    EXPECT_TRUE(read_file(out_dir + "/out") == expected);
}

TEST(OutputFile, CopyFromAFile) {
    TempDir dir;
    expect_copies(dir.path(), dir.path());
}

// From another file system (tmpfs to the test directory's): copy_file_range refuses (EXDEV) and
// the read/write fallback copies.
TEST(OutputFile, CopyFromAnotherFileSystem) {
    TempDir dir;
    struct stat shm {
    }, here{};
    if (::stat("/dev/shm", &shm) != 0 || ::stat(dir.path().c_str(), &here) != 0 ||
        shm.st_dev == here.st_dev || ::access("/dev/shm", W_OK) != 0)
        GTEST_SKIP() << "no writable /dev/shm on another file system than " << dir.path();
    char tmpl[] = "/dev/shm/gguftool-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    expect_copies(tmpl, dir.path());
    fs::remove_all(tmpl);
}

TEST(OutputFile, CopyPastTheEndOfTheSourceNamesIt) {
    TempDir dir;
    write_file(dir.file("src"), pattern(100));
    const Fd in(dir.file("src"));
    OutputFile out(dir.file("out"));
    try {
        out.copy_from(in.fd, 40, 100, dir.file("src"));
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), dir.file("out") + ": offset 60: cannot read " +
                                             dir.file("src") + " at offset 100: it ends there");
    }
}

// copy_file_range under RLIMIT_FSIZE fails with the output's offset where it stopped.
TEST(OutputFile, FileSizeLimitIsACopyError) {
    TempDir dir;
    write_file(dir.file("src"), pattern(4000));
    const int status = in_child([&] {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{1000, 1000};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        const Fd in(dir.file("src"));
        try {
            OutputFile out(dir.file("out"));
            out.copy_from(in.fd, 0, 4000, dir.file("src"));
            _exit(10);
        } catch (const Error &e) {
            const std::string expected = dir.file("out") + ": offset 1000: cannot copy from " +
                                         dir.file("src") + " at offset 1000: File too large";
            _exit(std::string(e.what()) == expected ? 0 : 11);
        }
    });
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no error, 11: another message";
    EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"src"});
}

// Existing::refuse: an existing file of the name is an error at the rename, left as it is, and
// the new output is gone.
TEST(OutputFile, CommitCanRefuseToReplace) {
    TempDir dir;
    write_text(dir.file("out"), "earlier");
    {
        OutputFile out(dir.file("out"));
        out.write("new", 3);
        try {
            out.commit(OutputFile::Existing::refuse);
            ADD_FAILURE() << "replaced an existing file";
        } catch (const Error &e) {
            EXPECT_EQ(std::string(e.what()), dir.file("out") + ": already exists; not replaced");
        }
    }
    EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"out"});
    EXPECT_EQ(text_of(dir.file("out")), "earlier");
    OutputFile fresh(dir.file("fresh"));
    fresh.write("x", 1);
    fresh.commit(OutputFile::Existing::refuse);
    fresh.keep();
    EXPECT_EQ(text_of(dir.file("fresh")), "x");
}

TEST(RefuseToWriteOver, TheSameFileUnderAnyName) {
    TempDir dir;
    write_text(dir.file("in"), "input");
    ASSERT_EQ(::link(dir.file("in").c_str(), dir.file("alias").c_str()), 0);
    write_text(dir.file("other"), "other");
    try {
        refuse_to_write_over(dir.file("alias"), {dir.file("other"), dir.file("in")});
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()),
                  dir.file("alias") + ": refusing to write over the input file " + dir.file("in"));
    }
    EXPECT_NO_THROW(refuse_to_write_over(dir.file("other"), {dir.file("in")}));
    EXPECT_NO_THROW(refuse_to_write_over(dir.file("missing"), {dir.file("in")}));
}

}  // namespace
}  // namespace gguftool
