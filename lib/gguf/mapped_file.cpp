// Memory-mapping a file read-only with mmap.
#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gguftool/error.hpp"

namespace gguftool::gguf::detail {

MappedFile::MappedFile(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw Error(path, std::nullopt, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error(path, std::nullopt, std::string("cannot stat: ") + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path, std::nullopt, "not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
        void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw Error(path, std::nullopt, std::string("cannot map: ") + std::strerror(err));
        }
        data_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);  // the mapping stays valid
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
}

}  // namespace gguftool::gguf::detail
