// `gguftool run --compare MODEL.gguf`: each graph output against the GGUF tensor of the same
// name, decoded by the core.
#pragma once

#include <string>

#include "gguftool/gguf.hpp"
#include "gguftool/runtime.hpp"
#include "run_table.hpp"

namespace gguftool::cli::run {

struct CompareTally {
    size_t matched = 0, differing = 0, not_compared = 0;
};

// The headers of the columns compare_output adds to the output table.
inline constexpr std::string_view kCompareHeader = "GGUF type  result";

// Compares one output and prints its row of `table`: name, type, shape, the GGUF tensor's type
// and the result ("match", "MISMATCH: ...", "not compared: ...").
void compare_output(const OutputTable &table, const gguf::Model &gguf, const std::string &name,
                    const runtime::Tensor &value, unsigned threads, CompareTally &tally);

}  // namespace gguftool::cli::run
