// A bounds-checked cursor over the mapped file (internal to lib/gguf). Every read checks the bytes
// that remain first and throws gguftool::Error(path, offset, ...) when the file ends too soon.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "endian.hpp"
#include "gguftool/error.hpp"

namespace gguftool::gguf::detail {

class ByteReader {
public:
    ByteReader(const std::string &path, const uint8_t *data, uint64_t size)
        : path_(&path), data_(data), size_(size) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }
    const uint8_t *at(uint64_t offset) const { return data_ + offset; }
    ByteOrder order() const { return order_; }
    void set_order(ByteOrder order) { order_ = order; }

    [[noreturn]] void fail(uint64_t offset, std::string what) const {
        throw Error(*path_, offset, std::move(what));
    }

    // Returns a pointer to the next `n` bytes and moves past them; `what` names them for the error.
    const uint8_t *take(uint64_t n, const char *what) {
        if (n > remaining()) fail_short(n, what);
        const uint8_t *p = data_ + pos_;
        pos_ += n;
        return p;
    }
    uint32_t u32(const char *what) { return load<uint32_t>(take(4, what), order_); }
    uint64_t u64(const char *what) { return load<uint64_t>(take(8, what), order_); }

    // A GGUF string: uint64 length, then the bytes. The view points into the mapping.
    std::string_view string(const char *what) {
        const uint64_t at = pos_;
        const uint64_t len = u64(what);
        if (len > remaining()) fail_string(at, len, what);
        const char *p = reinterpret_cast<const char *>(data_ + pos_);
        pos_ += len;
        return {p, len};
    }

private:
    [[noreturn]] void fail_short(uint64_t n, const char *what) const;
    [[noreturn]] void fail_string(uint64_t at, uint64_t len, const char *what) const;

    const std::string *path_;
    const uint8_t *data_;
    uint64_t size_;
    uint64_t pos_ = 0;
    ByteOrder order_ = ByteOrder::little;
};

// A string from the file made safe to print in a message: non-printable bytes as \xNN, long
// strings shortened.
std::string printable(std::string_view s);

}  // namespace gguftool::gguf::detail
