// Loading integers and floats of either byte order from unaligned bytes (internal to lib/gguf).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "gguftool/gguf.hpp"

namespace gguftool::gguf::detail {

inline uint16_t byteswap(uint16_t v) {
    return __builtin_bswap16(v);
}
inline uint32_t byteswap(uint32_t v) {
    return __builtin_bswap32(v);
}
inline uint64_t byteswap(uint64_t v) {
    return __builtin_bswap64(v);
}

// Reads an unsigned integer of width sizeof(U) stored in `order`.
template <class U>
inline U load(const uint8_t *p, ByteOrder order) {
    U v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (sizeof(U) > 1) {
        const bool native =
            (order == ByteOrder::little) == (std::endian::native == std::endian::little);
        if (!native) v = byteswap(v);
    }
    return v;
}

// Writes `v` into `p` in `order`.
template <class U>
inline void store(uint8_t *p, U v, ByteOrder order) {
    if constexpr (sizeof(U) > 1) {
        const bool native =
            (order == ByteOrder::little) == (std::endian::native == std::endian::little);
        if (!native) v = byteswap(v);
    }
    std::memcpy(p, &v, sizeof v);
}

// Bytes of a fixed-size metadata value type; 0 for string and array.
inline uint32_t scalar_size(ValueType t) {
    static constexpr uint8_t kSizes[kValueTypeCount] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return kSizes[static_cast<uint32_t>(t)];
}

inline bool valid_value_type(uint32_t t) {
    return t < kValueTypeCount;
}

// Encoded size of an already validated value of type `t` starting at `p` (after the type tag).
// Strings: 8 + length; arrays: 4 + 8 + elements, walked (nesting depth was bounded on open).
uint64_t encoded_size(const uint8_t *p, ValueType t, ByteOrder order);

}  // namespace gguftool::gguf::detail
