// RawGguf: writes GGUF fields byte by byte, independently of the library's writer, for malformed
// files in tests and for the broken-file corpus (tests/support/broken_corpus.hpp). No GoogleTest
// here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gguftool::testkit {

// Writes GGUF fields byte by byte, independently of the library's writer, and remembers where
// each field went so tests can state the expected error offset.
class RawGguf {
public:
    explicit RawGguf(bool big_endian = false) : big_(big_endian) {}

    uint64_t pos() const { return bytes_.size(); }
    std::vector<uint8_t> &bytes() { return bytes_; }

    RawGguf &raw(const void *p, size_t n) {
        const size_t at = bytes_.size();
        bytes_.resize(at + n);
        if (n) std::memcpy(bytes_.data() + at, p, n);
        return *this;
    }
    RawGguf &u8(uint8_t v) { return raw(&v, 1); }
    RawGguf &u16(uint16_t v) { return num(v); }
    RawGguf &u32(uint32_t v) { return num(v); }
    RawGguf &u64(uint64_t v) { return num(v); }
    RawGguf &str(const std::string &s) {
        u64(s.size());
        return raw(s.data(), s.size());
    }
    // Magic, version, tensor count, metadata count.
    RawGguf &header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
        raw("GGUF", 4);
        u32(version);
        u64(n_tensors);
        return u64(n_kv);
    }
    // A tensor info with the given dims (ggml order).
    RawGguf &tensor(const std::string &name, const std::vector<uint64_t> &dims, uint32_t type,
                    uint64_t offset) {
        str(name);
        u32(static_cast<uint32_t>(dims.size()));
        for (uint64_t d : dims) u64(d);
        u32(type);
        return u64(offset);
    }
    RawGguf &pad_to(uint64_t alignment) {
        while (bytes_.size() % alignment) bytes_.push_back(0);
        return *this;
    }
    RawGguf &zeros(size_t n) {
        bytes_.resize(bytes_.size() + n, 0);
        return *this;
    }

private:
    template <class U>
    RawGguf &num(U v) {
        uint8_t b[sizeof(U)];
        for (size_t i = 0; i < sizeof(U); ++i) {
            const size_t shift = 8 * (big_ ? sizeof(U) - 1 - i : i);
            b[i] = static_cast<uint8_t>(v >> shift);
        }
        return raw(b, sizeof b);
    }

    bool big_;
    std::vector<uint8_t> bytes_;
};

// Deterministic filler bytes for tensor data.
inline std::vector<uint8_t> filler(size_t n, uint32_t seed = 1) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 12345;
    for (auto &b : v) {
        x = x * 1103515245u + 12345;
        b = static_cast<uint8_t>(x >> 16);
    }
    return v;
}

}  // namespace gguftool::testkit
