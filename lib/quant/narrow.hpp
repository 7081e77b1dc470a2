// Scalar conversions to the 16-bit float formats (IEEE half and bfloat16), rounding to nearest,
// ties to even, exactly once. Used for the plain types whose values a float cannot hold exactly
// (f64, i32, i64) and by the portable target; the SIMD paths in convert.cpp match them bit for bit.
//
// NaN rule (all paths): the sign and the top payload bits are kept and the quiet bit is set, as
// F16C's vcvtps2ph does. Overflow gives infinity (round-to-nearest never saturates).
#pragma once

#include <cstdint>

namespace gguftool::quant {

struct NarrowFormat {
    int mantissa_bits;  // stored fraction bits
    int exponent_bits;
};
inline constexpr NarrowFormat kHalf{10, 5};
inline constexpr NarrowFormat kBfloat16{7, 8};

// The format's encoding of (-1)^negative * magnitude * 2^exponent, rounded to nearest even.
uint16_t round_to_narrow(bool negative, uint64_t magnitude, int exponent, NarrowFormat f);

uint16_t f64_to_narrow(double x, NarrowFormat f);
uint16_t f32_to_narrow(float x, NarrowFormat f);
uint16_t i64_to_narrow(int64_t x, NarrowFormat f);

// bfloat16 from float by the usual integer trick: add 0x7FFF plus the lowest kept bit, shift.
inline uint16_t f32_bits_to_bf16(uint32_t bits) {
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((bits >> 16) | 0x0040);  // NaN
    return uint16_t((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16);
}

}  // namespace gguftool::quant
