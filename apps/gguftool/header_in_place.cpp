// edit --in-place (header_in_place.hpp).
#include "header_in_place.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "signals.hpp"

namespace gguftool::cli {
namespace {

// Writes all of `bytes` at offset 0; the count written before an error, and errno.
struct WriteResult {
    size_t written = 0;
    int error = 0;
};

WriteResult write_at_start(int fd, std::span<const uint8_t> bytes) {
    WriteResult r;
    while (r.written < bytes.size()) {
        const ssize_t n =
            ::pwrite(fd, bytes.data() + r.written, bytes.size() - r.written, off_t(r.written));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            r.error = n < 0 ? errno : EIO;
            break;
        }
        r.written += size_t(n);
    }
    return r;
}

}  // namespace

void overwrite_header(const gguf::File &file, std::span<const uint8_t> header) {
    const std::string &path = file.path();
    if (header.size() != file.data_offset())
        throw Error(path, std::nullopt,
                    fmt::format("edit --in-place: a header of {} bytes does not end at the data "
                                "offset {}",
                                header.size(), file.data_offset()));
    // The old header, copied before anything changes (the file's mapping would show the new one).
    const std::vector<uint8_t> old(file.bytes().begin(),
                                   file.bytes().begin() + ptrdiff_t(header.size()));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        throw Error(path, std::nullopt,
                    fmt::format("cannot open for writing: {}", std::strerror(errno)));
    const auto fail = [&](const std::string &what) {
        ::close(fd);
        throw Error(path, std::nullopt, what);
    };
    struct stat opened {
    }, now{};
    if (::fstat(file.fd(), &opened) != 0 || ::fstat(fd, &now) != 0 || opened.st_dev != now.st_dev ||
        opened.st_ino != now.st_ino)
        fail(
            "the path names another file than the one read (replaced meanwhile?): nothing "
            "written");
    {
        const DeferEndingSignals whole_header;
        const WriteResult w = write_at_start(fd, header);
        if (w.error) {
            const WriteResult undo = write_at_start(fd, std::span(old).first(w.written));
            fail(fmt::format("cannot write the new header: {}; {}", std::strerror(w.error),
                             undo.error ? "the old header could not be put back either, the "
                                          "file is damaged"
                                        : "the old header is back in place"));
        }
        if (::fdatasync(fd) != 0)
            fail(fmt::format("the new header is written but cannot be synced to the disk: {}",
                             std::strerror(errno)));
    }
    if (::close(fd) != 0)
        throw Error(path, std::nullopt, fmt::format("cannot close: {}", std::strerror(errno)));
}

}  // namespace gguftool::cli
