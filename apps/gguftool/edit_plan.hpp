// gguftool edit: what the edits of a command line make of a file's metadata.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/gguf_value_text.hpp"

namespace gguftool::cli::edit {

// One edit, in command-line order.
struct Edit {
    enum class Kind { set, set_json, set_file, remove } kind;
    std::string arg;  // KEY=TYPE:VALUE, KEY=TYPE:JSON, KEY=PATH, or KEY
};

// Why the command line's edits cannot be carried out whatever the file, or "" when they can:
// a malformed or out-of-range value, a split.* key, a general.alignment that is not a uint32
// power of two, a key edited twice.
std::string command_line_problem(const std::vector<Edit> &edits);
// The same for one argument (for the option validators): "" when it is fine.
std::string argument_problem(Edit::Kind kind, const std::string &arg);

// A key whose value changes (old and new), is added (new only) or is deleted (old only).
struct Change {
    std::string key;
    std::optional<gguf::Value> old;
    std::optional<gguf::MetaValue> now;
};

struct Plan {
    gguf::Header header;  // the new header; tensor offsets as in the file
    std::vector<Change> changes;
    uint64_t old_alignment = 0;
};

// The new header of `file` (keys kept in place, new keys appended, deleted keys dropped) and the
// changes, in command-line order. --set-file reads its files here. Throws gguftool::Error naming
// the file for a deleted key it does not have, or a file --set-file cannot read. The plan's
// gguf::Values are views into `file`.
Plan plan(const gguf::File &file, const std::vector<Edit> &edits);

}  // namespace gguftool::cli::edit
