// TopK, NonZero and ScatterND on the CPU (the contracts: lib/runtime/op_select.cpp), and the Loop
// row, which needs no kernel: its body's nodes run their own.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// The value of element i as a sort key: double for every numeric type (int64 and uint64 values
// beyond 2^53 compare by their rounded value, enough for routing scores).
double key_at(DataType t, const uint8_t *p, uint64_t i) {
    return with_value(t, p, i, [](auto v) { return double(v); });
}

void topk(CpuBackend &cpu, const KernelArgs &a) {
    const DeviceTensor &x = *a.inputs[0];
    DeviceTensor &values = a.outputs[0], &indices = a.outputs[1];
    const size_t axis = size_t(a.attributes.at<int64_t>("axis"));
    const int64_t k = a.attributes.at<int64_t>("k");
    const bool largest = a.attributes.at<int64_t>("largest") != 0;
    const int64_t n = x.shape[axis];
    uint64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= uint64_t(x.shape[d]);
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= uint64_t(x.shape[d]);
    const size_t es = dtype_size(x.dtype);
    const uint8_t *in = bytes(x);
    uint8_t *out_v = k ? mutable_bytes(values) : nullptr;
    int64_t *out_i = k ? reinterpret_cast<int64_t *>(mutable_bytes(indices)) : nullptr;
    if (k == 0) return;
    parallel_for(outer * inner, cpu.threads(), 1, [&](uint64_t b, uint64_t e) {
        std::vector<std::pair<double, int64_t>> row(static_cast<size_t>(n));
        // Before: the larger (or smaller) value, NaN first, then the lower index.
        auto before = [largest](const std::pair<double, int64_t> &l,
                                const std::pair<double, int64_t> &r) {
            const bool ln = std::isnan(l.first), rn = std::isnan(r.first);
            if (ln || rn) return ln && (!rn || l.second < r.second);
            if (l.first != r.first) return largest ? l.first > r.first : l.first < r.first;
            return l.second < r.second;
        };
        for (uint64_t s = b; s < e; ++s) {
            const uint64_t o = s / inner, i = s % inner;
            for (int64_t j = 0; j < n; ++j)
                row[size_t(j)] = {key_at(x.dtype, in, (o * uint64_t(n) + uint64_t(j)) * inner + i),
                                  j};
            std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
            for (int64_t j = 0; j < k; ++j) {
                const uint64_t to = (o * uint64_t(k) + uint64_t(j)) * inner + i;
                const uint64_t from =
                    (o * uint64_t(n) + uint64_t(row[size_t(j)].second)) * inner + i;
                std::memcpy(out_v + to * es, in + from * es, es);
                out_i[to] = row[size_t(j)].second;
            }
        }
    });
}

void nonzero(CpuBackend &, const KernelArgs &a) {
    const DeviceTensor &x = *a.inputs[0];
    DeviceTensor &y = a.outputs[0];
    const uint64_t count = uint64_t(y.shape[1]);
    if (count == 0 || x.shape.empty()) return;
    int64_t *out = reinterpret_cast<int64_t *>(mutable_bytes(y));
    const uint8_t *in = bytes(x);
    const size_t rank = x.shape.size();
    uint64_t found = 0;
    for (uint64_t i = 0; i < x.elements(); ++i) {
        if (!with_value(x.dtype, in, i, [](auto v) { return v != 0; })) continue;
        if (found == count) throw Error("input X changed while it was read");
        uint64_t rest = i;
        for (size_t d = rank; d-- > 0;) {
            out[d * count + found] = int64_t(rest % uint64_t(x.shape[d]));
            rest /= uint64_t(x.shape[d]);
        }
        ++found;
    }
}

// data's element at `to` combined with updates' at `from` by the reduction.
template <class T>
void combine(T &to, T from, const std::string &reduction) {
    if constexpr (kFloatElement<T>) {
        const double a = widen(to), b = widen(from);
        double r = b;
        if (reduction == "add") r = a + b;
        if (reduction == "mul") r = a * b;
        if (reduction == "max") r = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
        if (reduction == "min") r = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
        to = narrow<T>(r);
    } else if constexpr (std::is_same_v<T, Bool>) {
        to = from;
    } else {
        // Integers wrap, as Add and Mul do.
        using U = std::make_unsigned_t<T>;
        if (reduction == "add")
            to = T(U(to) + U(from));
        else if (reduction == "mul")
            to = T(U(to) * U(from));
        else if (reduction == "max")
            to = std::max(to, from);
        else if (reduction == "min")
            to = std::min(to, from);
        else
            to = from;
    }
}

void scatter_nd(CpuBackend &, const KernelArgs &a) {
    const DeviceTensor &data = *a.inputs[0], &indices = *a.inputs[1], &updates = *a.inputs[2];
    DeviceTensor &y = a.outputs[0];
    const std::string &reduction = a.attributes.at<std::string>("reduction");
    if (y.nbytes()) std::memcpy(mutable_bytes(y), bytes(data), y.nbytes());
    const size_t q = size_t(indices.shape.back());
    uint64_t slice = 1;
    for (size_t d = q; d < data.shape.size(); ++d) slice *= uint64_t(data.shape[d]);
    const uint64_t tuples = q ? indices.elements() / q : 0;
    const int64_t *idx = tuples ? reinterpret_cast<const int64_t *>(bytes(indices)) : nullptr;
    with_type(data.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (!tuples || !slice) return;
        T *out = reinterpret_cast<T *>(mutable_bytes(y));
        const T *up = reinterpret_cast<const T *>(bytes(updates));
        for (uint64_t t = 0; t < tuples; ++t) {
            uint64_t at = 0;
            for (size_t d = 0; d < q; ++d) {
                int64_t i = idx[t * q + d];
                const int64_t size = data.shape[d];
                if (i < 0) i += size;
                if (i < 0 || i >= size)
                    throw Error(
                        fmt::format("index {} (tuple {}, axis {}) is out of range for a "
                                    "dimension of {}",
                                    idx[t * q + d], t, d, size));
                at = at * uint64_t(size) + uint64_t(i);
            }
            T *to = out + at * slice;
            const T *from = up + t * slice;
            for (uint64_t j = 0; j < slice; ++j) combine(to[j], from[j], reduction);
        }
    });
}

}  // namespace

std::span<const CpuKernelRow> select_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"TopK", topk},
        {"NonZero", nonzero},
        {"ScatterND", scatter_nd},
        {"Loop"},  // its body's nodes run their own kernels (op_loop.cpp)
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
