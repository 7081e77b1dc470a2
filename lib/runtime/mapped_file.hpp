// A read-only memory mapping of a whole file (internal to lib/runtime).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gguftool::runtime::detail {

class MappedFile {
public:
    // Maps `path` read-only. Throws gguftool::Error if it is not a regular file or cannot be
    // mapped.
    static std::shared_ptr<const MappedFile> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    std::span<const uint8_t> bytes() const { return {data_, size_t(size_)}; }
    uint64_t size() const { return size_; }

private:
    MappedFile() = default;
    const uint8_t *data_ = nullptr;  // null for an empty file
    uint64_t size_ = 0;
};

}  // namespace gguftool::runtime::detail
