// The ggml tensor type table: ids, names, block sizes and bytes per block.
// Ids and names follow ggml's `enum ggml_type` and `ggml_type_name` (ggml/include/ggml.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "gguftool/data_type.hpp"

namespace gguftool {

enum class GgmlType : uint32_t {
    f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    // 4, 5: removed (q4_2, q4_3)
    q5_0 = 6,
    q5_1 = 7,
    q8_0 = 8,
    q8_1 = 9,
    q2_k = 10,
    q3_k = 11,
    q4_k = 12,
    q5_k = 13,
    q6_k = 14,
    q8_k = 15,
    iq2_xxs = 16,
    iq2_xs = 17,
    iq3_xxs = 18,
    iq1_s = 19,
    iq4_nl = 20,
    iq3_s = 21,
    iq2_s = 22,
    iq4_xs = 23,
    i8 = 24,
    i16 = 25,
    i32 = 26,
    i64 = 27,
    f64 = 28,
    iq1_m = 29,
    bf16 = 30,
    // 31..33: removed (q4_0_4_4, q4_0_4_8, q4_0_8_8)
    tq1_0 = 34,
    tq2_0 = 35,
    // 36..38: removed (iq4_nl_4_4, iq4_nl_4_8, iq4_nl_8_8)
    mxfp4 = 39,
    nvfp4 = 40,
    q1_0 = 41,
    q2_0 = 42,
};

inline constexpr uint32_t kGgmlTypeCount = 43;  // ids 0..42

struct TypeTraits {
    const char *name;     // ggml_type_name, e.g. "q4_K"; for removed ids the old name
    uint32_t block_size;  // elements per block (1 for plain types); 0 for removed ids
    uint32_t type_size;   // bytes per block; 0 for removed ids
    bool quantized;       // true for block formats decoded by the dequantization core
    bool removed;         // retired id: files using it cannot be read
};

// Traits of a type id, or nullptr when the id is beyond the table (unknown).
const TypeTraits *type_traits(uint32_t id);
inline const TypeTraits &traits(GgmlType t) {
    return *type_traits(static_cast<uint32_t>(t));
}

// The ggml name of a known, non-removed type.
inline const char *type_name(GgmlType t) {
    return traits(t).name;
}

// Looks a type up by ggml name, case-insensitively ("q4_K" and "q4_k" both work).
std::optional<GgmlType> type_from_name(std::string_view name);

// The element type that holds a plain type's values unchanged (f32 -> float32, f16 -> float16,
// i8 -> int8, ...); undefined for quantized and removed types. Used wherever a plain GGUF tensor
// meets ONNX: export, verify, run --compare.
DataType onnx_data_type(GgmlType t);

// Bytes needed for `elements` values of type `t`; nullopt when elements is not a whole number of
// blocks or the byte count overflows 64 bits.
std::optional<uint64_t> row_bytes(GgmlType t, uint64_t elements);

}  // namespace gguftool
