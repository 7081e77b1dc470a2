#include "gguftool/types.hpp"

#include <algorithm>
#include <cctype>

namespace gguftool {
namespace {

// Rows in id order; sizes as ggml_blck_size / ggml_type_size report them (ggml/src/ggml.c).
constexpr TypeTraits kTypes[kGgmlTypeCount] = {
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

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

const TypeTraits *type_traits(uint32_t id) {
    return id < kGgmlTypeCount ? &kTypes[id] : nullptr;
}

std::optional<GgmlType> type_from_name(std::string_view name) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (!kTypes[id].removed && iequals(kTypes[id].name, name)) return static_cast<GgmlType>(id);
    return std::nullopt;
}

DataType onnx_data_type(GgmlType t) {
    switch (t) {
        case GgmlType::f32:
            return DataType::float32;
        case GgmlType::f16:
            return DataType::float16;
        case GgmlType::bf16:
            return DataType::bfloat16;
        case GgmlType::f64:
            return DataType::float64;
        case GgmlType::i8:
            return DataType::int8;
        case GgmlType::i16:
            return DataType::int16;
        case GgmlType::i32:
            return DataType::int32;
        case GgmlType::i64:
            return DataType::int64;
        default:
            return DataType::undefined;
    }
}

std::optional<uint64_t> row_bytes(GgmlType t, uint64_t elements) {
    const TypeTraits &tt = traits(t);
    if (tt.removed || elements % tt.block_size != 0) return std::nullopt;
    const uint64_t blocks = elements / tt.block_size;
    if (blocks > UINT64_MAX / tt.type_size) return std::nullopt;
    return blocks * tt.type_size;
}

}  // namespace gguftool
