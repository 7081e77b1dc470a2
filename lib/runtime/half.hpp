// IEEE half (float16) and bfloat16 conversions, one rounding to nearest even as ONNX Cast does.
// A NaN keeps its sign and top payload bits and comes out quiet; overflow gives infinity.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace gguftool::runtime {

inline float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
    if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = float(mant) * 0x1p-24f;
    return sign ? -v : v;
}

inline float bfloat16_to_float(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

// Rounds a double to a narrow binary format with `E` exponent and `M` mantissa bits (float16:
// 5/10, bfloat16: 8/7), once, to nearest even. Exact for every double input.
template <int E, int M>
uint16_t narrow_from_double(double d) {
    const uint64_t x = std::bit_cast<uint64_t>(d);
    const uint32_t sign = uint32_t(x >> 63) << (E + M);
    const uint64_t abs = x & ~(uint64_t(1) << 63);
    const uint32_t exp_ones = ((1u << E) - 1) << M;
    if (abs > 0x7ff0000000000000ull) {  // NaN: quiet, top payload bits kept
        const uint32_t payload = uint32_t((abs >> (52 - M)) & ((1u << M) - 1));
        return uint16_t(sign | exp_ones | (1u << (M - 1)) | payload);
    }
    if (abs == 0x7ff0000000000000ull) return uint16_t(sign | exp_ones);
    const int bias = (1 << (E - 1)) - 1;
    const int emin = 1 - bias;
    const int biased = int(abs >> 52);
    uint64_t m = abs & ((uint64_t(1) << 52) - 1);
    int e = -1022;  // double subnormal
    if (biased != 0) {
        m |= uint64_t(1) << 52;
        e = biased - 1023;
    }
    // value = m * 2^(e - 52); keep M bits after the leading one (fewer below the normal range).
    const int shift = 52 - M + std::max(0, emin - e);
    if (shift >= 55) return uint16_t(sign);  // below half the smallest subnormal
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((uint64_t(1) << shift) - 1);
    const uint64_t halfway = uint64_t(1) << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    const int64_t base = e >= emin ? int64_t(e) + bias - 1 : 0;
    const int64_t r = (base << M) + int64_t(q);
    if (r >= int64_t(exp_ones)) return uint16_t(sign | exp_ones);
    return uint16_t(sign | uint32_t(r));
}

inline uint16_t double_to_half(double d) {
    return narrow_from_double<5, 10>(d);
}
inline uint16_t double_to_bfloat16(double d) {
    return narrow_from_double<8, 7>(d);
}

// Fast float paths, identical results to the double ones.
inline uint16_t float_to_half(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000;
    uint32_t abs = x & 0x7fffffff;
    if (abs > 0x7f800000) return uint16_t(sign | 0x7e00 | ((abs >> 13) & 0x3ff));
    if (abs >= 0x477ff000) return uint16_t(sign | 0x7c00);  // >= 65520 rounds to infinity
    if (abs < 0x38800000) {
        // Below the smallest normal half: adding 0.5 makes the FPU round to a multiple of 2^-24.
        const float t = std::bit_cast<float>(abs) + 0.5f;
        return uint16_t(sign | (std::bit_cast<uint32_t>(t) - 0x3f000000u));
    }
    const uint32_t odd = (abs >> 13) & 1;
    abs += (uint32_t(15 - 127) << 23) + 0xfff + odd;
    return uint16_t(sign | (abs >> 13));
}

inline uint16_t float_to_bfloat16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// An integer as a double rounded to odd: exact below 2^53, and above it the lost bits are kept as
// a sticky 1 so that a second rounding to a narrower format is still correct.
inline double u64_to_double_odd(uint64_t v) {
    if (v < (uint64_t(1) << 53)) return double(v);
    const int shift = std::bit_width(v) - 53;
    const uint64_t lost = v & ((uint64_t(1) << shift) - 1);
    const uint64_t kept = (v >> shift) | (lost ? 1 : 0);
    return double(kept) * double(uint64_t(1) << shift);
}
inline double i64_to_double_odd(int64_t v) {
    const uint64_t mag = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
    const double d = u64_to_double_odd(mag);
    return v < 0 ? -d : d;
}

}  // namespace gguftool::runtime
