// IEEE half (float16) and bfloat16 <-> float/double, scalar. The decoders (f16 block scales), the
// array conversions' scalar tails, the plain types and the runtime's kernels all use these.
//
// Narrowing rounds once, to nearest even. Overflow gives infinity (round-to-nearest never
// saturates). A NaN keeps its sign and top payload bits and comes out quiet, as F16C's vcvtps2ph
// and ggml do. Widening is exact; a NaN comes out quiet with its payload kept, as F16C's
// vcvtph2ps and ggml's software conversion give it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace gguftool {

constexpr float fp16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t two_w = uint32_t(h) << 17;  // exponent and mantissa, sign shifted out
    // Normal and inf/NaN: rebias the exponent by a multiplication that also quiets NaNs.
    const float normalized = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    // Subnormal: build 0.5 * 2^(mantissa bits) and subtract 0.5.
    const float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
    const float m = two_w < (1u << 27) ? denormalized : normalized;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(m) | sign);
}

constexpr float bf16_to_f32(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

constexpr uint16_t f32_to_fp16(float f) {
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

// The usual integer trick: add 0x7FFF plus the lowest kept bit, shift.
constexpr uint16_t f32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// Rounds a double to a narrow binary format with `E` exponent and `M` mantissa bits (float16:
// 5/10, bfloat16: 8/7), once, to nearest even. Exact for every double input.
template <int E, int M>
constexpr uint16_t narrow_from_double(double d) {
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

constexpr uint16_t f64_to_fp16(double d) {
    return narrow_from_double<5, 10>(d);
}
constexpr uint16_t f64_to_bf16(double d) {
    return narrow_from_double<8, 7>(d);
}

// An integer as a double rounded to odd: exact below 2^53, and above it the lost bits are kept as
// a sticky 1 so that a second rounding to a narrower format is still correct. Integers reach
// half/bfloat16 as f64_to_fp16(i64_to_double_odd(v)): one rounding in effect.
constexpr double u64_to_double_odd(uint64_t v) {
    if (v < (uint64_t(1) << 53)) return double(v);
    const int shift = std::bit_width(v) - 53;
    const uint64_t lost = v & ((uint64_t(1) << shift) - 1);
    const uint64_t kept = (v >> shift) | (lost ? 1 : 0);
    return double(kept) * double(uint64_t(1) << shift);
}
constexpr double i64_to_double_odd(int64_t v) {
    const uint64_t mag = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
    const double d = u64_to_double_odd(mag);
    return v < 0 ? -d : d;
}

}  // namespace gguftool
