// Memory-mapping a file read-only.
#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gguftool/error.hpp"

namespace gguftool::runtime::detail {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw Error(path, std::nullopt, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    const auto fail = [&](const char *what) {
        const int err = errno;
        ::close(fd);
        throw Error(path, std::nullopt, std::string(what) + std::strerror(err));
    };
    if (::fstat(fd, &st) != 0) fail("cannot stat: ");
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path, std::nullopt, "not a regular file");
    }
    std::shared_ptr<MappedFile> m(new MappedFile);
    m->size_ = uint64_t(st.st_size);
    if (m->size_ > 0) {
        void *p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) fail("cannot map: ");
        m->data_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);  // the mapping stays valid
    return m;
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t *>(data_), size_);
}

}  // namespace gguftool::runtime::detail
