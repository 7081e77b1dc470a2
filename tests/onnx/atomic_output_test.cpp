// Output appears whole or not at all: a failed write (file size limit), an exception or a signal
// in the middle leaves no .onnx, no data file and no temporary file; an earlier output survives a
// failed conversion; the input is never written over.
#include <signal.h>
#include <sys/wait.h>

#include "onnx_test_util.hpp"
#include "signal_test_support.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

// A model of about 1.2 MB, enough for several chunks.
void write_model(const std::string &path) {
    write_gguf(path, {{"a", GgmlType::f32, {65536, 4}, testkit::random_bytes(1 << 20, 1)},
                      {"b", GgmlType::q8_0, {4096, 16}, testkit::random_bytes(16 * 128 * 34, 2)}});
}

TEST(AtomicOutput, FileSizeLimitLeavesNothing) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    for (bool external : {false, true}) {
        SCOPED_TRACE(external ? "external data" : "inline");
        std::vector<std::string> args = {"to-onnx", dir.file("m.gguf"), dir.file("m.onnx")};
        if (external) args.push_back("--external-data");
        const CliResult r = run_cli(args, 256 * 1024);
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
        EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"m.gguf"});
    }
    // Without the limit the same command works.
    const CliResult ok = run_cli({"to-onnx", dir.file("m.gguf"), dir.file("m.onnx"), "--quiet"});
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(dir_entries(dir.path()), (std::vector<std::string>{"m.gguf", "m.onnx"}));
}

// An error half-way (here the progress callback throws) removes the temporary files, and a model
// written earlier under the same name is still there, unchanged.
TEST(AtomicOutput, ErrorKeepsThePreviousOutput) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    const gguf::Model model = gguf::Model::open(dir.file("m.gguf"));
    onnx_export::Options o;
    o.external_data = true;
    onnx_export::export_model(model, dir.file("m.onnx"), o);
    const std::vector<uint8_t> before = read_file(dir.file("m.onnx"));
    const std::vector<uint8_t> data_before = read_file(dir.file("m.onnx.data"));

    for (bool external : {false, true}) {
        o.external_data = external;
        o.mode = external ? Mode::unpack : Mode::packed;
        o.progress = [](uint64_t done, uint64_t) {
            if (done > 300000) throw Error("stop here");
        };
        EXPECT_THROW(onnx_export::export_model(model, dir.file("m.onnx"), o), Error);
        EXPECT_EQ(dir_entries(dir.path()),
                  (std::vector<std::string>{"m.gguf", "m.onnx", "m.onnx.data"}));
        EXPECT_EQ(read_file(dir.file("m.onnx")), before);
        EXPECT_EQ(read_file(dir.file("m.onnx.data")), data_before);
    }
}

// SIGINT or SIGTERM during the write, with a handler as a program would install one
// (gguftool/output_file.hpp): the temporary files go, then the signal ends the process.
TEST(AtomicOutput, SignalLeavesNothing) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    for (int sig : {SIGINT, SIGTERM}) {
        for (bool external : {false, true}) {
            SCOPED_TRACE(std::string(strsignal(sig)) + (external ? ", external data" : ""));
            const pid_t pid = fork();
            if (pid == 0) {
                testkit::install_cleanup_handler(sig);
                onnx_export::Options o;
                o.external_data = external;
                o.progress = [sig](uint64_t done, uint64_t) {
                    if (done > 300000) ::raise(sig);
                };
                try {
                    onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")),
                                              dir.file("m.onnx"), o);
                } catch (...) {
                }
                _exit(0);  // not reached when the signal ends the process
            }
            int status = 0;
            ASSERT_EQ(waitpid(pid, &status, 0), pid);
            EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "status " << status;
            EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"m.gguf"});
        }
    }
}

// The library leaves signals to the program: export_model changes no disposition, neither while
// it writes nor after.
TEST(AtomicOutput, ExportInstallsNoSignalHandler) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    const testkit::DefaultDispositions dispositions;
    for (bool external : {false, true}) {
        SCOPED_TRACE(external ? "external data" : "inline");
        onnx_export::Options o;
        o.external_data = external;
        bool checked = false;
        int changed_while_writing = 0;
        o.progress = [&](uint64_t, uint64_t) {
            checked = true;
            if (!changed_while_writing)
                changed_while_writing = testkit::DefaultDispositions::changed();
        };
        onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
        EXPECT_TRUE(checked);
        EXPECT_EQ(changed_while_writing, 0) << strsignal(changed_while_writing);
        EXPECT_EQ(testkit::DefaultDispositions::changed(), 0);
    }
}

TEST(AtomicOutput, RefusesToWriteOverTheInput) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    fs::create_hard_link(dir.file("m.gguf"), dir.file("link.onnx"));
    fs::create_symlink(dir.file("m.gguf"), dir.file("sym.onnx"));
    const std::vector<uint8_t> before = read_file(dir.file("m.gguf"));
    const gguf::Model model = gguf::Model::open(dir.file("m.gguf"));
    for (const char *out : {"m.gguf", "link.onnx", "sym.onnx"}) {
        try {
            onnx_export::export_model(model, dir.file(out), {});
            ADD_FAILURE() << out << ": no error";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find("refusing to write over the input file"),
                      std::string::npos)
                << e.what();
        }
    }
    // The data file name counts too: OUTPUT.data may not be the input either.
    fs::create_hard_link(dir.file("m.gguf"), dir.file("x.onnx.data"));
    EXPECT_THROW(onnx_export::export_model(model, dir.file("x.onnx"), {}), Error);
    EXPECT_EQ(read_file(dir.file("m.gguf")), before);
    EXPECT_FALSE(fs::exists(dir.file("x.onnx")));
}

TEST(AtomicOutput, MissingDirectoryIsAnError) {
    TempDir dir;
    write_model(dir.file("m.gguf"));
    try {
        onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("no/such/m.onnx"),
                                  {});
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("cannot create a temporary file in"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace gguftool::onnxtest

namespace gguftool::onnxtest {
namespace {

// The user presses Ctrl-C while `gguftool to-onnx` writes: a real SIGINT from outside, to the
// CLI process, part-way through a 256 MiB conversion. Nothing may be left in the directory. The
// same for SIGTERM (kill) and SIGHUP (the terminal closes).
TEST(AtomicOutput, CtrlCOnTheCommandLineLeavesNothing) {
    const std::pair<int, bool> cases[] = {
        {SIGINT, false}, {SIGINT, true}, {SIGTERM, false}, {SIGHUP, true}};
    for (const auto &[sig, external] : cases) {
        SCOPED_TRACE(std::string(strsignal(sig)) + (external ? ", external data" : ", inline"));
        TempDir dir;
        const std::string in = dir.file("big.gguf");
        // One f32 tensor of 2^26 zeros, stored sparse: the header, then a hole up to the end.
        gguf::Writer w;
        w.add_tensor("big", GgmlType::f32, {uint64_t(1) << 26}, {});
        const std::vector<uint8_t> header = w.to_bytes();
        testkit::write_file(in, header);
        testkit::resize_file(in, (header.size() + 31) / 32 * 32 + (uint64_t(1) << 28));

        std::vector<std::string> args = {GGUFTOOL_EXE, "to-onnx", in, dir.file("big.onnx"),
                                         "--quiet"};
        if (external) args.push_back("--external-data");
        testkit::ProcessOptions inherit;
        inherit.out = inherit.err = testkit::Output::inherit;
        const testkit::Child child = testkit::spawn(args, inherit);
        // Interrupt as soon as the output (under its temporary name) appears.
        bool seen = false;
        for (int i = 0; i < 60000 && !seen; ++i) {
            seen = dir_entries(dir.path()).size() > 1;
            if (!seen) ::usleep(500);
            int status = 0;
            if (!seen && ::waitpid(child.pid, &status, WNOHANG) == child.pid)
                FAIL() << "to-onnx ended before it could be interrupted, status " << status;
        }
        ASSERT_TRUE(seen) << "no output appeared";
        ::kill(child.pid, sig);
        const testkit::ProcessResult r = testkit::finish(child);
        EXPECT_EQ(r.signal, sig) << "exit " << r.status;
        EXPECT_EQ(dir_entries(dir.path()), std::vector<std::string>{"big.gguf"});
    }
}

}  // namespace
}  // namespace gguftool::onnxtest
