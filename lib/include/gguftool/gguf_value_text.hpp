// Metadata values written as text: the --set, --set-json and --set-file arguments of
// `gguftool edit`.
//
//   --set KEY=TYPE:VALUE       a scalar: TYPE is uint8 ... int64, float32, float64, bool or string
//   --set-json KEY=TYPE:JSON   any value, arrays too: TYPE is the type of the innermost elements,
//                              the JSON's brackets give the nesting
//   --set-file KEY=PATH        a string holding the bytes of a file (a chat template)
//
// Text is read exactly: integers in decimal, range-checked against their type; floats with
// std::from_chars, rounded once to the nearest value of the type (so "0.1" as float32 is the
// float nearest 0.1, not the double nearest 0.1 rounded again); bools "true" or "false" only
// (not 0 or 1, which would read as integers); strings byte for byte. Examples:
//
//   general.name=string:My model
//   llama.context_length=uint32:4096
//   tokenizer.ggml.scores=float32:[0.1, -2.5, 1e-3]      an array of float32
//   tokenizer.ggml.tokens=string:["<s>", "</s>"]         an array of strings
//   x.pairs=int32:[[1, 2], [3]]                          an array of arrays of int32
//   x.flags=bool:[true, false]
//
// In JSON an array's elements must all be of one GGUF type: all values (of TYPE), or all arrays
// (whose own elements may differ from array to array, as GGUF allows). An empty array is an array
// of TYPE ([] with int32: an empty int32 array).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "gguftool/gguf_header.hpp"

namespace gguftool::gguf {

// A metadata key and the value to give it.
struct Assignment {
    std::string key;
    MetaValue value;
};

// `text` read as a scalar of `type` (not array). Throws gguftool::Error saying what is wrong with
// the text, e.g. "'4096' is out of range for uint8 (0 to 255)".
MetaValue parse_scalar(ValueType type, std::string_view text);

// `json` read as a value whose innermost elements are of `leaf_type` (a scalar type): a JSON
// scalar gives a scalar, a JSON array an array. Throws gguftool::Error naming the element, e.g.
// "element [2][0]: 'x' is not a float32".
MetaValue parse_json(ValueType leaf_type, std::string_view json);

// The arguments of --set, --set-json and --set-file. Each throws gguftool::Error naming the key
// ("general.x: '4096' is out of range for uint8 (0 to 255)").
Assignment parse_set(std::string_view arg);       // KEY=TYPE:VALUE
Assignment parse_set_json(std::string_view arg);  // KEY=TYPE:JSON
Assignment parse_set_file(std::string_view arg);  // KEY=PATH, the file read whole
// KEY=PATH split, without reading the file (to check a command line before opening anything).
std::pair<std::string, std::string> split_set_file(std::string_view arg);

}  // namespace gguftool::gguf
