// Element types and conversions, with Cast's semantics (the table in opapi/operator_rules.hpp):
// C conversions, float16/bfloat16 narrowed once with round-to-nearest-even (gguftool/half.hpp),
// floating to integer truncating toward zero with NaN giving 0 (and out-of-range values
// saturating: C leaves them undefined, the emulation picks saturation), integer to integer modulo
// 2^n, and BOOL as "nonzero".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype.hpp"
#include "gguftool/half.hpp"

namespace gguftool::cann_emulator {

// float16 and bfloat16 elements, by their bits.
struct Half {
    uint16_t bits;
};
struct BFloat {
    uint16_t bits;
};

template <class T>
inline constexpr bool is_narrow_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat>;

// The type an operator computes in for elements of type T: float for float16 and bfloat16 (one
// rounding when stored), T itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_narrow_float_v<T>, float, T>;

template <class To, class From>
constexpr To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<From, Half>) {
        return convert<To>(fp16_to_f32(v.bits));
    } else if constexpr (std::is_same_v<From, BFloat>) {
        return convert<To>(bf16_to_f32(v.bits));
    } else if constexpr (std::is_same_v<From, bool>) {
        return convert<To>(uint8_t(v ? 1 : 0));
    } else if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);  // a NaN is nonzero
    } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat>) {
        constexpr bool half = std::is_same_v<To, Half>;
        if constexpr (std::is_same_v<From, float>) {
            return To{half ? f32_to_fp16(v) : f32_to_bf16(v)};
        } else if constexpr (std::is_same_v<From, double>) {
            return To{half ? f64_to_fp16(v) : f64_to_bf16(v)};
        } else {  // an integer: exact in a double rounded to odd, then one rounding
            const double d = std::is_signed_v<From> ? i64_to_double_odd(int64_t(v))
                                                    : u64_to_double_odd(uint64_t(v));
            return To{half ? f64_to_fp16(d) : f64_to_bf16(d)};
        }
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        const double d = double(v);
        if (std::isnan(d)) return To(0);
        const double t = std::trunc(d);
        // 2^digits as a double is exact: the first value above To's maximum.
        constexpr double above_max = double(std::numeric_limits<To>::max()) + 1.0;
        if (t <= double(std::numeric_limits<To>::lowest()))
            return std::numeric_limits<To>::lowest();
        if (t >= above_max) return std::numeric_limits<To>::max();
        return To(t);
    } else {
        return static_cast<To>(
            v);  // integer <-> integer (modulo 2^n), integer -> float, float <-> double
    }
}

// One element in (emulated) device memory.
template <class T>
T load(const std::byte *p) {
    if constexpr (std::is_same_v<T, bool>) {
        return std::to_integer<uint8_t>(*p) != 0;
    } else {
        T v;
        std::memcpy(&v, p, sizeof(T));
        return v;
    }
}
template <class T>
void store(std::byte *p, T v) {
    if constexpr (std::is_same_v<T, bool>) {
        *p = std::byte(v ? 1 : 0);
    } else {
        std::memcpy(p, &v, sizeof(T));
    }
}

// Calls f(std::type_identity<T>{}) with the element type T of `d` (which must be known).
template <class F>
decltype(auto) visit_dtype(aclDataType d, F &&f) {
    switch (d) {
        case ACL_FLOAT:
            return f(std::type_identity<float>{});
        case ACL_FLOAT16:
            return f(std::type_identity<Half>{});
        case ACL_BF16:
            return f(std::type_identity<BFloat>{});
        case ACL_DOUBLE:
            return f(std::type_identity<double>{});
        case ACL_INT8:
            return f(std::type_identity<int8_t>{});
        case ACL_INT16:
            return f(std::type_identity<int16_t>{});
        case ACL_INT32:
            return f(std::type_identity<int32_t>{});
        case ACL_INT64:
            return f(std::type_identity<int64_t>{});
        case ACL_UINT8:
            return f(std::type_identity<uint8_t>{});
        case ACL_UINT16:
            return f(std::type_identity<uint16_t>{});
        case ACL_UINT32:
            return f(std::type_identity<uint32_t>{});
        case ACL_UINT64:
            return f(std::type_identity<uint64_t>{});
        case ACL_BOOL:
            return f(std::type_identity<bool>{});
        default:
            std::abort();  // dtypes are checked where tensors and scalars are created
    }
}

}  // namespace gguftool::cann_emulator
