// A read-only memory mapping of a whole file (internal to lib/gguf).
#pragma once

#include <cstdint>
#include <string>

namespace gguftool::gguf::detail {

class MappedFile {
public:
    // Maps `path` read-only. Throws gguftool::Error if it cannot be opened or mapped.
    explicit MappedFile(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const uint8_t *data() const { return data_; }
    uint64_t size() const { return size_; }

private:
    const uint8_t *data_ = nullptr;  // null for an empty file
    uint64_t size_ = 0;
};

}  // namespace gguftool::gguf::detail
