// Memory-mapping a file read-only with mmap.
#include "gguftool/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gguftool/error.hpp"

namespace gguftool {
namespace {

// Closes the descriptor when the constructor fails (a destructor does not run then).
struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0) ::close(fd);
    }
};

[[noreturn]] void fail(const std::string &path, const char *what, int err) {
    throw Error(path, std::nullopt, std::string(what) + std::strerror(err));
}

}  // namespace

MappedFile::MappedFile(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open: ", errno);
    FdCloser closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail(path, "cannot stat: ", errno);
    if (!S_ISREG(st.st_mode)) throw Error(path, std::nullopt, "not a regular file");
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
        void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) fail(path, "cannot map: ", errno);
        data_ = static_cast<const uint8_t *>(p);
    }
    fd_ = fd;
    closer.fd = -1;
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string &path) {
    return std::make_shared<const MappedFile>(path);
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
    ::close(fd_);
}

}  // namespace gguftool
