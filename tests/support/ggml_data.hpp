// Test data for the dequantization core: value distributions, importance matrices and random
// blocks. Header-only; any test may include it. (Quantization by llama.cpp: the kit's
// llama_ref.hpp, included here.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gguftool/types.hpp"
#include "llama_ref.hpp"

namespace gguftool::testkit {

// Every quantized type of the type table, in id order.
inline std::vector<GgmlType> quantized_types() {
    std::vector<GgmlType> out;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (type_traits(id)->quantized) out.push_back(static_cast<GgmlType>(id));
    return out;
}

inline std::vector<GgmlType> plain_types() {
    return {GgmlType::f32, GgmlType::f16, GgmlType::bf16, GgmlType::f64,
            GgmlType::i8,  GgmlType::i16, GgmlType::i32,  GgmlType::i64};
}

enum class Distribution { normal, heavy_tailed, zeros, tiny, huge, mixed };

inline const char *distribution_name(Distribution d) {
    switch (d) {
        case Distribution::normal:
            return "normal";
        case Distribution::heavy_tailed:
            return "heavy_tailed";
        case Distribution::zeros:
            return "zeros";
        case Distribution::tiny:
            return "tiny";
        case Distribution::huge:
            return "huge";
        case Distribution::mixed:
            return "mixed";
    }
    return "?";
}

inline constexpr Distribution kDistributions[] = {Distribution::normal, Distribution::heavy_tailed,
                                                  Distribution::zeros,  Distribution::tiny,
                                                  Distribution::huge,   Distribution::mixed};

// n values drawn from `d`:
//   normal        N(0, 1)
//   heavy_tailed  Student-t with 1.5 degrees of freedom (occasional values in the thousands)
//   zeros         all +0
//   tiny          N(0, 1) * 1e-30 (f16 scales underflow to zero or subnormals)
//   huge          N(0, 1) * 1e30 (f16 scales overflow to infinity)
//   mixed         runs of 32 values, each run one of: normal at a random scale in 1e-12..1e11,
//                 heavy-tailed, zeros, tiny, normal * 1e11 (f16 scales overflow, yet the IQ
//                 quantizers' float arithmetic stays finite: from ~1e13 up they abort), or normal
//                 with exact zeros and a few outliers sprinkled in
inline std::vector<float> make_values(Distribution d, size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::student_t_distribution<float> student(1.5f);
    std::vector<float> v(n);
    switch (d) {
        case Distribution::normal:
            for (float &x : v) x = normal(rng);
            break;
        case Distribution::heavy_tailed:
            for (float &x : v) x = student(rng);
            break;
        case Distribution::zeros:
            break;
        case Distribution::tiny:
            for (float &x : v) x = normal(rng) * 1e-30f;
            break;
        case Distribution::huge:
            for (float &x : v) x = normal(rng) * 1e30f;
            break;
        case Distribution::mixed: {
            std::uniform_int_distribution<int> pick(0, 5);
            std::uniform_real_distribution<float> exponent(-12.0f, 11.0f);
            std::uniform_int_distribution<int> coin(0, 15);
            for (size_t run = 0; run < n; run += 32) {
                const int kind = pick(rng);
                const float scale = std::pow(10.0f, exponent(rng));
                for (size_t i = run; i < std::min(n, run + 32); ++i) {
                    switch (kind) {
                        case 0:
                            v[i] = normal(rng) * scale;
                            break;
                        case 1:
                            v[i] = student(rng);
                            break;
                        case 2:
                            v[i] = 0.0f;
                            break;
                        case 3:
                            v[i] = normal(rng) * 1e-30f;
                            break;
                        case 4:
                            v[i] = normal(rng) * 1e11f;
                            break;  // f16 scales overflow
                        default:    // zeros and outliers among normal values
                            v[i] = coin(rng) == 0 ? 0.0f : normal(rng);
                            if (coin(rng) == 0) v[i] *= 1000.0f;
                    }
                }
            }
            break;
        }
    }
    return v;
}

// Importance-matrix weights for one row: random positive values, as an imatrix holds.
inline std::vector<float> make_imatrix(size_t n_per_row, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> weight(0.01f, 10.0f);
    std::vector<float> w(n_per_row);
    for (float &x : w) x = weight(rng);
    return w;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; i += 8) {
        const uint64_t r = rng();
        std::memcpy(b.data() + i, &r, std::min<size_t>(8, n - i));
    }
    return b;
}

}  // namespace gguftool::testkit
