// DequantizePacked's format identifiers: "gguf:" + the lowercase ggml type name, for every block
// format of the type table (the spec's 27 identifiers).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gguftool/opset29.hpp"

namespace gguftool::opset29 {

std::string format_name(GgmlType type) {
    const TypeTraits *t = type_traits(static_cast<uint32_t>(type));
    if (!t || !t->quantized)
        throw Error(fmt::format("type id {} is not a block format", static_cast<uint32_t>(type)));
    std::string name = std::string("gguf:") + t->name;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

std::optional<GgmlType> format_type(std::string_view format) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        if (!type_traits(id)->quantized) continue;
        const auto type = static_cast<GgmlType>(id);
        if (format == format_name(type)) return type;
    }
    return std::nullopt;
}

}  // namespace gguftool::opset29
