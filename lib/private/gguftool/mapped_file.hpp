// A read-only memory mapping of a whole file: the GGUF reader maps its file with it, the runtime
// its ONNX models, external data and tensor files. The descriptor stays open with the mapping, so
// that writers can copy ranges of the very file mapped (copy_file_range) without opening its path
// again, which by then may name another file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gguftool {

class MappedFile {
public:
    // Maps `path` read-only. Throws gguftool::Error naming the path if it cannot be opened, is
    // not a regular file or cannot be mapped.
    explicit MappedFile(const std::string &path);
    // The same, shared: for mappings that views into it must keep alive.
    static std::shared_ptr<const MappedFile> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const uint8_t *data() const { return data_; }  // null for an empty file
    uint64_t size() const { return size_; }
    std::span<const uint8_t> bytes() const { return {data_, size_t(size_)}; }
    // The read-only descriptor of the mapped file (close-on-exec), open as long as this object.
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    const uint8_t *data_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace gguftool
