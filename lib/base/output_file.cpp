// OutputFile: temporary file, rename into place, removal on error; the table of pending paths
// that remove_pending_outputs() reads from a signal handler.
#include "gguftool/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "gguftool/error.hpp"

namespace gguftool {
namespace {

// Pending paths, read by remove_pending_outputs(): lock-free atomics only, no allocation in the
// handler. A fixed block of slots, then, for programs with more outputs pending at once (the
// shards of a split model), slots allocated by the thread creating an output and pushed onto a
// list that is never shortened: a free slot is reused. A path longer than kPathMax is still
// removed by its OutputFile's destructor, just not on a signal.
constexpr int kSlots = 16;
constexpr size_t kPathMax = 4096;

}  // namespace

namespace detail {
struct PendingSlot {
    std::atomic<bool> owned{false};  // claimed by an OutputFile
    std::atomic<bool> used{false};   // `path` is set and is to be removed on a signal
    char path[kPathMax]{};
    PendingSlot *next = nullptr;  // set before the slot is published, then constant
};
}  // namespace detail

namespace {

using detail::PendingSlot;

// constinit: zero bytes, left in .bss untouched until used (a constructor run at start-up
// wrote to all 64 KiB of it: 16 page faults in every run of gguftool).
constinit PendingSlot g_slots[kSlots];
std::atomic<PendingSlot *> g_more{nullptr};  // the allocated slots, newest first

static_assert(std::atomic<PendingSlot *>::is_always_lock_free);

// Creating a temporary file and registering it, or renaming it and registering the new name, must
// look atomic to remove_pending_outputs(): a signal in between would leave a file nobody removes
// (a SIGINT test of `to-onnx` failed 6 times in 15 before these windows were protected). In the
// thread doing it, signals are blocked; a handler running in another thread (the decoders have
// worker threads) waits until `g_changing` is back to zero.
std::atomic<int> g_changing{0};
std::atomic<bool> g_removing{false};  // set for good by remove_pending_outputs()
thread_local bool t_changing = false;

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "remove_pending_outputs() must be async-signal-safe");

class Change {
public:
    Change() {
        // Every signal a program may handle; not those a fault raises in this very thread.
        sigset_t set;
        sigfillset(&set);
        for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS})
            sigdelset(&set, s);
        pthread_sigmask(SIG_BLOCK, &set, &old_);
        g_changing.fetch_add(1);
        if (g_removing.load()) {
            // A handler in another thread is removing the outputs and is about to end the
            // process. Throwing would let this thread carry on (and exit with another status)
            // meanwhile; a file created now would outlive the removal. So wait for the end.
            g_changing.fetch_sub(1);
            for (;;) ::pause();  // with every signal blocked: until the process ends
        }
        t_changing = true;
    }
    ~Change() {
        t_changing = false;
        g_changing.fetch_sub(1);
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    Change(const Change &) = delete;
    Change &operator=(const Change &) = delete;

private:
    sigset_t old_;
};

bool claim(PendingSlot &s) {
    bool free = false;
    return s.owned.compare_exchange_strong(free, true);
}

// A slot owned by the caller: a free one, else a new one on the list.
PendingSlot *claim_slot() {
    for (PendingSlot &s : g_slots)
        if (claim(s)) return &s;
    for (PendingSlot *s = g_more.load(); s; s = s->next)
        if (claim(*s)) return s;
    auto *s = new PendingSlot;  // never freed: the handler may be walking the list
    s->owned.store(true);
    s->next = g_more.load();
    while (!g_more.compare_exchange_weak(s->next, s)) {
    }
    return s;
}

// Only inside a Change.
PendingSlot *add_pending(const std::string &path) {
    if (path.size() >= kPathMax) return nullptr;
    PendingSlot *s = claim_slot();
    std::memcpy(s->path, path.c_str(), path.size() + 1);
    s->used.store(true);
    return s;
}

// Only inside a Change.
void rename_pending(PendingSlot *s, const std::string &path) {
    if (!s) return;
    if (path.size() >= kPathMax) {
        s->used.store(false);
        return;
    }
    std::memcpy(s->path, path.c_str(), path.size() + 1);
    s->used.store(true);
}

void drop_pending(PendingSlot *s) {
    if (!s) return;
    s->used.store(false);
    s->owned.store(false);
}

void remove_slot(const PendingSlot &s) {
    if (s.used.load()) ::unlink(s.path);
}

// copy_file_range: bytes per call (bounded so that a signal is seen between calls), and the
// errors that mean "not here" rather than a failure: another file system (EXDEV before Linux 5.3
// and again since 5.19 for file systems of different types), no system call (ENOSYS), files
// it does not handle (EINVAL, EOPNOTSUPP, ETXTBSY).
constexpr size_t kCopyChunk = size_t{1} << 30;
constexpr size_t kCopyBuffer = size_t{1} << 20;  // the fallback's read/write buffer

bool copy_unsupported(int err) {
    return err == EXDEV || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP || err == ENOTSUP ||
           err == ETXTBSY;
}

// rename() that fails with EEXIST rather than replace a file: renameat2's RENAME_NOREPLACE, or
// where a file system lacks it, a hard link (which never replaces) and the removal of the old
// name.
bool rename_new(const std::string &from, const std::string &to) {
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
        return true;
    if (errno != EINVAL && errno != ENOSYS) return false;
    if (::link(from.c_str(), to.c_str()) != 0) return false;
    ::unlink(from.c_str());
    return true;
}

// The permissions a new file gets under the process's umask as it is now. Read from
// /proc/self/status (Linux 4.7 and later), which leaves it alone; umask() can only read it by
// setting it, for a moment, for every thread of the process.
mode_t new_file_mode() {
    mode_t mask = 0;
    bool found = false;
    if (std::FILE *f = std::fopen("/proc/self/status", "re")) {
        char line[256];
        unsigned m = 0;
        while (!found && std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "Umask: %o", &m) == 1) found = true;
        std::fclose(f);
        mask = static_cast<mode_t>(m);
    }
    if (!found) {
        mask = ::umask(0);
        ::umask(mask);
    }
    return 0666 & ~mask;
}

}  // namespace

void refuse_to_write_over(const std::string &output, const std::vector<std::string> &inputs) {
    struct stat out {};
    if (::stat(output.c_str(), &out) != 0) return;
    for (const std::string &input : inputs) {
        struct stat in {};
        if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            throw Error(output, std::nullopt,
                        fmt::format("refusing to write over the input file {}", input));
    }
}

void remove_pending_outputs() noexcept {
    g_removing.store(true);
    if (!t_changing)
        while (g_changing.load() != 0) {
        }
    for (const PendingSlot &s : g_slots) remove_slot(s);
    for (const PendingSlot *s = g_more.load(); s; s = s->next) remove_slot(*s);
}

OutputFile::OutputFile(std::string final_path) : final_(std::move(final_path)) {
    const std::filesystem::path p(final_);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    std::string tmpl = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
    int create_errno = 0;
    {
        Change change;
        fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
        create_errno = errno;
        if (fd_ >= 0) {
            temp_ = tmpl;
            slot_ = add_pending(temp_);
        }
    }
    if (fd_ < 0)
        throw Error(final_, std::nullopt,
                    fmt::format("cannot create a temporary file in {}: {}", dir,
                                std::strerror(create_errno)));
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
    drop_pending(slot_);  // after the unlink: until then a signal removes it too
}

void OutputFile::write(const void *data, size_t size) {
    if (fd_ < 0) throw Error(final_, size_, "cannot write: the file is closed");
    const auto *p = static_cast<const uint8_t *>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd_, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error(
                final_, size_,
                fmt::format("cannot write: {}", n < 0 ? std::strerror(errno) : "no progress"));
        p += n;
        size -= static_cast<size_t>(n);
        size_ += static_cast<uint64_t>(n);
    }
}

void OutputFile::copy_from(int source_fd, uint64_t source_offset, uint64_t size,
                           const std::string &source) {
    if (fd_ < 0) throw Error(final_, size_, "cannot write: the file is closed");
    const auto fail = [&](const char *what, int err) {
        throw Error(final_, size_,
                    fmt::format("cannot {} {} at offset {}: {}", what, source, source_offset,
                                err ? std::strerror(err) : "it ends there"));
    };
    // In the kernel while it can; copy_file_range returns 0 at the end of the source, and also
    // for files it does not handle (some kernels): the fallback tells the two apart.
    while (size > 0) {
        loff_t in = static_cast<loff_t>(source_offset);
        const size_t n = std::min<uint64_t>(size, kCopyChunk);
        const ssize_t done = ::copy_file_range(source_fd, &in, fd_, nullptr, n, 0);
        if (done < 0 && errno == EINTR) continue;
        if (done < 0 && !copy_unsupported(errno)) fail("copy from", errno);
        if (done <= 0) break;
        source_offset += static_cast<uint64_t>(done);
        size -= static_cast<uint64_t>(done);
        size_ += static_cast<uint64_t>(done);
    }
    if (size == 0) return;
    const std::unique_ptr<uint8_t[]> buffer(new uint8_t[kCopyBuffer]);
    while (size > 0) {
        const size_t n = std::min<uint64_t>(size, kCopyBuffer);
        const ssize_t got = ::pread(source_fd, buffer.get(), n, static_cast<off_t>(source_offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail("read", got < 0 ? errno : 0);
        write(buffer.get(), static_cast<size_t>(got));
        source_offset += static_cast<uint64_t>(got);
        size -= static_cast<uint64_t>(got);
    }
}

void OutputFile::pad_to(uint64_t alignment) {
    static const std::vector<uint8_t> zeros(65536);
    uint64_t pad = (alignment - size_ % alignment) % alignment;
    while (pad > 0) {
        const size_t n = std::min<uint64_t>(pad, zeros.size());
        write(zeros.data(), n);
        pad -= n;
    }
}

void OutputFile::close() {
    if (fd_ < 0) return;
    const bool chmod_ok = ::fchmod(fd_, new_file_mode()) == 0;
    const int chmod_errno = errno;
    const bool close_ok = ::close(fd_) == 0;
    fd_ = -1;
    if (!chmod_ok || !close_ok)
        throw Error(final_, std::nullopt,
                    fmt::format("cannot close: {}", std::strerror(chmod_ok ? errno : chmod_errno)));
}

void OutputFile::commit(Existing existing) {
    close();
    Change change;
    if (existing == Existing::refuse ? !rename_new(temp_, final_)
                                     : ::rename(temp_.c_str(), final_.c_str()) != 0)
        throw Error(final_, std::nullopt,
                    errno == EEXIST ? std::string("already exists; not replaced")
                                    : fmt::format("cannot rename {} into place: {}", temp_,
                                                  std::strerror(errno)));
    temp_ = final_;  // from now on a failure removes the renamed file
    rename_pending(slot_, temp_);
}

void OutputFile::keep() {
    temp_.clear();
    drop_pending(slot_);
    slot_ = nullptr;
}

}  // namespace gguftool
