// Small exact helpers shared by the block decoders. Target-independent scalar code; the family
// files include it inside their per-target namespaces, so it is compiled for each target.
#pragma once

#include <cstdint>
#include <cstring>

namespace gguftool::formats {

inline float bits_to_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint16_t load_u16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t load_u32(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// IEEE half to float, exact for every input; NaNs come out quiet with their payload kept, as both
// F16C and ggml's software conversion produce.
inline float fp16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t two_w = uint32_t(h) << 17;  // exponent and mantissa, sign shifted out
    // Normal and inf/NaN: rebias the exponent by a multiplication that also quiets NaNs.
    const float normalized = bits_to_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    // Subnormal: build 0.5 * 2^(mantissa bits) and subtract 0.5.
    const float denormalized = bits_to_f32((two_w >> 17) | (126u << 23)) - 0.5f;
    float m = two_w < (1u << 27) ? denormalized : normalized;
    uint32_t u;
    std::memcpy(&u, &m, 4);
    return bits_to_f32(u | sign);
}

inline float load_f16(const uint8_t *p) { return fp16_to_f32(load_u16(p)); }

}  // namespace gguftool::formats
