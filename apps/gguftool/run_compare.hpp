// `gguftool run --compare MODEL.gguf`: each graph output against the GGUF tensor of the same
// name, decoded by the core.
#pragma once

#include <string>

#include "gguftool/gguf.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::cli::run {

struct CompareTally {
    size_t matched = 0, differing = 0, not_compared = 0;
};

// Compares one output and prints its line ("name  q4_K -> float [2, 32]  match").
void compare_output(const gguf::Model &gguf, const std::string &name, const runtime::Tensor &value,
                    unsigned threads, CompareTally &tally);

}  // namespace gguftool::cli::run
