// float16 / bfloat16 <-> float32, written here independently of the core's conversions so that
// the expected side of a comparison does not share code with the side under test.
// Deliberately not gguftool/half.hpp: this is the verify oracle for it; keep the two independent.
#include <bit>
#include <cstdint>

#include "gguftool/verify.hpp"

namespace gguftool::verify {

float f16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
    if (exp != 0) return std::bit_cast<float>(sign | ((exp + 127 - 15) << 23) | (mant << 13));
    if (mant == 0) return std::bit_cast<float>(sign);
    // Subnormal: shift the leading one up to bit 10, lowering the exponent as we go.
    uint32_t e = 127 - 15 + 1;
    while (!(mant & 0x400)) mant <<= 1, --e;
    return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ff) << 13));
}

float bf16_to_f32(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

uint16_t f32_to_f16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t abs = x & 0x7fffffff;
    if (abs > 0x7f800000) return uint16_t(sign | 0x7e00 | ((abs >> 13) & 0x3ff));  // NaN
    if (abs >= 0x477ff000) return uint16_t(sign | 0x7c00);  // >= 65520 rounds to infinity
    const uint32_t exp = abs >> 23;
    // value = m * 2^(exp - 150); in float16 units (2^-24 below the normal range, else the
    // float16 mantissa step) that is m shifted right by `shift` bits.
    const uint32_t m = (abs & 0x7fffff) | (exp ? 0x800000u : 0);
    uint32_t shift, base;
    if (exp >= 113) {  // normal float16
        shift = 13;
        base = (exp - 112) << 10;
        const uint32_t q = m >> shift;  // includes the implicit one at bit 10: remove it
        const uint32_t rem = m & 0x1fff;
        const uint32_t r = base + (q & 0x3ff) + (rem > 0x1000 || (rem == 0x1000 && (q & 1)));
        return uint16_t(sign | r);  // a carry into the exponent is the right result
    }
    shift = 126 - exp;                      // exp <= 112: shift >= 14
    if (shift > 24) return uint16_t(sign);  // below half the smallest subnormal (or a tie at it)
    const uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    return uint16_t(sign | (q + (rem > half || (rem == half && (q & 1)))));
}

uint16_t f32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // NaN: quiet
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace gguftool::verify
