// Cast on the CPU: every supported type to every other, each value rounded once.
//
// Rules: floating -> narrower floating rounds to nearest even (NaN stays NaN, overflow gives
// infinity); integer -> floating rounds to nearest even, once (64-bit integers reach float16 and
// bfloat16 through a round-to-odd double, which keeps the single rounding exact); floating ->
// integer truncates toward zero and saturates, NaN giving 0; integer -> integer wraps modulo 2^n
// (two's complement, as C++ and NumPy do); anything -> bool is "not zero" (NaN is true); bool -> x
// is 0 or 1.
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/half.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// A source value in an exact wider form: float, double, int64_t or uint64_t.
inline float widen(float v) {
    return v;
}
inline double widen(double v) {
    return v;
}
inline float widen(F16 v) {
    return fp16_to_f32(v.bits);
}
inline float widen(BF16 v) {
    return bf16_to_f32(v.bits);
}
inline uint64_t widen(Bool v) {
    return v.v != 0;
}
template <class T>
requires std::is_integral_v<T>
inline auto widen(T v) {
    if constexpr (std::is_signed_v<T>)
        return int64_t(v);
    else
        return uint64_t(v);
}

template <class T>
T float_to_int(double d) {
    if (std::isnan(d)) return 0;
    d = std::trunc(d);
    constexpr double lo = double(std::numeric_limits<T>::min());
    constexpr double hi = double(std::numeric_limits<T>::max());
    if (d <= lo) return std::numeric_limits<T>::min();
    if (d >= hi) return std::numeric_limits<T>::max();
    return T(d);
}

template <class D>
inline D narrow(float v) {
    if constexpr (std::is_same_v<D, float>)
        return v;
    else if constexpr (std::is_same_v<D, double>)
        return double(v);
    else if constexpr (std::is_same_v<D, F16>)
        return F16{f32_to_fp16(v)};
    else if constexpr (std::is_same_v<D, BF16>)
        return BF16{f32_to_bf16(v)};
    else if constexpr (std::is_same_v<D, Bool>)
        return Bool{uint8_t(v != 0)};
    else
        return float_to_int<D>(v);
}

template <class D>
inline D narrow(double v) {
    if constexpr (std::is_same_v<D, float>)
        return float(v);
    else if constexpr (std::is_same_v<D, double>)
        return v;
    else if constexpr (std::is_same_v<D, F16>)
        return F16{f64_to_fp16(v)};
    else if constexpr (std::is_same_v<D, BF16>)
        return BF16{f64_to_bf16(v)};
    else if constexpr (std::is_same_v<D, Bool>)
        return Bool{uint8_t(v != 0)};
    else
        return float_to_int<D>(v);
}

template <class D, class I>
requires std::is_same_v<I, int64_t> || std::is_same_v<I, uint64_t>
inline D narrow(I v) {
    if constexpr (std::is_same_v<D, float>)
        return float(v);
    else if constexpr (std::is_same_v<D, double>)
        return double(v);
    else if constexpr (std::is_same_v<D, F16>) {
        if constexpr (std::is_signed_v<I>)
            return F16{f64_to_fp16(i64_to_double_odd(v))};
        else
            return F16{f64_to_fp16(u64_to_double_odd(v))};
    } else if constexpr (std::is_same_v<D, BF16>) {
        if constexpr (std::is_signed_v<I>)
            return BF16{f64_to_bf16(i64_to_double_odd(v))};
        else
            return BF16{f64_to_bf16(u64_to_double_odd(v))};
    } else if constexpr (std::is_same_v<D, Bool>)
        return Bool{uint8_t(v != 0)};
    else
        return static_cast<D>(v);  // modulo 2^n
}

template <class S, class D>
void cast_range(const S *in, D *out, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) out[i] = narrow<D>(widen(in[i]));
}

// y = x converted to y's type (same shape).
void cast(const DeviceTensor &x, DeviceTensor &y, unsigned threads) {
    const uint64_t n = x.elements();
    if (n == 0) return;
    if (x.dtype == y.dtype) {
        std::memcpy(mutable_bytes(y), bytes(x), x.nbytes());
        return;
    }
    const uint8_t *in = bytes(x);
    uint8_t *out = mutable_bytes(y);
    with_type(x.dtype, [&](auto src) {
        using S = typename decltype(src)::type;
        with_type(y.dtype, [&](auto dst) {
            using D = typename decltype(dst)::type;
            parallel_for(n, threads, kGrain, [&](uint64_t b, uint64_t e) {
                cast_range(reinterpret_cast<const S *>(in), reinterpret_cast<D *>(out), b, e);
            });
        });
    });
}

void cast_kernel(CpuBackend &cpu, const KernelArgs &args) {
    cast(*args.inputs[0], args.outputs[0], cpu.threads());
}

}  // namespace

std::span<const CpuKernelRow> cast_kernels() {
    static constexpr CpuKernelRow rows[] = {{"Cast", cast_kernel}};
    return rows;
}

}  // namespace gguftool::runtime::cpu

namespace gguftool::runtime {

Tensor cast_tensor(const Tensor &x, DataType to) {
    cpu::CpuBackend backend(1);
    const DeviceTensor in = backend.upload(x);
    DeviceTensor out = backend.allocate(to, x.shape());
    cpu::cast(in, out, 1);
    return backend.download(out);
}

}  // namespace gguftool::runtime
