// Element-by-element comparison of two arrays: mismatches (bitwise, NaN equal to NaN), the
// largest absolute difference and the largest distance in ULPs.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "gguftool/verify.hpp"

namespace gguftool::verify {
namespace {

// A binary floating-point format seen through its bit pattern.
template <class Bits>
struct FloatFormat {
    Bits sign;                // the sign bit
    Bits infinity;            // exponent all ones, mantissa zero: anything above it is NaN
    double (*value)(Bits b);  // exact value
};

double f32_value(uint32_t b) {
    return std::bit_cast<float>(b);
}
double f64_value(uint64_t b) {
    return std::bit_cast<double>(b);
}
double f16_value(uint16_t b) {
    return f16_to_f32(b);
}
double bf16_value(uint16_t b) {
    return bf16_to_f32(b);
}

constexpr FloatFormat<uint32_t> kF32{0x80000000u, 0x7f800000u, f32_value};
constexpr FloatFormat<uint64_t> kF64{uint64_t(1) << 63, 0x7ff0000000000000ull, f64_value};
constexpr FloatFormat<uint16_t> kF16{0x8000, 0x7c00, f16_value};
constexpr FloatFormat<uint16_t> kBF16{0x8000, 0x7f80, bf16_value};

// Distance counting the representable values in between: magnitudes are ordered like their bit
// patterns, so on one side of zero it is the difference of the magnitudes, across zero their sum.
template <class Bits>
uint64_t ulp_distance(Bits a, Bits b, Bits sign) {
    const uint64_t ma = a & Bits(~sign), mb = b & Bits(~sign);
    if ((a & sign) != (b & sign)) return ma + mb;
    return ma > mb ? ma - mb : mb - ma;
}

template <class Bits>
Diff compare_floats(const FloatFormat<Bits> &f, const Bits *ours, const Bits *expected,
                    uint64_t n) {
    Diff d;
    d.elements = n;
    for (uint64_t i = 0; i < n; ++i) {
        const Bits a = ours[i], b = expected[i];
        if (a == b) continue;
        const bool nan_a = Bits(a & Bits(~f.sign)) > f.infinity;
        const bool nan_b = Bits(b & Bits(~f.sign)) > f.infinity;
        if (nan_a && nan_b) continue;
        if (!d.first_mismatch) d.first_mismatch = i;
        ++d.mismatches;
        if (nan_a || nan_b) {
            d.max_abs_diff = NAN;
            d.max_ulp = kUlpNaN;
            continue;
        }
        const double diff = std::fabs(f.value(a) - f.value(b));
        if (!std::isnan(d.max_abs_diff)) d.max_abs_diff = std::max(d.max_abs_diff, diff);
        if (d.max_ulp != kUlpNaN) d.max_ulp = std::max(d.max_ulp, ulp_distance(a, b, f.sign));
    }
    return d;
}

template <class T>
Diff compare_integers(const T *ours, const T *expected, uint64_t n) {
    Diff d;
    d.elements = n;
    for (uint64_t i = 0; i < n; ++i) {
        const T a = ours[i], b = expected[i];
        if (a == b) continue;
        if (!d.first_mismatch) d.first_mismatch = i;
        ++d.mismatches;
        // The true difference fits in uint64 for every integer type (modular arithmetic).
        const uint64_t dist = a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a);
        d.max_ulp = std::max(d.max_ulp, dist);
        d.max_abs_diff = std::max(d.max_abs_diff, double(dist));
    }
    return d;
}

template <class T>
const T *as(const void *p) {
    return static_cast<const T *>(p);
}

}  // namespace

void Diff::append(const Diff &next) {
    if (!first_mismatch && next.first_mismatch) first_mismatch = elements + *next.first_mismatch;
    elements += next.elements;
    mismatches += next.mismatches;
    if (std::isnan(max_abs_diff) || std::isnan(next.max_abs_diff))
        max_abs_diff = NAN;
    else
        max_abs_diff = std::max(max_abs_diff, next.max_abs_diff);
    max_ulp = std::max(max_ulp, next.max_ulp);  // kUlpNaN is the largest value
}

Diff compare_bits(DataType type, const void *ours, const void *expected, uint64_t n) {
    switch (type) {
        case DataType::float32:
            return compare_floats(kF32, as<uint32_t>(ours), as<uint32_t>(expected), n);
        case DataType::float64:
            return compare_floats(kF64, as<uint64_t>(ours), as<uint64_t>(expected), n);
        case DataType::float16:
            return compare_floats(kF16, as<uint16_t>(ours), as<uint16_t>(expected), n);
        case DataType::bfloat16:
            return compare_floats(kBF16, as<uint16_t>(ours), as<uint16_t>(expected), n);
        case DataType::int8:
            return compare_integers(as<int8_t>(ours), as<int8_t>(expected), n);
        case DataType::uint8:
            return compare_integers(as<uint8_t>(ours), as<uint8_t>(expected), n);
        case DataType::int16:
            return compare_integers(as<int16_t>(ours), as<int16_t>(expected), n);
        case DataType::uint16:
            return compare_integers(as<uint16_t>(ours), as<uint16_t>(expected), n);
        case DataType::int32:
            return compare_integers(as<int32_t>(ours), as<int32_t>(expected), n);
        case DataType::uint32:
            return compare_integers(as<uint32_t>(ours), as<uint32_t>(expected), n);
        case DataType::int64:
            return compare_integers(as<int64_t>(ours), as<int64_t>(expected), n);
        case DataType::uint64:
            return compare_integers(as<uint64_t>(ours), as<uint64_t>(expected), n);
        default:
            throw Error(fmt::format("cannot compare {} values", dtype_name(type)));
    }
}

const char *status_name(Status s) {
    switch (s) {
        case Status::match:
            return "match";
        case Status::mismatch:
            return "mismatch";
        case Status::not_compared:
            return "not_compared";
    }
    return "?";
}

}  // namespace gguftool::verify
