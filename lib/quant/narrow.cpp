#include "narrow.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace gguftool::quant {
namespace {

uint16_t nan_bits(bool negative, uint64_t payload, int payload_bits, NarrowFormat f) {
    const uint32_t sign = negative ? 0x8000u : 0;
    const uint32_t exponent = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
    const uint32_t quiet = 1u << (f.mantissa_bits - 1);
    return uint16_t(sign | exponent | quiet |
                    uint32_t(payload >> (payload_bits - f.mantissa_bits)));
}

}  // namespace

uint16_t round_to_narrow(bool negative, uint64_t magnitude, int exponent, NarrowFormat f) {
    const uint64_t sign = negative ? 0x8000u : 0;
    if (magnitude == 0) return uint16_t(sign);
    const int m_bits = f.mantissa_bits;
    const int bias = (1 << (f.exponent_bits - 1)) - 1;
    const int emin = 1 - bias;
    const uint64_t inf = uint64_t((1u << f.exponent_bits) - 1) << m_bits;

    const int top = std::bit_width(magnitude) - 1 + exponent;  // value in [2^top, 2^(top+1))
    if (top > bias) return uint16_t(sign | inf);
    const int last_place = std::max(top, emin) - m_bits;  // exponent of the result's lowest bit
    const int shift = last_place - exponent;              // bits of `magnitude` to drop

    uint64_t kept;
    if (shift <= 0) {
        kept = magnitude << -shift;  // exact: at most m_bits + 1 bits
    } else if (shift > 64) {
        kept = 0;  // below half of the smallest subnormal
    } else {
        kept = shift == 64 ? 0 : magnitude >> shift;
        const uint64_t dropped = shift == 64 ? magnitude : magnitude & ((uint64_t(1) << shift) - 1);
        const uint64_t half = uint64_t(1) << (shift - 1);
        if (dropped > half || (dropped == half && (kept & 1))) ++kept;
    }
    // A carry out of the mantissa moves into the exponent field by itself.
    uint64_t bits =
        top < emin ? kept : (uint64_t(top + bias) << m_bits) + kept - (uint64_t(1) << m_bits);
    return uint16_t(sign | std::min(bits, inf));
}

uint16_t f64_to_narrow(double x, NarrowFormat f) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    const bool negative = b >> 63;
    const int biased = int((b >> 52) & 0x7FF);
    const uint64_t mantissa = b & ((uint64_t(1) << 52) - 1);
    if (biased == 0x7FF) {
        if (mantissa != 0) return nan_bits(negative, mantissa, 52, f);
        return uint16_t((negative ? 0x8000u : 0) |
                        (((1u << f.exponent_bits) - 1) << f.mantissa_bits));
    }
    if (biased == 0) return round_to_narrow(negative, mantissa, -1074, f);
    return round_to_narrow(negative, mantissa | (uint64_t(1) << 52), biased - 1075, f);
}

uint16_t f32_to_narrow(float x, NarrowFormat f) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    const bool negative = b >> 31;
    const int biased = int((b >> 23) & 0xFF);
    const uint32_t mantissa = b & 0x7FFFFF;
    if (biased == 0xFF) {
        if (mantissa != 0) return nan_bits(negative, mantissa, 23, f);
        return uint16_t((negative ? 0x8000u : 0) |
                        (((1u << f.exponent_bits) - 1) << f.mantissa_bits));
    }
    if (biased == 0) return round_to_narrow(negative, mantissa, -149, f);
    return round_to_narrow(negative, mantissa | 0x800000u, biased - 150, f);
}

uint16_t i64_to_narrow(int64_t x, NarrowFormat f) {
    const uint64_t magnitude = x < 0 ? 0 - uint64_t(x) : uint64_t(x);
    return round_to_narrow(x < 0, magnitude, 0, f);
}

}  // namespace gguftool::quant
