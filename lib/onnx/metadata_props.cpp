// GGUF metadata as ONNX metadata_props: scalars as text, arrays as JSON, plus where the model
// came from. Every key and value is valid UTF-8 (invalid bytes become U+FFFD), as protobuf
// strings must be.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

using gguf::Value;
using gguf::ValueType;
using nlohmann::json;

// Length of the valid UTF-8 sequence at s[i], or 0 if there is none.
size_t utf8_length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) return 1;
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 > 0x8F))
        return 0;  // overlong, surrogate or beyond U+10FFFF
    return n;
}

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        if (const size_t n = utf8_length(s, i)) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            out.append("\xEF\xBF\xBD");
            ++i;
        }
    }
    return out;
}

bool is_unsigned(ValueType t) {
    return t == ValueType::uint8 || t == ValueType::uint16 || t == ValueType::uint32 ||
           t == ValueType::uint64;
}

// A float as the shortest decimal that reads back as the same float ("0.1", not
// "0.10000000149011612"): JSON numbers are doubles, so go through that text.
json float32_json(float f) {
    return json(std::strtod(fmt::format("{}", f).c_str(), nullptr));
}

// `longest_cut`: the length of the longest array (this one or one inside it) that was cut.
json array_json(const Value &v, std::optional<uint64_t> max, uint64_t &longest_cut);

json element_json(const Value &e, std::optional<uint64_t> max, uint64_t &longest_cut) {
    switch (e.type()) {
        case ValueType::float32:
            return float32_json(static_cast<float>(e.as_double()));
        case ValueType::float64:
            return json(e.as_double());
        case ValueType::bool_:
            return json(e.as_bool());
        case ValueType::string:
            return json(std::string(e.as_string()));
        case ValueType::array:
            return array_json(e, max, longest_cut);
        default:
            return is_unsigned(e.type()) ? json(e.as_uint()) : json(e.as_int());
    }
}

json array_json(const Value &v, std::optional<uint64_t> max, uint64_t &longest_cut) {
    const uint64_t keep = max ? std::min(*max, v.array_size()) : v.array_size();
    if (keep < v.array_size()) longest_cut = std::max(longest_cut, v.array_size());
    json a = json::array();
    uint64_t i = 0;
    v.for_each_element([&](const Value &e) {
        if (i++ < keep) a.push_back(element_json(e, max, longest_cut));
    });
    return a;
}

std::string scalar_text(const Value &v) {
    switch (v.type()) {
        case ValueType::float32:
            return fmt::format("{}", static_cast<float>(v.as_double()));
        case ValueType::float64:
            return fmt::format("{}", v.as_double());
        case ValueType::bool_:
            return v.as_bool() ? "true" : "false";
        case ValueType::string:
            return valid_utf8(v.as_string());
        default:
            return is_unsigned(v.type()) ? std::to_string(v.as_uint()) : std::to_string(v.as_int());
    }
}

}  // namespace

std::vector<std::string> add_metadata_props(onnx::ModelProto &m, const gguf::Model &model,
                                            std::optional<uint64_t> max_array) {
    std::vector<std::string> notes;
    std::set<std::string> keys;
    json shortened_arrays = json::object();
    const auto add = [&](std::string key, std::string value) {
        if (!keys.insert(key).second) return false;
        onnx::StringStringEntryProto &p = *m.add_metadata_props();
        p.set_key(std::move(key));
        p.set_value(std::move(value));
        return true;
    };
    for (const gguf::MetadataEntry &e : model.first().metadata()) {
        const std::string key = valid_utf8(e.key);
        if (e.value.type() != ValueType::array) {
            add(key, scalar_text(e.value));
            continue;
        }
        uint64_t longest_cut = 0;
        const json a = array_json(e.value, max_array, longest_cut);
        add(key, a.dump(-1, ' ', false, json::error_handler_t::replace));
        if (longest_cut) {
            shortened_arrays[key] = longest_cut;
            notes.push_back(
                fmt::format("metadata array '{}' ({} elements) shortened to {} "
                            "elements (--max-array)",
                            key, longest_cut, *max_array));
        }
    }
    // Ours come last, and never replace a GGUF key of the same name.
    const gguf::File &first = model.first();
    add("gguftool.source", valid_utf8(std::filesystem::path(first.path()).filename().string()));
    add("gguftool.gguf_version", std::to_string(first.version()));
    if (model.shards().size() > 1)
        add("gguftool.gguf_shards", std::to_string(model.shards().size()));
    if (!shortened_arrays.empty())
        add("gguftool.shortened_arrays",
            shortened_arrays.dump(-1, ' ', false, json::error_handler_t::replace));
    return notes;
}

}  // namespace gguftool::onnx_export::detail
