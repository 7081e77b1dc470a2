// Whether a node that the lowering keeps means the same at the target opset as at the model's.
//
// Lowering re-stamps the whole default domain with the target opset, so every other node is read
// by that opset's definition. ONNX 1.12 (linked here) knows each operator's definitions up to opset
// 17; for the later opsets this table, taken from ONNX's operator changelog, lists the versions
// that changed an operator's meaning (not only widened its type lists) and the operators added.
// It covers every ONNX operator a lowered model may keep, not only those the runtime executes,
// and names meaning changes, where the runtime's rows (lib/runtime/op_*.cpp) list the versions
// that only widened types; so it is not derived from those rows (and lib/lower comes below
// lib/runtime: the runtime's backend_fit calls the lowering).
#include "opset_change.hpp"

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include <string_view>

#include "gguftool/error.hpp"

namespace gguftool::lower::detail {
namespace {

struct Change {
    std::string_view op;
    int version;
};

// Versions after 17 that changed behaviour or inputs/attributes.
constexpr Change kChanged[] = {
    {"ReduceL1", 18},
    {"ReduceL2", 18},
    {"ReduceLogSum", 18},
    {"ReduceLogSumExp", 18},
    {"ReduceMax", 18},
    {"ReduceMean", 18},
    {"ReduceMin", 18},
    {"ReduceProd", 18},
    {"ReduceSumSquare", 18},
    {"Pad", 18},
    {"Pad", 19},
    {"Resize", 18},
    {"Resize", 19},
    {"ScatterElements", 18},
    {"ScatterND", 18},
    {"Split", 18},
    {"LpPool", 18},
    {"AveragePool", 19},
    {"DequantizeLinear", 19},
    {"DequantizeLinear", 21},
    {"DequantizeLinear", 23},
    {"QuantizeLinear", 19},
    {"QuantizeLinear", 21},
    {"QuantizeLinear", 23},
    {"GridSample", 20},
    {"DFT", 20},
    {"GroupNormalization", 21},
    {"Attention", 24},
    {"TopK", 24},
};

// Operators added after 17, with their first version.
constexpr Change kAdded[] = {
    {"BitwiseAnd", 18},
    {"BitwiseOr", 18},
    {"BitwiseXor", 18},
    {"BitwiseNot", 18},
    {"CenterCropPad", 18},
    {"Col2Im", 18},
    {"GroupNormalization", 18},
    {"Mish", 18},
    {"OptionalGetElement", 18},
    {"OptionalHasElement", 18},
    {"DeformConv", 19},
    {"AffineGrid", 20},
    {"Gelu", 20},
    {"ImageDecoder", 20},
    {"RegexFullMatch", 20},
    {"StringConcat", 20},
    {"StringSplit", 20},
    {"Attention", 23},
    {"RMSNormalization", 23},
    {"RotaryEmbedding", 23},
    {"Swish", 24},
    {"TensorScatter", 24},
    {"BitCast", 26},
};

}  // namespace

void check_restamp(const onnx::NodeProto &node, int64_t from, int64_t to) {
    if (to >= from) return;
    const std::string &op = node.op_type();
    int added = 0;
    for (const Change &c : kAdded)
        if (c.op == op) added = c.version;
    if (!added && !onnx::OpSchemaRegistry::Schema(op, 17, ""))
        throw Error(
            fmt::format("operator {} is not known to this lowering, so it cannot say "
                        "whether it means the same at opset {} as at opset {}",
                        op, to, from));
    if (added > to)
        throw Error(
            fmt::format("{} needs opset {}; lower to opset {} or higher", op, added, added));
    for (const Change &c : kChanged)
        if (c.op == op && c.version > to && c.version <= from)
            throw Error(
                fmt::format("{} changed meaning at opset {}, between the target opset {} "
                            "and the model's {}; lower to opset {} or higher",
                            op, c.version, to, from, c.version));
}

}  // namespace gguftool::lower::detail
