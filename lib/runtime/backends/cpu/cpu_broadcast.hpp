// NumPy broadcasting of N inputs to an output on the CPU: a plan and the runs it walks.
//
// Dimensions are first coalesced (size-1 output dims dropped, neighbours merged when every input
// broadcasts them alike), so the innermost loop runs over the longest possible stretch with each
// input either contiguous or fixed.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

template <size_t N>
struct BroadcastPlan {
    std::vector<uint64_t> dims;                    // coalesced output dims, at least one
    std::array<std::vector<uint64_t>, N> strides;  // element strides per input (0 where broadcast)
    std::array<uint64_t, N> inner{};               // strides[k].back(): 1 contiguous, 0 fixed
};

// The plan for inputs of shapes `in` broadcast to `y` (already checked to broadcast).
template <size_t N>
BroadcastPlan<N> broadcast_plan(const std::array<const Shape *, N> &in, const Shape &y) {
    const size_t rank = y.size();
    std::vector<uint64_t> dims;
    std::array<std::vector<uint8_t>, N> full;  // 1 where input k has the whole output dim
    for (size_t i = 0; i < rank; ++i) {
        const uint64_t d = uint64_t(y[i]);
        if (d == 1) continue;
        std::array<uint8_t, N> f;
        for (size_t k = 0; k < N; ++k) {
            const Shape &s = *in[k];
            const uint64_t dk = i < rank - s.size() ? 1 : uint64_t(s[i - (rank - s.size())]);
            f[k] = dk == d;
        }
        bool same = !dims.empty();
        for (size_t k = 0; same && k < N; ++k) same = full[k].back() == f[k];
        if (same) {
            dims.back() *= d;
        } else {
            dims.push_back(d);
            for (size_t k = 0; k < N; ++k) full[k].push_back(f[k]);
        }
    }
    if (dims.empty()) {
        dims.push_back(1);
        for (size_t k = 0; k < N; ++k) full[k].push_back(1);
    }
    BroadcastPlan<N> p;
    p.dims = dims;
    for (size_t k = 0; k < N; ++k) {
        p.strides[k].resize(dims.size());
        uint64_t s = 1;
        for (size_t i = dims.size(); i-- > 0;) {
            p.strides[k][i] = full[k][i] ? s : 0;
            if (full[k][i]) s *= dims[i];
        }
        p.inner[k] = p.strides[k].back();
    }
    return p;
}

// Calls run(offsets, pos, n) for the runs covering output elements [begin, end): n elements from
// output position pos along the innermost dim, input k starting at element offsets[k] and
// advancing by p.inner[k].
template <size_t N, class Run>
void for_each_run(const BroadcastPlan<N> &p, uint64_t begin, uint64_t end, Run &&run) {
    const size_t r = p.dims.size();
    const uint64_t inner = p.dims[r - 1];
    uint64_t pos = begin;
    while (pos < end) {
        uint64_t rest = pos / inner;
        const uint64_t col = pos % inner;
        std::array<uint64_t, N> off;
        for (size_t k = 0; k < N; ++k) off[k] = col * p.inner[k];
        for (size_t d = r - 1; d-- > 0;) {
            const uint64_t i = rest % p.dims[d];
            rest /= p.dims[d];
            for (size_t k = 0; k < N; ++k) off[k] += i * p.strides[k][d];
        }
        const uint64_t n = std::min(inner - col, end - pos);
        run(off, pos, n);
        pos += n;
    }
}

}  // namespace gguftool::runtime::cpu
