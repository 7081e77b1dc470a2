// Independent reference conversions for the tests, written to be obviously correct rather than
// fast: a 16-bit float format is rounded to by searching the sorted list of all its values for the
// nearest one (ties to the even bit pattern), in long double, which holds every float, double
// difference and int64 involved here exactly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace gguftool::testref {

class NarrowReference {
public:
    NarrowReference(int mantissa_bits, int exponent_bits)
        : m_(mantissa_bits), e_(exponent_bits), inf_(((1u << exponent_bits) - 1) << mantissa_bits) {
        const int bias = (1 << (e_ - 1)) - 1;
        // Non-negative patterns 0 .. inf in increasing order; "inf" stands for 2^(bias+1), the
        // next value the format would have with an unbounded exponent (IEEE's overflow rule).
        for (uint32_t k = 0; k <= inf_; ++k) {
            const int field = int(k >> m_);
            const long double frac = k & ((1u << m_) - 1);
            values_.push_back(field == 0
                                  ? std::ldexp(frac, 1 - bias - m_)
                                  : std::ldexp(frac + std::ldexp(1.0L, m_), field - bias - m_));
        }
    }

    // Rounds a non-NaN value to nearest, ties to even.
    uint16_t round(long double x) const {
        const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
        const long double a = std::fabs(x);
        if (a >= values_.back()) return uint16_t(sign | inf_);
        const size_t k =
            size_t(std::upper_bound(values_.begin(), values_.end(), a) - values_.begin()) - 1;
        const long double below = a - values_[k], above = values_[k + 1] - a;
        size_t pick = k;
        if (above < below || (above == below && (k & 1))) pick = k + 1;
        return uint16_t(sign | pick);
    }

    // The project's NaN rule: keep sign and top payload bits, set the quiet bit.
    uint16_t from_float(float f) const {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        if (std::isnan(f))
            return uint16_t(((bits >> 31) << 15) | inf_ | (1u << (m_ - 1)) |
                            ((bits & 0x7FFFFF) >> (23 - m_)));
        return round(f);
    }
    uint16_t from_double(double d) const {
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        if (std::isnan(d))
            return uint16_t(((bits >> 63) << 15) | inf_ | (1u << (m_ - 1)) |
                            ((bits & ((uint64_t(1) << 52) - 1)) >> (52 - m_)));
        return round(d);
    }

    // The value of a pattern (for messages and round trips).
    long double value(uint16_t h) const {
        const uint16_t mag = h & 0x7FFF;
        if (mag > inf_) return NAN;
        const long double v = mag == inf_ ? INFINITY : values_[mag];
        return (h & 0x8000) ? -v : v;
    }

    bool is_nan(uint16_t h) const { return (h & 0x7FFF) > inf_; }

private:
    int m_, e_;
    uint32_t inf_;
    std::vector<long double> values_;
};

inline const NarrowReference &half_reference() {
    static const NarrowReference r(10, 5);
    return r;
}
inline const NarrowReference &bfloat16_reference() {
    static const NarrowReference r(7, 8);
    return r;
}

// True when `got` is `exact` rounded to nearest-even float/double: no neighbour is nearer, a tie
// lands on an even significand, and overflow gives infinity only past max + half an ulp.
template <class F>
bool is_nearest_even(long double exact, F got) {
    if (std::isnan(exact)) return std::isnan(got);
    if (std::isinf(got)) {
        const F max = std::numeric_limits<F>::max();
        const long double half_ulp =
            (static_cast<long double>(max) - std::nextafter(max, F(0))) / 2;
        return std::signbit(got) == std::signbit(exact) && std::fabs(exact) >= max + half_ulp;
    }
    const long double err = std::fabs(exact - got);
    for (F n : {std::nextafter(got, -std::numeric_limits<F>::infinity()),
                std::nextafter(got, std::numeric_limits<F>::infinity())}) {
        if (std::isinf(n)) continue;
        const long double other = std::fabs(exact - n);
        if (other < err) return false;
        if (other == err) {  // tie: the even significand wins
            using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
            U bits;
            std::memcpy(&bits, &got, sizeof bits);
            if (bits & 1) return false;
        }
    }
    return true;
}

}  // namespace gguftool::testref
