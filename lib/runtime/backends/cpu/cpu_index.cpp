// OneHot, Gather and Concat on the CPU: index arithmetic and byte copies.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <optional>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::runtime::cpu {
namespace {

// Element i of a numeric tensor as an int64 index (floats truncated toward zero, as OneHot casts
// them); nullopt when it has no int64 value (NaN, infinite, out of range).
std::optional<int64_t> index_at(DataType t, const uint8_t *p, uint64_t i) {
    if (!is_integer(t) && !is_floating(t)) return std::nullopt;
    return with_value(t, p, i, [](auto v) -> std::optional<int64_t> {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, double>) {
            const double d = std::trunc(v);
            if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return std::nullopt;
            return int64_t(d);
        } else if constexpr (std::is_same_v<V, uint64_t>) {
            if (v > uint64_t(INT64_MAX)) return std::nullopt;
            return int64_t(v);
        } else {
            return v;
        }
    });
}

// Calls f(I{}) with I the C++ type of an INT32 or INT64 index tensor.
template <class F>
void with_index_type(DataType t, F &&f) {
    if (t == DataType::int64) return f(int64_t{});
    if (t == DataType::int32) return f(int32_t{});
    throw Error(fmt::format("indices must be int32 or int64, not {}", dtype_name(t)));
}

// Gather's index rule: an index in [0, size), or in [-size, 0) counting from the end when
// `negative` (Gather-11); anything else is an error naming it.
struct IndexRange {
    int64_t size;
    bool negative;
    size_t axis;

    uint64_t row(int64_t k, uint64_t j) const {
        const int64_t given = k;
        if (k < 0 && negative) k += size;
        if (uint64_t(k) < uint64_t(size)) return uint64_t(k);
        throw Error(
            fmt::format("index {} (element {} of indices) is out of range for axis {} "
                        "of size {}",
                        given, j, axis, size));
    }
};

// Gather's copy: y[o, j, :] = data[o, indices[j], :] for the (o, j) in [b, e) (row-major). Rows
// of `row` bytes; kRow is that size when fixed, else 0.
template <size_t kRow, class I>
void gather_rows(const IndexRange &range, const uint8_t *src, const I *idx, uint8_t *dst,
                 uint64_t n, uint64_t row, uint64_t b, uint64_t e) {
    const uint64_t bytes = kRow ? kRow : row;
    const uint64_t block_bytes = uint64_t(range.size) * bytes;
    uint64_t j = b % n;
    const uint8_t *block = src + (b / n) * block_bytes;  // data[o]
    uint8_t *out = dst + b * bytes;
    for (uint64_t u = b; u < e; ++u, out += bytes) {
        std::memcpy(out, block + range.row(int64_t(idx[j]), j) * bytes, size_t(bytes));
        if (++j == n) j = 0, block += block_bytes;
    }
}

// Fills n elements of size `es` with the value at `v`.
void fill(uint8_t *dst, uint64_t n, const uint8_t *v, size_t es) {
    switch (es) {
        case 1:
            std::memset(dst, *v, size_t(n));
            return;
        case 2: {
            uint16_t x;
            std::memcpy(&x, v, 2);
            std::fill_n(reinterpret_cast<uint16_t *>(dst), n, x);
            return;
        }
        case 4: {
            uint32_t x;
            std::memcpy(&x, v, 4);
            std::fill_n(reinterpret_cast<uint32_t *>(dst), n, x);
            return;
        }
        default: {
            uint64_t x;
            std::memcpy(&x, v, 8);
            std::fill_n(reinterpret_cast<uint64_t *>(dst), n, x);
            return;
        }
    }
}

void one_hot(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &indices = *args.inputs[0], &values = *args.inputs[2];
    DeviceTensor &y = args.outputs[0];
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    const int64_t depth_value = args.attributes.at<int64_t>("depth");
    const bool negative_indices = args.attributes.at<int64_t>("negative_indices") != 0;
    if (y.elements() == 0) return;
    const size_t es = dtype_size(y.dtype);
    const uint8_t *off = bytes(values), *on = off + es;
    uint64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= uint64_t(indices.shape[d]);
    for (size_t d = axis; d < indices.shape.size(); ++d) inner *= uint64_t(indices.shape[d]);
    const uint64_t depth = uint64_t(depth_value);
    const uint8_t *idx = bytes(indices);
    uint8_t *out = mutable_bytes(y);
    // Output [outer, depth, inner]: all off, then one on per index in range.
    parallel_for(outer, cpu.threads(), std::max<uint64_t>(1, kGrain / (depth * inner)),
                 [&](uint64_t b, uint64_t e) {
                     for (uint64_t o = b; o < e; ++o) {
                         uint8_t *block = out + o * depth * inner * es;
                         fill(block, depth * inner, off, es);
                         for (uint64_t i = 0; i < inner; ++i) {
                             std::optional<int64_t> k = index_at(indices.dtype, idx, o * inner + i);
                             if (!k) continue;
                             if (*k < 0 && negative_indices) *k += depth_value;
                             if (*k < 0 || uint64_t(*k) >= depth) continue;
                             std::memcpy(block + (uint64_t(*k) * inner + i) * es, on, es);
                         }
                     }
                 });
}

void gather(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &data = *args.inputs[0], &indices = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    const IndexRange range{data.shape[axis], args.attributes.at<int64_t>("negative_indices") != 0,
                           axis};
    const uint64_t n = indices.elements();
    const uint8_t *ip = bytes(indices);
    with_index_type(indices.dtype, [&](auto tag) {
        using I = decltype(tag);
        const I *idx = reinterpret_cast<const I *>(ip);
        if (y.elements() == 0) {  // nothing to copy, but every index is still checked
            parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
                for (uint64_t j = b; j < e; ++j) range.row(int64_t(idx[j]), j);
            });
            return;
        }
        uint64_t outer = 1, row = dtype_size(data.dtype);  // row: bytes per index
        for (size_t d = 0; d < axis; ++d) outer *= uint64_t(data.shape[d]);
        for (size_t d = axis + 1; d < data.shape.size(); ++d) row *= uint64_t(data.shape[d]);
        const uint8_t *src = bytes(data);
        uint8_t *dst = mutable_bytes(y);
        // Ranges in order: the first that throws holds the first bad index (at o = 0).
        parallel_for(outer * n, cpu.threads(), std::max<uint64_t>(1, (kGrain * 4) / row),
                     [&](uint64_t b, uint64_t e) {
                         switch (row) {
                             case 1:
                                 return gather_rows<1>(range, src, idx, dst, n, row, b, e);
                             case 2:
                                 return gather_rows<2>(range, src, idx, dst, n, row, b, e);
                             case 4:
                                 return gather_rows<4>(range, src, idx, dst, n, row, b, e);
                             case 8:
                                 return gather_rows<8>(range, src, idx, dst, n, row, b, e);
                             case 16:
                                 return gather_rows<16>(range, src, idx, dst, n, row, b, e);
                             default:
                                 return gather_rows<0>(range, src, idx, dst, n, row, b, e);
                         }
                     });
    });
}

// DequantizePackedGather (op_fused.cpp): y[j, ...] = row indices[j] of the packed weight at
// x + "offset" (shape "shape"), decoded as a DequantizePacked to "weight_dtype" and, when y is
// another type (a Cast to float followed), converted to y's: only the rows gathered are decoded.
void packed_gather(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0], &indices = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const GgmlType type = GgmlType(args.attributes.at<int64_t>("format"));
    // A double weight cast to float is the float it was decoded from.
    DataType dtype = DataType(int32_t(args.attributes.at<int64_t>("weight_dtype")));
    if (dtype == DataType::float64 && y.dtype == DataType::float32) dtype = DataType::float32;
    const std::vector<int64_t> &shape = args.attributes.at<std::vector<int64_t>>("shape");
    const IndexRange range{shape[0], args.attributes.at<int64_t>("negative_indices") != 0, 0};
    uint64_t row = 1;
    for (size_t d = 1; d < shape.size(); ++d) row *= uint64_t(shape[d]);
    const std::optional<uint64_t> row_bytes = gguftool::row_bytes(type, row);
    const uint8_t *w = bytes(x) + args.attributes.at<int64_t>("offset");
    const uint64_t n = indices.elements();
    const size_t out_row = size_t(row) * dtype_size(y.dtype);
    uint8_t *dst = y.elements() ? mutable_bytes(y) : nullptr;
    with_index_type(indices.dtype, [&](auto tag) {
        using I = decltype(tag);
        const I *idx = reinterpret_cast<const I *>(bytes(indices));
        parallel_for(n, cpu.threads(), std::max<uint64_t>(1, kGrain / std::max<uint64_t>(1, row)),
                     [&](uint64_t b, uint64_t e) {
                         for (uint64_t j = b; j < e; ++j) {
                             const uint64_t r = range.row(int64_t(idx[j]), j);
                             if (!dst) continue;
                             const std::span<const uint8_t> in(w + r * *row_bytes,
                                                               size_t(*row_bytes));
                             uint8_t *out = dst + j * out_row;
                             quant::decode(type, in, row, out, dtype, 1);
                             if (y.dtype == dtype) continue;
                             // Widened exactly from the rounded type (a Cast to float).
                             float *f = reinterpret_cast<float *>(out);
                             const uint16_t *h = reinterpret_cast<const uint16_t *>(out);
                             if (dtype == DataType::float16)
                                 for (uint64_t i = row; i-- > 0;) f[i] = fp16_to_f32(h[i]);
                             else
                                 for (uint64_t i = row; i-- > 0;) f[i] = bf16_to_f32(h[i]);
                         }
                     });
    });
}

void concat(CpuBackend &cpu, const KernelArgs &args) {
    const std::span<const DeviceTensor *const> inputs = args.inputs;
    DeviceTensor &y = args.outputs[0];
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    if (y.elements() == 0) return;
    uint64_t outer = 1;
    for (size_t d = 0; d < axis; ++d) outer *= uint64_t(y.shape[d]);
    const uint64_t out_row = y.nbytes() / outer;
    std::vector<uint64_t> chunk(inputs.size());
    for (size_t t = 0; t < inputs.size(); ++t) chunk[t] = inputs[t]->nbytes() / outer;
    uint8_t *dst = mutable_bytes(y);
    parallel_for(outer, cpu.threads(), std::max<uint64_t>(1, (kGrain * 4) / out_row),
                 [&](uint64_t b, uint64_t e) {
                     for (uint64_t o = b; o < e; ++o) {
                         uint8_t *row = dst + o * out_row;
                         for (size_t t = 0; t < inputs.size(); ++t) {
                             if (chunk[t])
                                 std::memcpy(row, bytes(*inputs[t]) + o * chunk[t],
                                             size_t(chunk[t]));
                             row += chunk[t];
                         }
                     }
                 });
}

// Copies positions [0, n) of `from` (slices of `from_pitch` positions, plain or transposed) to
// positions [at, at + n) of `to`, slice by slice: each slice's n rows of `inner` values of `es`
// bytes.
void copy_positions(const uint8_t *from, int64_t from_pitch, bool from_transposed, CacheStorage &to,
                    int64_t at, int64_t n, size_t es, unsigned threads) {
    uint8_t *dst = to.storage.mutable_data();
    const int64_t inner = to.inner;
    const size_t row = size_t(inner) * es;
    parallel_for(uint64_t(to.outer), threads,
                 std::max<uint64_t>(1, kGrain * 4 / std::max<uint64_t>(1, uint64_t(n) * row)),
                 [&](uint64_t b, uint64_t e) {
                     for (uint64_t o = b; o < e; ++o) {
                         const uint8_t *in = from + o * uint64_t(from_pitch) * row;
                         uint8_t *out = dst + o * uint64_t(to.capacity) * row;
                         if (!from_transposed && !to.transposed) {
                             std::memcpy(out + size_t(at) * row, in, size_t(n) * row);
                             continue;
                         }
                         // Element (t, i): at t * inner + i plain, i * pitch + t transposed.
                         for (int64_t t = 0; t < n; ++t)
                             for (int64_t i = 0; i < inner; ++i) {
                                 const int64_t src =
                                     from_transposed ? i * from_pitch + t : t * inner + i;
                                 const int64_t dst_at = to.transposed ? i * to.capacity + at + t
                                                                      : (at + t) * inner + i;
                                 std::memcpy(out + size_t(dst_at) * es, in + size_t(src) * es, es);
                             }
                     }
                 });
}

// A cache that outgrows its storage, or one started from a cache (a loop carrying it), gets room
// for up to this many more positions: one copy per kCacheGrowth appends. One started from a plain
// tensor gets no room, so that a caller who downloads it gets the storage itself, not a copy.
constexpr int64_t kCacheGrowth = 256;

// KvConcat (op_fused.cpp): y = Concat(past, add) along "axis", as a view of a KV cache
// (CacheStorage, kept transposed when "transposed" is 1): past's cache itself when past is its
// newest view and the cache has room (only add's positions are written), else a new cache holding
// both.
void kv_concat(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &past = *args.inputs[0], &add = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    const bool transposed = args.attributes.at<int64_t>("transposed") != 0;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= y.shape[d];
    for (size_t d = axis + 1; d < y.shape.size(); ++d) inner *= y.shape[d];
    const int64_t t = past.shape[axis], s = add.shape[axis], n = t + s;
    const size_t es = dtype_size(y.dtype);
    const CacheView *from = cache_view(past);
    const bool same = from && from->storage->outer == outer && from->storage->inner == inner &&
                      from->storage->storage.dtype() == y.dtype &&
                      from->storage->transposed == transposed;
    std::shared_ptr<CacheStorage> cache;
    if (same) {
        std::lock_guard lock(from->storage->mutex);
        if (from->storage->used == t && from->storage->capacity >= n) {
            cache = from->storage;
            cache->used = n;
        }
    }
    if (!cache) {
        cache = std::make_shared<CacheStorage>();
        cache->outer = outer, cache->inner = inner, cache->used = n;
        cache->transposed = transposed;
        cache->capacity = from ? (n + kCacheGrowth - 1) / kCacheGrowth * kCacheGrowth : n;
        cache->storage = transposed ? Tensor::allocate(y.dtype, {outer, inner, cache->capacity})
                                    : Tensor::allocate(y.dtype, {outer, cache->capacity, inner});
        if (t > 0) {
            if (from)
                copy_positions(from->storage->storage.data(), from->storage->capacity,
                               from->storage->transposed, *cache, 0, t, es, cpu.threads());
            else
                copy_positions(bytes(past), t, false, *cache, 0, t, es, cpu.threads());
        }
    }
    if (s > 0) copy_positions(bytes(add), s, false, *cache, t, s, es, cpu.threads());
    y.buffer = std::make_shared<CacheView>(std::move(cache), n);
}

}  // namespace

std::span<const CpuKernelRow> index_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"OneHot", one_hot},     {"Gather", gather},
        {"Concat", concat},      {"DequantizePackedGather", packed_gather},
        {"KvConcat", kv_concat},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
