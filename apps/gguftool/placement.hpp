// What run, verify and generate print, once, on stderr, for a backend other than the CPU: where
// each node runs (runtime::placement_summary).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <string_view>
#include <vector>

#include "gguftool/runtime.hpp"

namespace gguftool::cli {

// The callback an option set's on_placement takes: none for the CPU (it places every node on
// itself), else one printing the summary.
inline std::function<void(const std::vector<runtime::NodePlacement> &)> placement_printer(
    std::string_view backend) {
    if (backend == "cpu") return {};
    return [](const std::vector<runtime::NodePlacement> &p) {
        fmt::print(stderr, "{}\n", runtime::placement_summary(p));
    };
}

}  // namespace gguftool::cli
