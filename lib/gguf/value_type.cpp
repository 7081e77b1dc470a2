#include "gguftool/gguf.hpp"

namespace gguftool::gguf {

const char *value_type_name(ValueType t) {
    static constexpr const char *kNames[kValueTypeCount] = {
        "uint8", "int8",   "uint16", "int16",  "uint32", "int32",   "float32",
        "bool",  "string", "array",  "uint64", "int64",  "float64",
    };
    const auto i = static_cast<uint32_t>(t);
    return i < kValueTypeCount ? kNames[i] : "unknown";
}

}  // namespace gguftool::gguf
