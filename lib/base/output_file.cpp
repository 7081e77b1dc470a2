// OutputFile: temporary file, rename into place, removal on error; the table of pending paths
// that remove_pending_outputs() reads from a signal handler.
#include "gguftool/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "gguftool/error.hpp"

namespace gguftool {
namespace {

// Pending paths, read by remove_pending_outputs(): fixed storage, no allocation, lock-free
// atomics only. An output that finds no free slot (or has a longer path) is still removed by its
// destructor, just not on a signal.
constexpr int kSlots = 16;
constexpr size_t kPathMax = 4096;
struct Slot {
    std::atomic<bool> owned{false};  // claimed by an OutputFile
    std::atomic<bool> used{false};   // `path` is set and is to be removed on a signal
    char path[kPathMax];
};
Slot g_slots[kSlots];

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

// Only inside a Change.
int add_pending(const std::string &path) {
    if (path.size() >= kPathMax) return -1;
    for (int i = 0; i < kSlots; ++i) {
        Slot &s = g_slots[i];
        bool free = false;
        if (!s.owned.compare_exchange_strong(free, true)) continue;
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.used.store(true);
        return i;
    }
    return -1;
}

// Only inside a Change.
void rename_pending(int slot, const std::string &path) {
    if (slot < 0) return;
    Slot &s = g_slots[slot];
    if (path.size() >= kPathMax) {
        s.used.store(false);
        return;
    }
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.used.store(true);
}

void drop_pending(int slot) {
    if (slot < 0) return;
    g_slots[slot].used.store(false);
    g_slots[slot].owned.store(false);
}

mode_t new_file_mode() {
    static const mode_t mask = [] {
        const mode_t m = ::umask(0);
        ::umask(m);
        return m;
    }();
    return 0666 & ~mask;
}

}  // namespace

void remove_pending_outputs() noexcept {
    g_removing.store(true);
    if (!t_changing)
        while (g_changing.load() != 0) {
        }
    for (Slot &s : g_slots)
        if (s.used.load()) ::unlink(s.path);
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

void OutputFile::pad_to(uint64_t alignment) {
    static const std::vector<uint8_t> zeros(65536);
    uint64_t pad = (alignment - size_ % alignment) % alignment;
    while (pad > 0) {
        const size_t n = std::min<uint64_t>(pad, zeros.size());
        write(zeros.data(), n);
        pad -= n;
    }
}

void OutputFile::commit() {
    const bool chmod_ok = ::fchmod(fd_, new_file_mode()) == 0;
    const int chmod_errno = errno;
    const bool close_ok = ::close(fd_) == 0;
    fd_ = -1;
    if (!chmod_ok || !close_ok)
        throw Error(final_, std::nullopt,
                    fmt::format("cannot close: {}", std::strerror(chmod_ok ? errno : chmod_errno)));
    Change change;
    if (::rename(temp_.c_str(), final_.c_str()) != 0)
        throw Error(final_, std::nullopt,
                    fmt::format("cannot rename {} into place: {}", temp_, std::strerror(errno)));
    temp_ = final_;  // from now on a failure removes the renamed file
    rename_pending(slot_, temp_);
}

void OutputFile::keep() {
    temp_.clear();
    drop_pending(slot_);
    slot_ = -1;
}

}  // namespace gguftool
