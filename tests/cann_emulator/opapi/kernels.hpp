// What the operators' kernels share: reading a view (broadcast to a shape) as values of the
// promoted type, writing values to a view converted to its dtype, raw element copies, and the
// elementwise loops. Kernels read all their inputs before writing, so outputs may alias inputs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/stream.hpp"
#include "core/view.hpp"

namespace gguftool::cann_emulator {

inline constexpr size_t kMaxViewRank = 8;  // aclCreateTensor allows no more

// Calls f(k, offset) for the k-th index of `shape` in row-major order, with the element offset
// (from the storage start) of `v` there: v's dims align to the right of shape, and its size-1 (or
// missing) dims repeat. The innermost dimension is a tight loop.
template <class F>
void for_each_offset(const View &v, std::span<const int64_t> shape, F &&f) {
    const size_t rank = shape.size();
    if (element_count(shape) <= 0) return;
    if (rank == 0) {
        f(size_t(0), v.offset);
        return;
    }
    int64_t step[kMaxViewRank] = {};  // v's stride along each of shape's dims, 0 if repeated
    const size_t lead = rank - v.dims.size();
    for (size_t i = 0; i < v.dims.size(); ++i)
        if (v.dims[i] != 1) step[lead + i] = v.strides[i];
    const int64_t inner = shape[rank - 1], inner_step = step[rank - 1];
    int64_t index[kMaxViewRank] = {};
    int64_t at = v.offset;
    size_t k = 0;
    for (;;) {
        for (int64_t j = 0; j < inner; ++j) f(k++, at + j * inner_step);
        size_t d = rank - 1;
        for (;;) {  // the next outer index
            if (d == 0) return;
            --d;
            if (++index[d] < shape[d]) {
                at += step[d];
                break;
            }
            at -= step[d] * (shape[d] - 1);
            index[d] = 0;
        }
    }
}

// The offsets for_each_offset visits, as a vector.
std::vector<int64_t> element_offsets(const View &v, std::span<const int64_t> shape);

// v broadcast to shape, each element converted to the promoted type N and held as compute_t<N>.
template <class N>
std::vector<compute_t<N>> read_as(const DeviceMemory &m, const View &v,
                                  std::span<const int64_t> shape) {
    std::vector<compute_t<N>> values(size_t(std::max<int64_t>(element_count(shape), 0)));
    if (values.empty()) return values;
    const std::byte *base = m.host(v.data);
    const size_t size = v.element_size();
    visit_dtype(v.dtype, [&]<class S>(std::type_identity<S>) {
        for_each_offset(v, shape, [&](size_t k, int64_t at) {
            values[k] = convert<compute_t<N>>(convert<N>(load<S>(base + at * size)));
        });
    });
    return values;
}

// Writes values (one per element of out, row-major) converted to out's dtype.
template <class R>
void write_as(const DeviceMemory &m, const View &out, const std::vector<R> &values) {
    if (values.empty()) return;
    std::byte *base = m.host(out.data);
    const size_t size = out.element_size();
    visit_dtype(out.dtype, [&]<class D>(std::type_identity<D>) {
        for_each_offset(out, out.dims, [&](size_t k, int64_t at) {
            store<D>(base + at * size, convert<D>(R(values[k])));
        });
    });
}

// The raw bytes of v's elements broadcast to shape, and their writing to out (same dtype).
std::vector<std::byte> read_raw(const DeviceMemory &m, const View &v,
                                std::span<const int64_t> shape);
void write_raw(const DeviceMemory &m, const View &out, const std::vector<std::byte> &bytes);

// out = f(x) elementwise over out's shape; f gets the promoted type's tag, the value as
// compute_t<N> and an error string to set. A result of type compute_t<N> is rounded to N before
// it is cast to out's dtype; other result types (BOOL for comparisons) are cast as they are.
template <class F>
StreamTask unary_kernel(View x, View out, aclDataType promoted, F f) {
    return [=](const DeviceMemory &m) -> std::string {
        return visit_dtype(promoted, [&]<class N>(std::type_identity<N> tag) -> std::string {
            const auto a = read_as<N>(m, x, out.dims);
            using R = decltype(f(tag, a[0], std::declval<std::string &>()));
            using Stored = std::conditional_t<std::is_same_v<R, compute_t<N>>, N, R>;
            std::vector<Stored> r(a.size());
            std::string error;
            for (size_t i = 0; i < a.size() && error.empty(); ++i)
                r[i] = convert<Stored>(f(tag, a[i], error));
            if (!error.empty()) return error;
            write_as(m, out, r);
            return "";
        });
    };
}

template <class F>
StreamTask binary_kernel(View x, View y, View out, aclDataType promoted, F f) {
    return [=](const DeviceMemory &m) -> std::string {
        return visit_dtype(promoted, [&]<class N>(std::type_identity<N> tag) -> std::string {
            const auto a = read_as<N>(m, x, out.dims);
            const auto b = read_as<N>(m, y, out.dims);
            using R = decltype(f(tag, a[0], b[0], std::declval<std::string &>()));
            using Stored = std::conditional_t<std::is_same_v<R, compute_t<N>>, N, R>;
            std::vector<Stored> r(a.size());
            std::string error;
            for (size_t i = 0; i < a.size() && error.empty(); ++i)
                r[i] = convert<Stored>(f(tag, a[i], b[i], error));
            if (!error.empty()) return error;
            write_as(m, out, r);
            return "";
        });
    };
}

}  // namespace gguftool::cann_emulator
