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

// The one place each type's sizes are written. Rows in id order; sizes as ggml_blck_size /
// ggml_type_size report them (ggml/src/ggml.c). Constant, so the block decoders check their block
// layouts against it at compile time (formats/common.hpp).
inline constexpr TypeTraits kTypeTable[kGgmlTypeCount] = {
    {"f32", 1, 4, false, false},       {"f16", 1, 2, false, false},
    {"q4_0", 32, 18, true, false},     {"q4_1", 32, 20, true, false},
    {"q4_2", 0, 0, false, true},       {"q4_3", 0, 0, false, true},
    {"q5_0", 32, 22, true, false},     {"q5_1", 32, 24, true, false},
    {"q8_0", 32, 34, true, false},     {"q8_1", 32, 36, true, false},
    {"q2_K", 256, 84, true, false},    {"q3_K", 256, 110, true, false},
    {"q4_K", 256, 144, true, false},   {"q5_K", 256, 176, true, false},
    {"q6_K", 256, 210, true, false},   {"q8_K", 256, 292, true, false},
    {"iq2_xxs", 256, 66, true, false}, {"iq2_xs", 256, 74, true, false},
    {"iq3_xxs", 256, 98, true, false}, {"iq1_s", 256, 50, true, false},
    {"iq4_nl", 32, 18, true, false},   {"iq3_s", 256, 110, true, false},
    {"iq2_s", 256, 82, true, false},   {"iq4_xs", 256, 136, true, false},
    {"i8", 1, 1, false, false},        {"i16", 1, 2, false, false},
    {"i32", 1, 4, false, false},       {"i64", 1, 8, false, false},
    {"f64", 1, 8, false, false},       {"iq1_m", 256, 56, true, false},
    {"bf16", 1, 2, false, false},      {"q4_0_4_4", 0, 0, false, true},
    {"q4_0_4_8", 0, 0, false, true},   {"q4_0_8_8", 0, 0, false, true},
    {"tq1_0", 256, 54, true, false},   {"tq2_0", 256, 66, true, false},
    {"iq4_nl_4_4", 0, 0, false, true}, {"iq4_nl_4_8", 0, 0, false, true},
    {"iq4_nl_8_8", 0, 0, false, true}, {"mxfp4", 32, 17, true, false},
    {"nvfp4", 64, 36, true, false},    {"q1_0", 128, 18, true, false},
    {"q2_0", 64, 18, true, false},
};

// Traits of a type id, or nullptr when the id is beyond the table (unknown).
constexpr const TypeTraits *type_traits(uint32_t id) {
    return id < kGgmlTypeCount ? &kTypeTable[id] : nullptr;
}
constexpr const TypeTraits &traits(GgmlType t) {
    return kTypeTable[static_cast<uint32_t>(t)];
}

// The ggml name of a known, non-removed type.
constexpr const char *type_name(GgmlType t) {
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
