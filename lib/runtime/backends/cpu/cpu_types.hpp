// Element storage types of the CPU kernels and the dispatch from DataType to them (the runtime's
// one, dtype_dispatch.hpp).
#pragma once

#include <type_traits>

#include "../../dtype_dispatch.hpp"
#include "gguftool/half.hpp"
#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

using detail::BF16;
using detail::Bool;
using detail::F16;
using detail::TypeTag;
using detail::with_type;
using detail::with_value;
using detail::with_word;

// The floating element types (float, double, F16, BF16). The float kernels widen them to double,
// compute there and round each result once (narrow).
template <class T>
inline constexpr bool kFloatElement = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                      std::is_same_v<T, F16> || std::is_same_v<T, BF16>;

inline double widen(F16 v) {
    return fp16_to_f32(v.bits);
}
inline double widen(BF16 v) {
    return bf16_to_f32(v.bits);
}
inline double widen(float v) {
    return v;
}
inline double widen(double v) {
    return v;
}
// v rounded once to T.
template <class T>
inline T narrow(double v) {
    if constexpr (std::is_same_v<T, F16>)
        return F16{f64_to_fp16(v)};
    else if constexpr (std::is_same_v<T, BF16>)
        return BF16{f64_to_bf16(v)};
    else
        return T(v);
}

}  // namespace gguftool::runtime::cpu
