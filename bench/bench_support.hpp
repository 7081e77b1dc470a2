// Helpers shared by the benchmarks (header only: every bench/*.cpp is its own program): llama.cpp-
// quantized input tiled to size, aligned output buffers, timing, medians and geometric means, and
// the bit-for-bit comparison (any NaN equals any NaN).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

namespace gguftool::bench {

using Clock = std::chrono::steady_clock;

// Output buffers aligned to a cache line, as the decoder's streaming stores want.
struct Free {
    void operator()(float *p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], Free>;
inline AlignedFloats aligned_floats(size_t n) {
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    AlignedFloats p(static_cast<float *>(std::aligned_alloc(64, bytes)));
    if (!p) throw std::bad_alloc();
    return p;
}

// A source of real quantized data: normally distributed weights quantized by llama.cpp (with an
// importance matrix where it needs one), 1024 blocks, tiled to the full size.
inline std::vector<uint8_t> make_input(const reference::Ggml &g, GgmlType t, size_t blocks) {
    const TypeTraits &tt = traits(t);
    const uint32_t id = static_cast<uint32_t>(t);
    const size_t src_blocks = std::min<size_t>(1024, blocks);
    const size_t per_row = 4096;  // multiple of every block size
    const size_t n = std::max(per_row, src_blocks * tt.block_size / per_row * per_row);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (float &v : values) v = normal(rng);
    std::vector<float> imatrix(per_row);
    std::uniform_real_distribution<float> weight(0.1f, 10.0f);
    for (float &w : imatrix) w = weight(rng);
    std::vector<uint8_t> src(*row_bytes(t, n));
    if (t == GgmlType::q8_k || t == GgmlType::q8_1) {
        g.quantize_row_ref[id](values.data(), src.data(), int64_t(n));
    } else {
        g.quantize_init(int(id));
        const bool needs = g.quantize_requires_imatrix(int(id));
        g.quantize_chunk(int(id), values.data(), src.data(), 0, int64_t(n / per_row),
                         int64_t(per_row), needs ? imatrix.data() : nullptr);
    }
    std::vector<uint8_t> in(blocks * tt.type_size);
    for (size_t off = 0; off < in.size(); off += src.size())
        std::memcpy(in.data() + off, src.data(), std::min(src.size(), in.size() - off));
    return in;
}

template <class F>
inline double seconds(F &&f) {
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

inline bool same_bits(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (std::memcmp(a + i, b + i, 4) != 0 && !(std::isnan(a[i]) && std::isnan(b[i])))
            return false;
    return true;
}

inline double geomean(const std::vector<double> &v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0 : std::exp(s / double(v.size()));
}

}  // namespace gguftool::bench
