// From a DataType to the C++ type of its elements: the one switch over element types that the
// runtime's templates dispatch through (the CPU kernels, the operators reading small control
// tensors, allclose). Internal to lib/runtime.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gguftool/half.hpp"
#include "gguftool/runtime/tensor.hpp"

namespace gguftool::runtime::detail {

// Storage types of the elements that have no C++ arithmetic type of their own.
struct F16 {
    uint16_t bits;
};
struct BF16 {
    uint16_t bits;
};
struct Bool {
    uint8_t v;
};

template <class T>
struct TypeTag {
    using type = T;
};

// Calls f(TypeTag<T>{}) with T the storage type of `t`.
template <class F>
decltype(auto) with_type(DataType t, F &&f) {
    switch (t) {
        case DataType::float32:
            return f(TypeTag<float>{});
        case DataType::float64:
            return f(TypeTag<double>{});
        case DataType::float16:
            return f(TypeTag<F16>{});
        case DataType::bfloat16:
            return f(TypeTag<BF16>{});
        case DataType::bool_:
            return f(TypeTag<Bool>{});
        case DataType::uint8:
            return f(TypeTag<uint8_t>{});
        case DataType::int8:
            return f(TypeTag<int8_t>{});
        case DataType::uint16:
            return f(TypeTag<uint16_t>{});
        case DataType::int16:
            return f(TypeTag<int16_t>{});
        case DataType::uint32:
            return f(TypeTag<uint32_t>{});
        case DataType::int32:
            return f(TypeTag<int32_t>{});
        case DataType::uint64:
            return f(TypeTag<uint64_t>{});
        case DataType::int64:
            return f(TypeTag<int64_t>{});
        case DataType::undefined:
            break;
    }
    throw Error("unsupported element type");
}

// Calls f(W{}) with W the unsigned integer of `bytes` bytes (1, 2, 4 or 8): for kernels that move
// elements without looking at their values.
template <class F>
decltype(auto) with_word(size_t bytes, F &&f) {
    switch (bytes) {
        case 1:
            return f(uint8_t{});
        case 2:
            return f(uint16_t{});
        case 4:
            return f(uint32_t{});
        case 8:
            return f(uint64_t{});
    }
    throw Error("unsupported element size");
}

// Calls f(v) with element i of `data` (elements of type t) as a number: uint64_t for uint64,
// int64_t for the other integer types and bool (0 or 1), double for the floating types (float16
// and bfloat16 widened exactly).
template <class F>
decltype(auto) with_value(DataType t, const uint8_t *data, uint64_t i, F &&f) {
    return with_type(t, [&](auto tag) -> decltype(auto) {
        using T = typename decltype(tag)::type;
        const T v = reinterpret_cast<const T *>(data)[i];
        if constexpr (std::is_same_v<T, F16>)
            return f(double(fp16_to_f32(v.bits)));
        else if constexpr (std::is_same_v<T, BF16>)
            return f(double(bf16_to_f32(v.bits)));
        else if constexpr (std::is_same_v<T, Bool>)
            return f(int64_t(v.v != 0));
        else if constexpr (std::is_floating_point_v<T>)
            return f(double(v));
        else if constexpr (std::is_same_v<T, uint64_t>)
            return f(v);
        else
            return f(int64_t(v));
    });
}

}  // namespace gguftool::runtime::detail
