// Shared by the fuzz targets: hand the fuzzer's bytes to readers that take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace gguftool::fuzz {

// One memfd per process, rewritten for every input: the readers map it through /proc/self/fd
// exactly as they map a real file, without touching the disk.
class MemoryFile {
public:
    MemoryFile() : fd_(::memfd_create("fuzz-input", 0)) {
        if (fd_ < 0) std::abort();
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile() { ::close(fd_); }

    const std::string &write(const uint8_t *data, size_t size) {
        if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, data, size, 0) != ssize_t(size)) std::abort();
        return path_;
    }

private:
    int fd_;
    std::string path_;
};

}  // namespace gguftool::fuzz
