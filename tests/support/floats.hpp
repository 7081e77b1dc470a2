// Floats as bytes and as bits, and their comparison bit for bit. No GoogleTest: the benchmarks,
// the fuzz targets and the generators use it too (the tests' assertion on it is
// gguf_test_support.hpp's same_bits).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gguftool::testkit {

// The little-endian bytes of `values`: the data of an F32 tensor.
inline std::vector<uint8_t> f32_bytes(const std::vector<float> &values) {
    std::vector<uint8_t> out(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
        const auto bits = std::bit_cast<uint32_t>(values[i]);
        for (int b = 0; b < 4; ++b) out[4 * i + b] = uint8_t(bits >> (8 * b));
    }
    return out;
}

inline uint32_t float_bits(float f) {
    return std::bit_cast<uint32_t>(f);
}

// How NaNs compare: bit for bit as every other value (exact), or any NaN matching any NaN (any:
// for outputs whose NaN payloads are not part of what is checked).
enum class Nans { exact, any };

inline bool same_bits(float a, float b, Nans nans) {
    return float_bits(a) == float_bits(b) || (nans == Nans::any && std::isnan(a) && std::isnan(b));
}

// The index of the first of the `n` values where `a` and `b` differ (same_bits), or n.
inline size_t first_difference(const float *a, const float *b, size_t n, Nans nans) {
    for (size_t i = 0; i < n; ++i)
        if (!same_bits(a[i], b[i], nans)) return i;
    return n;
}

}  // namespace gguftool::testkit
