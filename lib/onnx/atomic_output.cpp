// OutputFile: temporary file, rename into place, and removal on error or signal.
#include "atomic_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "gguftool/error.hpp"

namespace gguftool::onnx_export::detail {
namespace {

// Pending paths, read by the signal handler: fixed storage, no allocation, atomic flags.
constexpr int kSlots = 8;
constexpr size_t kPathMax = 4096;
struct Slot {
    std::atomic<bool> used{false};
    char path[kPathMax];
};
Slot g_slots[kSlots];

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kCleanupSignals)];
struct sigaction g_previous_xfsz;
std::mutex g_mutex;  // guards the slots' owners and the installed handlers
int g_pending = 0;

void remove_pending_and_reraise(int sig) {
    for (Slot &s : g_slots)
        if (s.used.load()) ::unlink(s.path);
    for (size_t i = 0; i < std::size(kCleanupSignals); ++i)
        if (kCleanupSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
    ::raise(sig);
}

void install_handlers() {
    struct sigaction sa {};
    sa.sa_handler = remove_pending_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
        ::sigaction(kCleanupSignals[i], nullptr, &g_previous[i]);
        if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &sa, nullptr);
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &g_previous_xfsz);
}

void restore_handlers() {
    for (size_t i = 0; i < std::size(kCleanupSignals); ++i)
        ::sigaction(kCleanupSignals[i], &g_previous[i], nullptr);
    ::sigaction(SIGXFSZ, &g_previous_xfsz, nullptr);
}

// Blocks the cleanup signals while a slot changes, so the handler never sees half a path.
class SignalsBlocked {
public:
    SignalsBlocked() {
        sigset_t set;
        sigemptyset(&set);
        for (int s : kCleanupSignals) sigaddset(&set, s);
        pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

private:
    sigset_t old_;
};

int add_pending(const std::string &path) {
    std::lock_guard lock(g_mutex);
    SignalsBlocked blocked;
    for (int i = 0; i < kSlots; ++i) {
        Slot &s = g_slots[i];
        if (s.used.load() || path.size() >= kPathMax) continue;
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.used.store(true);
        if (g_pending++ == 0) install_handlers();
        return i;
    }
    return -1;  // not covered by the handler; the destructor still removes it
}

void set_pending(int slot, const std::string &path) {
    if (slot < 0 || path.size() >= kPathMax) return;
    SignalsBlocked blocked;
    g_slots[slot].used.store(false);
    std::memcpy(g_slots[slot].path, path.c_str(), path.size() + 1);
    g_slots[slot].used.store(true);
}

void drop_pending(int slot) {
    if (slot < 0) return;
    std::lock_guard lock(g_mutex);
    SignalsBlocked blocked;
    g_slots[slot].used.store(false);
    if (--g_pending == 0) restore_handlers();
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

OutputFile::OutputFile(std::string final_path) : final_(std::move(final_path)) {
    const std::filesystem::path p(final_);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    std::string tmpl = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
    int create_errno = 0;
    {
        // A signal between creating the file and registering it would leave it behind.
        SignalsBlocked blocked;
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
    drop_pending(slot_);
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
    // Signals wait until the handler knows the file's new name.
    SignalsBlocked blocked;
    if (::rename(temp_.c_str(), final_.c_str()) != 0)
        throw Error(final_, std::nullopt,
                    fmt::format("cannot rename {} into place: {}", temp_, std::strerror(errno)));
    temp_ = final_;  // from now on a failure removes the renamed file
    set_pending(slot_, temp_);
}

void OutputFile::keep() {
    temp_.clear();
    drop_pending(slot_);
    slot_ = -1;
}

}  // namespace gguftool::onnx_export::detail
