// The ONNX versions of each operator the runtime executes, for naming a node's operator the way
// ONNX does ("Identity-25"): the version a model's opset selects is the newest one not above it.
// The registry (op_registry.cpp) keeps one row per set of semantics instead, so a row may stand
// for several of these versions (Identity-1 runs Identity-13 ... Identity-25, which only widened
// the type lists).
//
// From ONNX's operator changelog up to opset 25 (ONNX 1.20); DequantizePacked and Unpack are
// opset 29's.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace gguftool::runtime::detail {

struct OpVersions {
    std::string_view op_type;
    std::array<int, 10> versions;  // ascending, then zeros
};

inline constexpr OpVersions kOpVersions[] = {
    {"Add", {1, 6, 7, 13, 14}},
    {"Cast", {1, 6, 9, 13, 19, 21, 23, 24, 25}},
    {"Concat", {1, 4, 11, 13}},
    {"Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}},
    {"DequantizePacked", {29}},
    {"Gather", {1, 11, 13}},
    {"Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}},
    {"Mul", {1, 6, 7, 13, 14}},
    {"OneHot", {9, 11}},
    {"Reshape", {1, 5, 13, 14, 19, 21, 23, 24, 25}},
    {"Sub", {1, 6, 7, 13, 14}},
    {"Unpack", {29}},
    {"Unsqueeze", {1, 11, 13, 21, 23, 24, 25}},
};

// The ONNX version of `op_type` that a model at `opset` uses; `since` (the registry row's) when
// the operator is not listed above.
inline int onnx_op_version(std::string_view op_type, int64_t opset, int since) {
    for (const OpVersions &o : kOpVersions) {
        if (o.op_type != op_type) continue;
        int best = since;
        for (const int v : o.versions)
            if (v > 0 && v <= opset) best = std::max(best, v);
        return best;
    }
    return since;
}

}  // namespace gguftool::runtime::detail
