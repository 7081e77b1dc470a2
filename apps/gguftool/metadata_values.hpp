// How metadata values are spelled in JSON, for dump and diff (for people: value_display.hpp, which
// this includes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gguftool/gguf.hpp"
#include "output.hpp"
#include "value_display.hpp"

namespace gguftool::cli {

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
