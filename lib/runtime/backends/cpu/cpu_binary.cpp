// The elementwise binary operators on the CPU with NumPy broadcasting: Add, Sub, Mul, Div, Mod,
// Min, BitwiseAnd, BitShift and Equal, and the comparisons and logical operators (Greater, Less,
// GreaterOrEqual, LessOrEqual, And, Or), which share Equal's path: a BOOL output from inputs of
// one type.
//
// Integers wrap modulo 2^n. float16 and bfloat16 compute in float and round once: float carries
// at least 2p + 2 bits of their precision p, so sums, differences, products and quotients come out
// correctly rounded (fmod is exact). Every float operation is one IEEE operation (the build keeps
// the compiler from contracting or reassociating).
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <type_traits>

#include "cpu_backend.hpp"
#include "cpu_broadcast.hpp"
#include "cpu_types.hpp"
#include "gguftool/half.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// What a binary kernel computes (Mod is `mod` or `fmod` by its attribute, BitShift `shift_left`
// or `shift_right` by its direction).
enum class BinaryOp {
    add,
    sub,
    mul,
    div,
    mod,
    fmod,
    min,
    bitwise_and,
    shift_left,
    shift_right,
    equal,
};

template <class T>
inline constexpr bool kHalf = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;
template <class T>
inline constexpr bool kFloat = kHalf<T> || std::is_floating_point_v<T>;
template <class T>
inline constexpr bool kInt = std::is_integral_v<T>;  // Bool is a struct, not integral

// Halves as float for computing; other types as they are.
inline float value(F16 v) {
    return fp16_to_f32(v.bits);
}
inline float value(BF16 v) {
    return bf16_to_f32(v.bits);
}
template <class T>
requires(!kHalf<T>) inline T value(T v) {
    return v;
}

// f(a, b) computed in float for halves (rounded once back), modulo 2^n for integers.
template <class T, class F>
inline T arith(T a, T b, F f) {
    if constexpr (std::is_same_v<T, F16>) {
        return F16{f32_to_fp16(f(value(a), value(b)))};
    } else if constexpr (std::is_same_v<T, BF16>) {
        return BF16{f32_to_bf16(f(value(a), value(b)))};
    } else if constexpr (kInt<T>) {
        // Unsigned and at least 32 bits wide: wraps without undefined behaviour (narrower types
        // would be promoted to int, where 65535 * 65535 overflows).
        using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
        return T(U(f(U(a), U(b))));
    } else {
        return f(a, b);
    }
}

// Integer division and remainders; b is not 0 (checked before). Powers of two (the lowering's
// field extraction) take a shift or a mask instead of a division.
template <class T>
inline T int_div(T a, T b) {
    if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));  // wraps
    } else {
        if ((b & (b - 1)) == 0) return T(a >> std::countr_zero(b));
    }
    return T(a / b);  // C++ truncates toward zero
}
template <class T>
inline T int_fmod(T a, T b) {
    if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;  // minimum % -1 would overflow
    return T(a % b);            // the dividend's sign
}
template <class T>
inline T int_mod(T a, T b) {
    if (b > 0 && (b & (b - 1)) == 0) return T(a & (b - 1));  // two's complement: the floor mod
    const T r = int_fmod(a, b);
    if constexpr (std::is_signed_v<T>)
        if (r != 0 && (r < 0) != (b < 0)) return T(r + b);  // the divisor's sign
    return r;
}

template <class T>
inline T min_of(T a, T b) {
    if constexpr (kInt<T>) {
        return b < a ? b : a;
    } else {
        const auto x = value(a), y = value(b);
        if (std::isnan(x)) return a;
        if (std::isnan(y)) return b;
        if (x == y) return std::signbit(x) ? a : b;  // -0 below +0
        return y < x ? b : a;
    }
}

// The operators with a BOOL output. Floats compare as IEEE values (NaN: false, -0 == +0),
// halves exactly in float; BOOL elements are 0 or 1 (any non-zero byte is true).
enum class Cmp { equal, greater, less, greater_equal, less_equal, logical_and, logical_or };

template <Cmp C, class T>
inline Bool compare(T a, T b) {
    const auto x = [&] {
        if constexpr (std::is_same_v<T, Bool>)
            return int(a.v != 0);
        else
            return value(a);
    }();
    const decltype(x) y = [&] {
        if constexpr (std::is_same_v<T, Bool>)
            return int(b.v != 0);
        else
            return value(b);
    }();
    bool r;
    if constexpr (C == Cmp::equal)
        r = x == y;
    else if constexpr (C == Cmp::greater)
        r = x > y;
    else if constexpr (C == Cmp::less)
        r = x < y;
    else if constexpr (C == Cmp::greater_equal)
        r = x >= y;
    else if constexpr (C == Cmp::less_equal)
        r = x <= y;
    else if constexpr (C == Cmp::logical_and)
        r = x != 0 && y != 0;
    else
        r = x != 0 || y != 0;
    return Bool{uint8_t(r)};
}

template <class T>
inline T shift(T a, T b, bool left) {
    if (b >= sizeof(T) * 8) return T(0);
    return left ? T(a << b) : T(a >> b);
}

// Output elements [begin, end) of y = f(a, b).
template <class T, class R, class F>
void run_rows(const BroadcastPlan<2> &p, const T *a, const T *b, R *y, uint64_t begin, uint64_t end,
              F f) {
    for_each_run(p, begin, end, [&](const std::array<uint64_t, 2> &off, uint64_t pos, uint64_t n) {
        const T *ra = a + off[0];
        const T *rb = b + off[1];
        R *ry = y + pos;
        if (p.inner[0] && p.inner[1]) {
            for (uint64_t i = 0; i < n; ++i) ry[i] = f(ra[i], rb[i]);
        } else if (p.inner[0]) {
            const T vb = rb[0];
            for (uint64_t i = 0; i < n; ++i) ry[i] = f(ra[i], vb);
        } else if (p.inner[1]) {
            const T va = ra[0];
            for (uint64_t i = 0; i < n; ++i) ry[i] = f(va, rb[i]);
        } else {
            const R v = f(ra[0], rb[0]);
            for (uint64_t i = 0; i < n; ++i) ry[i] = v;
        }
    });
}

[[noreturn]] void unsupported(BinaryOp op, DataType t) {
    throw Error(fmt::format("binary operator {} does not take {}", int(op), dtype_name(t)));
}

template <class T>
void run_typed(BinaryOp op, DataType dtype, const BroadcastPlan<2> &p, const T *a, const T *b,
               uint8_t *y, uint64_t begin, uint64_t end) {
    T *yt = reinterpret_cast<T *>(y);
    const auto rows = [&](auto f) { run_rows(p, a, b, yt, begin, end, f); };
    constexpr bool numeric = kInt<T> || kFloat<T>;
    switch (op) {
        case BinaryOp::add:
            if constexpr (numeric)
                return rows(
                    [](T u, T v) { return arith(u, v, [](auto s, auto t) { return s + t; }); });
            break;
        case BinaryOp::sub:
            if constexpr (numeric)
                return rows(
                    [](T u, T v) { return arith(u, v, [](auto s, auto t) { return s - t; }); });
            break;
        case BinaryOp::mul:
            if constexpr (numeric)
                return rows(
                    [](T u, T v) { return arith(u, v, [](auto s, auto t) { return s * t; }); });
            break;
        case BinaryOp::div:
            if constexpr (kInt<T>)
                return rows([](T u, T v) { return int_div(u, v); });
            else if constexpr (kFloat<T>)
                return rows(
                    [](T u, T v) { return arith(u, v, [](auto s, auto t) { return s / t; }); });
            break;
        case BinaryOp::mod:
            if constexpr (kInt<T>) return rows([](T u, T v) { return int_mod(u, v); });
            break;
        case BinaryOp::fmod:
            if constexpr (kInt<T>)
                return rows([](T u, T v) { return int_fmod(u, v); });
            else if constexpr (kFloat<T>)
                return rows([](T u, T v) {
                    return arith(u, v, [](auto s, auto t) { return std::fmod(s, t); });
                });
            break;
        case BinaryOp::min:
            if constexpr (numeric) return rows([](T u, T v) { return min_of(u, v); });
            break;
        case BinaryOp::bitwise_and:
            if constexpr (kInt<T>) return rows([](T u, T v) { return T(u & v); });
            break;
        case BinaryOp::shift_left:
            if constexpr (kInt<T> && std::is_unsigned_v<T>)
                return rows([](T u, T v) { return shift(u, v, true); });
            break;
        case BinaryOp::shift_right:
            if constexpr (kInt<T> && std::is_unsigned_v<T>)
                return rows([](T u, T v) { return shift(u, v, false); });
            break;
        case BinaryOp::equal:
            return run_rows(p, a, b, reinterpret_cast<Bool *>(y), begin, end,
                            [](T u, T v) { return compare<Cmp::equal>(u, v); });
    }
    unsupported(op, dtype);
}

// The first zero of an integer divisor, for div, mod and fmod.
void check_divisor(BinaryOp op, const DeviceTensor &b) {
    if (op != BinaryOp::div && op != BinaryOp::mod && op != BinaryOp::fmod) return;
    if (!is_integer(b.dtype)) return;
    const uint8_t *p = bytes(b);
    const size_t es = dtype_size(b.dtype);
    const uint64_t n = b.elements();
    for (uint64_t i = 0; i < n; ++i) {
        bool zero = true;
        for (size_t k = 0; k < es && zero; ++k) zero = p[i * es + k] == 0;
        if (zero)
            throw Error(fmt::format("integer {} by zero (element {} of input B is 0)",
                                    op == BinaryOp::div ? "division" : "modulo", i));
    }
}

// y = a op b, a and b of one type broadcast to y (checked by the operator).
void binary(CpuBackend &cpu, BinaryOp op, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = y.elements();
    if (n == 0) return;
    check_divisor(op, b);  // every element of b is used
    const BroadcastPlan<2> p = broadcast_plan<2>({&a.shape, &b.shape}, y.shape);
    const uint8_t *pa = bytes(a), *pb = bytes(b);
    uint8_t *py = mutable_bytes(y);
    with_type(a.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        parallel_for(n, cpu.threads(), kGrain, [&](uint64_t begin, uint64_t end) {
            run_typed(op, a.dtype, p, reinterpret_cast<const T *>(pa),
                      reinterpret_cast<const T *>(pb), py, begin, end);
        });
    });
}

template <BinaryOp op>
void binary_kernel(CpuBackend &cpu, const KernelArgs &args) {
    binary(cpu, op, args);
}
void mod_kernel(CpuBackend &cpu, const KernelArgs &args) {
    binary(cpu, args.attributes.at<int64_t>("fmod") ? BinaryOp::fmod : BinaryOp::mod, args);
}
void bit_shift_kernel(CpuBackend &cpu, const KernelArgs &args) {
    const bool left = args.attributes.at<std::string>("direction") == "LEFT";
    binary(cpu, left ? BinaryOp::shift_left : BinaryOp::shift_right, args);
}

// A comparison or logical kernel: a and b (one type, checked by the operator) broadcast to the
// BOOL y.
template <Cmp C>
void compare_kernel(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = y.elements();
    if (n == 0) return;
    const BroadcastPlan<2> p = broadcast_plan<2>({&a.shape, &b.shape}, y.shape);
    const uint8_t *pa = bytes(a), *pb = bytes(b);
    Bool *py = reinterpret_cast<Bool *>(mutable_bytes(y));
    with_type(a.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        parallel_for(n, cpu.threads(), kGrain, [&](uint64_t begin, uint64_t end) {
            run_rows(p, reinterpret_cast<const T *>(pa), reinterpret_cast<const T *>(pb), py, begin,
                     end, [](T u, T v) { return compare<C>(u, v); });
        });
    });
}

}  // namespace

std::span<const CpuKernelRow> binary_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"Add", binary_kernel<BinaryOp::add>},
        {"Sub", binary_kernel<BinaryOp::sub>},
        {"Mul", binary_kernel<BinaryOp::mul>},
        {"Div", binary_kernel<BinaryOp::div>},
        {"Mod", mod_kernel},
        {"Min", binary_kernel<BinaryOp::min>},
        {"BitwiseAnd", binary_kernel<BinaryOp::bitwise_and>},
        {"BitShift", bit_shift_kernel},
        {"Equal", binary_kernel<BinaryOp::equal>},
        {"Greater", compare_kernel<Cmp::greater>},
        {"Less", compare_kernel<Cmp::less>},
        {"GreaterOrEqual", compare_kernel<Cmp::greater_equal>},
        {"LessOrEqual", compare_kernel<Cmp::less_equal>},
        {"And", compare_kernel<Cmp::logical_and>},
        {"Or", compare_kernel<Cmp::logical_or>},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
