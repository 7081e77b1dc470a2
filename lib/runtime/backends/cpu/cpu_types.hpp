// Element storage types of the CPU kernels and a dispatch from DataType to them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

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

}  // namespace gguftool::runtime::cpu
