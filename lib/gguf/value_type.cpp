#include "gguftool/gguf.hpp"

namespace gguftool::gguf {
namespace {

constexpr const char *kNames[kValueTypeCount] = {
    "uint8", "int8",   "uint16", "int16",  "uint32", "int32",   "float32",
    "bool",  "string", "array",  "uint64", "int64",  "float64",
};

}  // namespace

const char *value_type_name(ValueType t) {
    const auto i = static_cast<uint32_t>(t);
    return i < kValueTypeCount ? kNames[i] : "unknown";
}

std::optional<ValueType> value_type_from_name(std::string_view name) {
    for (uint32_t i = 0; i < kValueTypeCount; ++i)
        if (name == kNames[i]) return static_cast<ValueType>(i);
    return std::nullopt;
}

}  // namespace gguftool::gguf
