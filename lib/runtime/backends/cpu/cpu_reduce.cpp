// Softmax, ReduceMean and ReduceSum on the CPU: every float type computed in double (exponentials,
// the sums, as ggml's softmax accumulates its sum, and the quotients) and each result rounded once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// Product of shape[begin, end).
uint64_t product(const Shape &shape, size_t begin, size_t end) {
    uint64_t n = 1;
    for (size_t i = begin; i < end; ++i) n *= uint64_t(shape[i]);
    return n;
}

// One softmax row of `len` elements `stride` apart: e = exp(x - max), y = e / sum(e). A row of
// equal very negative values (a fully masked attention row) gives the uniform 1 / len, and so does
// a row of -inf (where exp(-inf - -inf) would be NaN); NaNs propagate.
template <class T>
void softmax_row(const T *x, T *y, uint64_t len, uint64_t stride, std::vector<double> &e) {
    double max = -std::numeric_limits<double>::infinity();
    for (uint64_t j = 0; j < len; ++j) max = std::max(max, widen(x[j * stride]));
    if (max == -std::numeric_limits<double>::infinity()) {
        for (uint64_t j = 0; j < len; ++j) {
            const double v = widen(x[j * stride]);
            y[j * stride] = narrow<T>(std::isnan(v) ? v : 1.0 / double(len));
        }
        return;
    }
    double sum = 0;
    for (uint64_t j = 0; j < len; ++j) {
        e[j] = std::exp(widen(x[j * stride]) - max);
        sum += e[j];
    }
    for (uint64_t j = 0; j < len; ++j) y[j * stride] = narrow<T>(e[j] / sum);
}

// Softmax along attribute "axis" (normalized by the operator).
void softmax(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    if (x.elements() == 0) return;
    const size_t axis = size_t(args.attributes.get_int("axis").value());
    const uint64_t len = uint64_t(x.shape[axis]);
    const uint64_t outer = product(x.shape, 0, axis);
    const uint64_t inner = product(x.shape, axis + 1, x.shape.size());
    const uint8_t *px = bytes(x);
    uint8_t *py = mutable_bytes(y);
    with_type(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (kFloatElement<T>) {
            const T *in = reinterpret_cast<const T *>(px);
            T *out = reinterpret_cast<T *>(py);
            // Rows: (o, i) for o < outer, i < inner; row r starts at o * len * inner + i.
            parallel_for(outer * inner, cpu.threads(), std::max<uint64_t>(1, kGrain / len),
                         [&](uint64_t b, uint64_t e) {
                             std::vector<double> scratch(len);
                             for (uint64_t r = b; r < e; ++r) {
                                 const uint64_t start = (r / inner) * len * inner + r % inner;
                                 softmax_row(in + start, out + start, len, inner, scratch);
                             }
                         });
        } else {
            throw Error("softmax of a non-float tensor");
        }
    });
}

// ReduceMean and ReduceSum over attribute "axes" (normalized and sorted by the operator); the
// output has the kept dims in order, with or without the reduced ones as 1.
void reduce(CpuBackend &cpu, const KernelArgs &args, bool mean) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const uint64_t outputs = y.elements();
    if (outputs == 0) return;
    const std::vector<int64_t> axes = args.attributes.get_ints("axes").value();
    // Dims with their element strides, size-1 dims dropped and neighbours of the same kind
    // (kept or reduced) merged: the kept ones walk the outputs in order, the reduced ones each
    // output's inputs.
    std::vector<uint64_t> kept_dims, kept_strides, red_dims, red_strides;
    int last_kind = -1;
    uint64_t stride = 1;
    std::vector<std::pair<uint64_t, bool>> dims;  // (size, reduced), innermost first
    for (size_t d = x.shape.size(); d-- > 0;) {
        const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
        dims.push_back({uint64_t(x.shape[d]), reduced});
    }
    for (const auto &[size, reduced] : dims) {
        if (size != 1) {
            auto &sizes = reduced ? red_dims : kept_dims;
            auto &strides = reduced ? red_strides : kept_strides;
            if (last_kind == int(reduced)) {
                sizes.back() *= size;
            } else {
                sizes.push_back(size);
                strides.push_back(stride);
            }
            last_kind = int(reduced);
        }
        stride *= size;
    }
    // Innermost first: red_dims[0] is the fastest-moving reduced dim.
    uint64_t count = 1;
    for (const uint64_t d : red_dims) count *= d;
    const uint8_t *px = bytes(x);
    uint8_t *py = mutable_bytes(y);
    with_type(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (kFloatElement<T>) {
            const T *in = reinterpret_cast<const T *>(px);
            T *out = reinterpret_cast<T *>(py);
            // 0 for an empty axis: NaN means, as NumPy's (and sums of 0)
            const double n = mean ? double(count) : 1.0;
            parallel_for(outputs, cpu.threads(),
                         std::max<uint64_t>(1, kGrain / std::max<uint64_t>(1, count)),
                         [&](uint64_t b, uint64_t e) {
                             std::vector<uint64_t> idx(red_dims.size());
                             for (uint64_t o = b; o < e; ++o) {
                                 uint64_t base = 0, rest = o;
                                 for (size_t k = 0; k < kept_dims.size(); ++k) {
                                     base += (rest % kept_dims[k]) * kept_strides[k];
                                     rest /= kept_dims[k];
                                 }
                                 double sum = 0;
                                 if (red_dims.size() == 1 && red_strides[0] == 1) {
                                     const T *row = in + base;
                                     for (uint64_t j = 0; j < count; ++j) sum += widen(row[j]);
                                 } else {
                                     std::fill(idx.begin(), idx.end(), 0);
                                     uint64_t off = base;
                                     for (uint64_t j = 0; j < count; ++j) {
                                         sum += widen(in[off]);
                                         for (size_t k = 0; k < red_dims.size(); ++k) {
                                             off += red_strides[k];
                                             if (++idx[k] < red_dims[k]) break;
                                             off -= red_dims[k] * red_strides[k];
                                             idx[k] = 0;
                                         }
                                     }
                                 }
                                 out[o] = narrow<T>(sum / n);
                             }
                         });
        } else {
            throw Error("reduction of a non-float tensor");
        }
    });
}

void reduce_mean(CpuBackend &cpu, const KernelArgs &args) {
    reduce(cpu, args, true);
}
void reduce_sum(CpuBackend &cpu, const KernelArgs &args) {
    reduce(cpu, args, false);
}

}  // namespace

std::span<const CpuKernelRow> reduce_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"Softmax", softmax},
        {"ReduceMean", reduce_mean},
        {"ReduceSum", reduce_sum},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
