// How metadata values are spelled, for people and in JSON: the one formatter that dump and diff
// both use.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gguftool/gguf.hpp"
#include "output.hpp"

namespace gguftool::cli {

// Strings longer than this are cut in text output (their length is shown).
inline constexpr size_t kTextStringBytes = 72;

// "uint32", "string", or for arrays the element type and length: "string[320]".
std::string type_label(const gguf::Value &v);

// Writes an integer or bool metadata value, which the text and JSON spell alike; false (nothing
// written) for the other types, whose spelling differs.
inline bool put_integer_or_bool(Out &out, const gguf::Value &v) {
    using gguf::ValueType;
    switch (v.type()) {
        case ValueType::uint8:
        case ValueType::uint16:
        case ValueType::uint32:
        case ValueType::uint64:
            out.put_uint(v.as_uint());
            return true;
        case ValueType::int8:
        case ValueType::int16:
        case ValueType::int32:
        case ValueType::int64:
            out.put_int(v.as_int());
            return true;
        case ValueType::bool_:
            out.put(v.as_bool() ? "true" : "false");
            return true;
        default:
            return false;
    }
}

// For a terminal: numbers as the shortest text that reads back, strings quoted and escaped
// (cut after `string_bytes` bytes), arrays with their first 8 items and "... N more".
void put_value_text(Out &out, const gguf::Value &v, size_t string_bytes = kTextStringBytes);

// JSON: the whole value; non-finite numbers as null (JSON has no NaN or Infinity).
void put_value_json(Out &out, const gguf::Value &v);
void put_json_float(Out &out, float v);
void put_json_double(Out &out, double v);

// The JSON members that say a value's type, without a leading comma: "type<suffix>": "array",
// then for arrays "array_type<suffix>" and, for arrays of arrays, "element_array_types<suffix>"
// (one entry per inner array: its element type, or the list of its own entries when it holds
// arrays too; [[1, 2], [["a"]]] is ["int32", ["string"]]).
void put_json_type_members(Out &out, const gguf::Value &v, std::string_view suffix = "");

}  // namespace gguftool::cli
