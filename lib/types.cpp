#include "gguftool/types.hpp"

#include <algorithm>
#include <cctype>

namespace gguftool {
namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::optional<GgmlType> type_from_name(std::string_view name) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (!kTypeTable[id].removed && iequals(kTypeTable[id].name, name))
            return static_cast<GgmlType>(id);
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
