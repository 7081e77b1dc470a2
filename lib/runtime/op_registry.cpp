// The operator table: every (op_type, version) the runtime executes, default domain only.
//
// A row's `since` is the first opset version with its semantics; `same_as_later` lists the later
// ONNX versions that only widened the type lists (from ONNX's operator changelog, up to opset 27:
// BitCast is opset 26's, Range-27 added float16/bfloat16 with stash_type; DequantizePacked and
// Unpack are opset 29's), so a node is named as ONNX names it. A model at opset V runs the newest
// row with since <= V. Slice-10, -11 and -13 run the same code (see op_layout.cpp).
#include <fmt/format.h>

#include <limits>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

constexpr int kMany = std::numeric_limits<int>::max();

const std::vector<OpDef> &table() {
    static const std::vector<OpDef> ops = {
        {"DequantizePacked",
         29,
         {},
         1,
         1,
         1,
         1,
         {"format", "shape", "output_dtype"},
         run_dequantize_packed},
        {"Unpack", 29, {}, 2, 2, 1, 1, {"axis", "bits", "radix", "group_size"}, run_unpack},
        {"Unsqueeze", 1, {}, 1, 1, 1, 1, {"axes"}, run_unsqueeze, true},
        {"Unsqueeze", 11, {}, 1, 1, 1, 1, {"axes"}, run_unsqueeze, true},
        {"Unsqueeze", 13, {21, 23, 24, 25}, 2, 2, 1, 1, {}, run_unsqueeze, true},
        {"OneHot", 9, {}, 3, 3, 1, 1, {"axis"}, run_one_hot},
        {"OneHot", 11, {}, 3, 3, 1, 1, {"axis"}, run_one_hot},
        {"Cast", 6, {9, 13}, 1, 1, 1, 1, {"to"}, run_cast},
        {"Cast", 19, {21, 23, 24, 25}, 1, 1, 1, 1, {"to", "saturate", "round_mode"}, run_cast},
        {"Add", 7, {13, 14}, 2, 2, 1, 1, {}, run_add},
        {"Sub", 7, {13, 14}, 2, 2, 1, 1, {}, run_sub},
        {"Mul", 7, {13, 14}, 2, 2, 1, 1, {}, run_mul},
        {"Div", 7, {13, 14}, 2, 2, 1, 1, {}, run_div},
        {"Mod", 10, {13}, 2, 2, 1, 1, {"fmod"}, run_mod},
        {"Min", 8, {12, 13}, 1, kMany, 1, 1, {}, run_min},
        {"BitwiseAnd", 18, {}, 2, 2, 1, 1, {}, run_bitwise_and},
        {"BitShift", 11, {}, 2, 2, 1, 1, {"direction"}, run_bit_shift},
        {"Equal", 7, {11, 13, 19}, 2, 2, 1, 1, {}, run_equal},
        {"Neg", 6, {13}, 1, 1, 1, 1, {}, run_neg},
        {"Where", 9, {16}, 3, 3, 1, 1, {}, run_where},
        {"Gather", 1, {}, 2, 2, 1, 1, {"axis"}, run_gather},
        {"Gather", 11, {13}, 2, 2, 1, 1, {"axis"}, run_gather},
        {"Slice", 10, {11, 13}, 3, 5, 1, 1, {}, run_slice},
        {"Transpose", 1, {13, 21, 23, 24, 25}, 1, 1, 1, 1, {"perm"}, run_transpose},
        {"Range", 11, {}, 3, 3, 1, 1, {}, run_range},
        {"Range", 27, {}, 3, 3, 1, 1, {"stash_type"}, run_range},
        {"Shape", 1, {13}, 1, 1, 1, 1, {}, run_shape},
        {"Shape", 15, {19, 21, 23, 24, 25}, 1, 1, 1, 1, {"start", "end"}, run_shape},
        {"BitCast", 26, {}, 1, 1, 1, 1, {"to"}, run_bitcast, true},
        {"Reshape", 5, {13}, 2, 2, 1, 1, {}, run_reshape, true},
        {"Reshape", 14, {19, 21, 23, 24, 25}, 2, 2, 1, 1, {"allowzero"}, run_reshape, true},
        {"Identity", 1, {13, 14, 16, 19, 21, 23, 24, 25}, 1, 1, 1, 1, {}, run_identity, true},
        {"Concat", 1, {}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Concat", 4, {}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Concat", 11, {13}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Constant", 1, {9}, 0, 0, 1, 1, {"value"}, run_constant},
        {"Constant", 11, {}, 0, 0, 1, 1, {"value", "sparse_value"}, run_constant},
        {"Constant",
         12,
         {13, 19, 21, 23, 24, 25},
         0,
         0,
         1,
         1,
         {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
          "value_string", "value_strings"},
         run_constant},
    };
    return ops;
}

}  // namespace

const OpDef *find_op(std::string_view op_type, int64_t opset, std::string *why) {
    const OpDef *best = nullptr;
    int oldest = std::numeric_limits<int>::max();
    for (const OpDef &d : table()) {
        if (d.op_type != op_type) continue;
        oldest = std::min(oldest, d.since);
        if (d.since <= opset && (!best || d.since > best->since)) best = &d;
    }
    if (oldest == std::numeric_limits<int>::max()) {
        *why = fmt::format("unsupported operator {}", op_type);
        return nullptr;
    }
    if (opset > kMaxOpset) {
        *why = fmt::format(
            "unsupported opset {} for {} (this runtime knows the default domain up "
            "to opset {})",
            opset, op_type, kMaxOpset);
        return nullptr;
    }
    if (!best) {
        *why = fmt::format("unsupported opset {} for {} (supported from opset {})", opset, op_type,
                           oldest);
        return nullptr;
    }
    return best;
}

}  // namespace gguftool::runtime::detail
