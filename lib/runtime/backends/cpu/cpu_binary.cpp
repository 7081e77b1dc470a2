// Add, Sub, Mul on the CPU with NumPy broadcasting.
//
// Dimensions are first coalesced (neighbours merged when both inputs broadcast them alike), so
// the inner loop runs over the longest possible stretch with each input either contiguous or
// fixed. Integers wrap modulo 2^n. float16 and bfloat16 compute in float and round once: float
// carries more than 2p + 2 bits of their precision p, so the result is the correctly rounded one.
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/half.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

struct Plan {
    std::vector<uint64_t> dims;                // coalesced output dims
    std::vector<uint64_t> stride_a, stride_b;  // element strides (0 where broadcast)
};

Plan plan(const Shape &a, const Shape &b, const Shape &y) {
    const size_t rank = y.size();
    std::vector<uint64_t> da(rank), db(rank);
    for (size_t i = 0; i < rank; ++i) {
        da[i] = i < rank - a.size() ? 1 : uint64_t(a[i - (rank - a.size())]);
        db[i] = i < rank - b.size() ? 1 : uint64_t(b[i - (rank - b.size())]);
    }
    // Merge dims of size 1 away and neighbours with the same broadcast pattern.
    std::vector<uint64_t> dims, pa, pb;  // pa/pb: 1 when that input has the full dim
    for (size_t i = 0; i < rank; ++i) {
        const uint64_t d = uint64_t(y[i]);
        if (d == 1) continue;
        const uint64_t fa = da[i] == d, fb = db[i] == d;
        if (!dims.empty() && pa.back() == fa && pb.back() == fb) {
            dims.back() *= d;
        } else {
            dims.push_back(d);
            pa.push_back(fa);
            pb.push_back(fb);
        }
    }
    if (dims.empty()) {
        dims.push_back(1);
        pa.push_back(1);
        pb.push_back(1);
    }
    Plan p;
    p.dims = dims;
    p.stride_a.resize(dims.size());
    p.stride_b.resize(dims.size());
    uint64_t sa = 1, sb = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        p.stride_a[i] = pa[i] ? sa : 0;
        p.stride_b[i] = pb[i] ? sb : 0;
        if (pa[i]) sa *= dims[i];
        if (pb[i]) sb *= dims[i];
    }
    return p;
}

template <class T, class Op>
inline T apply(T a, T b, Op op) {
    if constexpr (std::is_same_v<T, F16>) {
        return F16{f32_to_fp16(op(fp16_to_f32(a.bits), fp16_to_f32(b.bits)))};
    } else if constexpr (std::is_same_v<T, BF16>) {
        return BF16{f32_to_bf16(op(bf16_to_f32(a.bits), bf16_to_f32(b.bits)))};
    } else if constexpr (std::is_integral_v<T>) {
        // Unsigned and at least 32 bits wide: wraps without undefined behaviour (narrower types
        // would be promoted to int, where 65535 * 65535 overflows).
        using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
        return T(U(op(U(a), U(b))));
    } else {
        return op(a, b);
    }
}

// Elements [begin, end) of the output.
template <class T, class Op>
void run_range(const Plan &p, const T *a, const T *b, T *y, uint64_t begin, uint64_t end, Op op) {
    const size_t r = p.dims.size();
    const uint64_t inner = p.dims[r - 1];
    const uint64_t ia = p.stride_a[r - 1], ib = p.stride_b[r - 1];
    uint64_t pos = begin;
    while (pos < end) {
        // Offsets of the row holding `pos`.
        uint64_t rest = pos / inner, oa = 0, ob = 0;
        for (size_t d = r - 1; d-- > 0;) {
            const uint64_t k = rest % p.dims[d];
            rest /= p.dims[d];
            oa += k * p.stride_a[d];
            ob += k * p.stride_b[d];
        }
        const uint64_t col = pos % inner;
        const uint64_t n = std::min(inner - col, end - pos);
        const T *ra = a + oa + col * ia;
        const T *rb = b + ob + col * ib;
        T *ry = y + pos;
        if (ia && ib) {
            for (uint64_t i = 0; i < n; ++i) ry[i] = apply(ra[i], rb[i], op);
        } else if (ia) {
            const T vb = rb[0];
            for (uint64_t i = 0; i < n; ++i) ry[i] = apply(ra[i], vb, op);
        } else if (ib) {
            const T va = ra[0];
            for (uint64_t i = 0; i < n; ++i) ry[i] = apply(va, rb[i], op);
        } else {
            const T v = apply(ra[0], rb[0], op);
            for (uint64_t i = 0; i < n; ++i) ry[i] = v;
        }
        pos += n;
    }
}

template <class T>
void run_typed(BinaryOp op, const Plan &p, const T *a, const T *b, T *y, uint64_t begin,
               uint64_t end) {
    switch (op) {
        case BinaryOp::add:
            return run_range(p, a, b, y, begin, end, [](auto u, auto v) { return u + v; });
        case BinaryOp::sub:
            return run_range(p, a, b, y, begin, end, [](auto u, auto v) { return u - v; });
        case BinaryOp::mul:
            return run_range(p, a, b, y, begin, end, [](auto u, auto v) { return u * v; });
    }
}

}  // namespace

void binary(BinaryOp op, const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y,
            unsigned threads) {
    const uint64_t n = y.elements();
    if (n == 0) return;
    const Plan p = plan(a.shape, b.shape, y.shape);
    const uint8_t *pa = bytes(a), *pb = bytes(b);
    uint8_t *py = mutable_bytes(y);
    with_type(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, Bool>) {
            throw Error("bool is not a numeric type");
        } else {
            parallel_for(n, threads, kGrain, [&](uint64_t begin, uint64_t end) {
                run_typed(op, p, reinterpret_cast<const T *>(pa), reinterpret_cast<const T *>(pb),
                          reinterpret_cast<T *>(py), begin, end);
            });
        }
    });
}

}  // namespace gguftool::runtime::cpu
