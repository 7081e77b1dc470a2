// Elementwise arithmetic in a compute type T (float, double, an integer type or bool), with the
// semantics of operator_rules.hpp: integers wrap modulo 2^n (computed in uint64_t, so signed
// overflow is defined), floating types follow IEEE, BOOL computes as 0/1 and stores "nonzero".
// Integer divisions report a zero divisor through `error` (an execution error).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace gguftool::cann_emulator::arith {

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
T add(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
        return a || b;
    else if constexpr (is_int_v<T>)
        return T(uint64_t(a) + uint64_t(b));
    else
        return a + b;
}

template <class T>
T sub(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
        return a != b;
    else if constexpr (is_int_v<T>)
        return T(uint64_t(a) - uint64_t(b));
    else
        return a - b;
}

template <class T>
T mul(T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
        return a && b;
    else if constexpr (is_int_v<T>)
        return T(uint64_t(a) * uint64_t(b));
    else
        return a * b;
}

template <class T>
T neg(T a) {
    if constexpr (std::is_same_v<T, float>)
        return std::bit_cast<float>(std::bit_cast<uint32_t>(a) ^ 0x80000000u);
    else if constexpr (std::is_same_v<T, double>)
        return std::bit_cast<double>(std::bit_cast<uint64_t>(a) ^ (uint64_t(1) << 63));
    else if constexpr (std::is_same_v<T, bool>)
        return a;
    else
        return T(uint64_t(0) - uint64_t(a));
}

inline const char *kDivisionByZero = "integer division by zero";

// Integer quotient rounded toward zero (floor = false) or down (floor = true).
template <class T>
T divide(T a, T b, bool floor, std::string &error) {
    if constexpr (std::is_floating_point_v<T>) {
        return floor ? std::floor(a / b) : std::trunc(a / b);
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!b) error = kDivisionByZero;
        return a;
    } else {
        if (b == 0) {
            error = kDivisionByZero;
            return 0;
        }
        if constexpr (std::is_signed_v<T>) {
            if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;  // wraps
            T q = T(a / b);
            if (floor && T(a % b) != 0 && ((a < 0) != (b < 0))) q = T(q - 1);
            return q;
        } else {
            return T(a / b);
        }
    }
}

// Python's a % b: the remainder takes the divisor's sign.
template <class T>
T remainder(T a, T b, std::string &error) {
    if constexpr (std::is_floating_point_v<T>) {
        T r = std::fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!b) error = kDivisionByZero;
        return false;
    } else {
        if (b == 0) {
            error = kDivisionByZero;
            return 0;
        }
        if constexpr (std::is_signed_v<T>) {
            if (b == T(-1)) return 0;
            T r = T(a % b);
            if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
            return r;
        } else {
            return T(a % b);
        }
    }
}

template <class T>
T minimum(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
        if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) is -0
    }
    return a < b ? a : b;
}

// a >> s: a negative count shifts by 0; a count of the width or more leaves 0 or the sign.
template <class T>
T shift_right(T a, T s) {
    if constexpr (is_int_v<T>) {
        constexpr int width = int(sizeof(T) * 8);
        if constexpr (std::is_signed_v<T>) {
            if (s < 0) s = 0;
            if (s >= width) return a < 0 ? T(-1) : T(0);
        } else {
            if (s >= T(width)) return 0;
        }
        return T(a >> s);
    } else {
        return a;  // not reached: phase one allows integers only
    }
}

template <class T>
T bitwise_and(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(a & b);
    else
        return a;  // not reached: phase one allows integers and BOOL only
}

}  // namespace gguftool::cann_emulator::arith
