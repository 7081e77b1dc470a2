// Slice, Transpose and Expand on the CPU: the output, in order, read from strided positions of the
// input.
//
// Both reduce to "outer" dims walked with an odometer and an innermost run: copied with memcpy
// when it is contiguous in the input, element by element otherwise. A transpose that moves the
// input's innermost axis goes through square tiles copied in and out with short strides only.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_broadcast.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// Output = for every outer index (row-major over `dims`), `inner` elements read from input
// element base + sum(index[d] * step[d]) + i * inner_step. Element offsets may be negative steps.
struct Runs {
    std::vector<uint64_t> dims;  // outer dims (may be empty: one run)
    std::vector<int64_t> step;   // input element step per outer dim
    int64_t base = 0;
    uint64_t inner = 1;
    int64_t inner_step = 1;
};

void copy_runs(const Runs &r, size_t es, const uint8_t *src, uint8_t *dst, unsigned threads) {
    uint64_t rows = 1;
    for (uint64_t d : r.dims) rows *= d;
    const size_t k = r.dims.size();
    parallel_for(rows, threads, std::max<uint64_t>(1, kGrain / r.inner),
                 [&](uint64_t b, uint64_t e) {
                     // The odometer at row b.
                     std::vector<uint64_t> idx(k);
                     int64_t off = r.base;
                     uint64_t rest = b;
                     for (size_t d = k; d-- > 0;) {
                         idx[d] = rest % r.dims[d];
                         rest /= r.dims[d];
                         off += int64_t(idx[d]) * r.step[d];
                     }
                     with_word(es, [&](auto word) {
                         using W = decltype(word);
                         const W *in = reinterpret_cast<const W *>(src);
                         W *out = reinterpret_cast<W *>(dst) + b * r.inner;
                         for (uint64_t row = b; row < e; ++row, out += r.inner) {
                             if (r.inner_step == 1) {
                                 std::memcpy(out, in + off, size_t(r.inner) * sizeof(W));
                             } else {
                                 const W *p = in + off;
                                 for (uint64_t i = 0; i < r.inner; ++i)
                                     out[i] = p[int64_t(i) * r.inner_step];
                             }
                             for (size_t d = k; d-- > 0;) {
                                 off += r.step[d];
                                 if (++idx[d] < r.dims[d]) break;
                                 off -= int64_t(r.dims[d]) * r.step[d];
                                 idx[d] = 0;
                             }
                         }
                     });
                 });
}

std::vector<int64_t> element_strides(const Shape &shape) {
    std::vector<int64_t> s(shape.size());
    int64_t m = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        s[d] = m;
        m *= shape[d];
    }
    return s;
}

// Tile side: 64 elements (32 for 8-byte ones), so that a tile stays within 16 KiB.
uint64_t tile_side(size_t es) {
    return es <= 4 ? 64 : 32;
}

// out[o][i][j] = in[o'][j][i] through tiles: dims/in_stride/out_stride are the coalesced output
// axes, p the one contiguous in the input, q (the last) the one contiguous in the output.
void tiled_transpose(const std::vector<uint64_t> &dims, const std::vector<uint64_t> &in_stride,
                     size_t p, size_t es, const uint8_t *src, uint8_t *dst, unsigned threads) {
    const size_t q = dims.size() - 1;
    std::vector<uint64_t> out_stride(dims.size());
    for (size_t d = dims.size(), m = 1; d-- > 0;) {
        out_stride[d] = m;
        m *= size_t(dims[d]);
    }
    std::vector<size_t> outer;
    uint64_t outer_n = 1;
    for (size_t d = 0; d < q; ++d)
        if (d != p) outer.push_back(d), outer_n *= dims[d];
    const uint64_t t = tile_side(es);
    const uint64_t tp = (dims[p] + t - 1) / t, tq = (dims[q] + t - 1) / t;
    const uint64_t sq = in_stride[q], op = out_stride[p];
    parallel_for(outer_n * tp * tq, threads, std::max<uint64_t>(1, kGrain / (t * t)),
                 [&](uint64_t b, uint64_t e) {
                     with_word(es, [&](auto word) {
                         using W = decltype(word);
                         const W *in = reinterpret_cast<const W *>(src);
                         W *out = reinterpret_cast<W *>(dst);
                         alignas(64) W tile[64 * 64];
                         for (uint64_t u = b; u < e; ++u) {
                             const uint64_t jq = u % tq, jp = (u / tq) % tp;
                             uint64_t rest = u / (tq * tp), oi = 0, oo = 0;
                             for (size_t k = outer.size(); k-- > 0;) {
                                 const size_t d = outer[k];
                                 const uint64_t i = rest % dims[d];
                                 rest /= dims[d];
                                 oi += i * in_stride[d];
                                 oo += i * out_stride[d];
                             }
                             const uint64_t p0 = jp * t, np = std::min(dims[p] - p0, t);
                             const uint64_t q0 = jq * t, nq = std::min(dims[q] - q0, t);
                             // Input rows (contiguous along p) into the tile, then output rows
                             // (contiguous along q) out of it: no long strides in either loop.
                             for (uint64_t iq = 0; iq < nq; ++iq)
                                 std::memcpy(&tile[iq * t], in + oi + (q0 + iq) * sq + p0,
                                             size_t(np) * sizeof(W));
                             for (uint64_t ip = 0; ip < np; ++ip) {
                                 W *row = out + oo + (p0 + ip) * op + q0;
                                 for (uint64_t iq = 0; iq < nq; ++iq) row[iq] = tile[iq * t + ip];
                             }
                         }
                     });
                 });
}

// Slice: y[i...] = x[starts + i * steps] per axis.
void slice(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const std::vector<int64_t> &starts = args.attributes.at<std::vector<int64_t>>("starts");
    const std::vector<int64_t> &steps = args.attributes.at<std::vector<int64_t>>("steps");
    if (y.elements() == 0) return;
    const size_t rank = x.shape.size(), es = dtype_size(x.dtype);
    const std::vector<int64_t> stride = element_strides(x.shape);
    Runs r;
    for (size_t d = 0; d < rank; ++d) r.base += starts[d] * stride[d];
    // The innermost run: trailing dims copied whole, then one more dim read with step 1.
    size_t k = rank;
    while (k > 0 && steps[k - 1] == 1) {
        r.inner *= uint64_t(y.shape[k - 1]);
        --k;
        if (y.shape[k] != x.shape[k]) break;
    }
    if (k == rank && rank > 0) {  // the last dim is strided
        --k;
        r.inner = uint64_t(y.shape[k]);
        r.inner_step = steps[k];
    }
    for (size_t d = 0; d < k; ++d) {
        if (y.shape[d] == 1) continue;
        r.dims.push_back(uint64_t(y.shape[d]));
        r.step.push_back(steps[d] * stride[d]);
    }
    copy_runs(r, es, bytes(x), mutable_bytes(y), cpu.threads());
}

// Transpose: axis i of y is axis perm[i] of x.
void transpose(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const std::vector<int64_t> &perm = args.attributes.at<std::vector<int64_t>>("perm");
    if (y.elements() == 0) return;
    const size_t es = dtype_size(x.dtype);
    const std::vector<int64_t> stride = element_strides(x.shape);
    // Output axes with their input strides; size-1 axes dropped, and an axis merged into the one
    // before it when the two are neighbours in the same order in the input.
    std::vector<uint64_t> dims, in_stride;
    for (size_t i = 0; i < perm.size(); ++i) {
        const uint64_t d = uint64_t(y.shape[i]), s = uint64_t(stride[size_t(perm[i])]);
        if (d == 1) continue;
        if (!dims.empty() && in_stride.back() == s * d) {
            dims.back() *= d;
            in_stride.back() = s;
        } else {
            dims.push_back(d);
            in_stride.push_back(s);
        }
    }
    const uint8_t *src = bytes(x);
    uint8_t *dst = mutable_bytes(y);
    if (dims.empty() || (dims.size() == 1 && in_stride[0] == 1)) {
        std::memcpy(dst, src, y.nbytes());
        return;
    }
    const size_t last = dims.size() - 1;
    const size_t p = size_t(std::find(in_stride.begin(), in_stride.end(), 1) - in_stride.begin());
    const uint64_t t = tile_side(es);
    if (p != last && p < dims.size() && dims[p] >= t / 2 && dims[last] >= t / 2)
        return tiled_transpose(dims, in_stride, p, es, src, dst, cpu.threads());
    Runs r;
    r.dims.assign(dims.begin(), dims.end() - 1);
    for (size_t d = 0; d < last; ++d) r.step.push_back(int64_t(in_stride[d]));
    r.inner = dims[last];
    r.inner_step = int64_t(in_stride[last]);
    copy_runs(r, es, src, dst, cpu.threads());
}

// Expand: the input broadcast (NumPy rules) to the output; runs copied or filled.
void expand(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = y.elements();
    if (n == 0) return;
    const BroadcastPlan<1> p = broadcast_plan<1>({&x.shape}, y.shape);
    const uint8_t *px = bytes(x);
    uint8_t *py = mutable_bytes(y);
    with_word(dtype_size(x.dtype), [&](auto word) {
        using W = decltype(word);
        const W *in = reinterpret_cast<const W *>(px);
        W *out = reinterpret_cast<W *>(py);
        parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
            for_each_run(p, b, e,
                         [&](const std::array<uint64_t, 1> &off, uint64_t pos, uint64_t len) {
                             if (p.inner[0])
                                 std::memcpy(out + pos, in + off[0], size_t(len) * sizeof(W));
                             else
                                 std::fill_n(out + pos, len, in[off[0]]);
                         });
        });
    });
}

}  // namespace

std::span<const CpuKernelRow> layout_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"Slice", slice},
        {"Transpose", transpose},
        {"Expand", expand},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
