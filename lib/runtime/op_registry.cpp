// The operator table: every (domain, op_type, version) the runtime executes, joined from the rows
// each op_*.cpp file keeps beside its run functions; supported_operators() lists it.
//
// A row's `since` is the first opset version with its semantics; `same_as_later` lists the later
// ONNX versions that only widened the type lists (from ONNX's operator changelog, up to opset 27:
// BitCast is opset 26's, Range-27 added float16/bfloat16 with stash_type; DequantizePacked and
// Unpack are opset 29's), so a node is named as ONNX names it. A model at opset V runs the newest
// row with since <= V.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "op.hpp"

namespace gguftool::runtime::detail {

std::span<const OpDef> op_table() {
    static const std::vector<OpDef> ops = [] {
        std::vector<OpDef> all;
        for (const std::span<const OpDef> rows :
             {compute_ops(), dequantize_packed_ops(), elementwise_ops(), layout_ops(), linalg_ops(),
              one_hot_ops(), range_ops(), reduce_ops(), shape_ops(), unpack_ops(), contrib_ops()})
            all.insert(all.end(), rows.begin(), rows.end());
        return all;
    }();
    return ops;
}

DataType same_as_input0(const onnx::NodeProto &, std::span<const DataType> inputs) {
    return inputs.empty() ? DataType::undefined : inputs[0];
}
DataType bool_output(const onnx::NodeProto &, std::span<const DataType>) {
    return DataType::bool_;
}
DataType int64_output(const onnx::NodeProto &, std::span<const DataType>) {
    return DataType::int64;
}
DataType uint8_output(const onnx::NodeProto &, std::span<const DataType>) {
    return DataType::uint8;
}
DataType to_attribute_dtype(const onnx::NodeProto &node, std::span<const DataType>) {
    return attribute_dtype(node, "to", DataType::undefined);
}

const OpDef *find_op(std::string_view domain, std::string_view op_type, int64_t opset,
                     std::string *why) {
    const OpDef *best = nullptr;
    int oldest = std::numeric_limits<int>::max();
    for (const OpDef &d : op_table()) {
        if (d.op_type != op_type || d.domain != domain) continue;
        oldest = std::min(oldest, d.since);
        if (d.since <= opset && (!best || d.since > best->since)) best = &d;
    }
    const std::string name =
        domain.empty() ? std::string(op_type) : fmt::format("{}.{}", domain, op_type);
    if (oldest == std::numeric_limits<int>::max()) {
        *why = fmt::format("unsupported operator {}", name);
        return nullptr;
    }
    const int64_t newest = domain.empty() ? kMaxOpset : kMaxContribOpset;
    if (opset > newest) {
        *why = fmt::format(
            "unsupported opset {} for {} (this runtime knows the {} domain up "
            "to opset {})",
            opset, name, domain.empty() ? "default" : std::string(domain), newest);
        return nullptr;
    }
    if (!best) {
        *why = fmt::format("unsupported opset {} for {} (supported from opset {})", opset, name,
                           oldest);
        return nullptr;
    }
    return best;
}

}  // namespace gguftool::runtime::detail

namespace gguftool::runtime {

std::vector<OperatorVersions> supported_operators() {
    std::vector<OperatorVersions> out;
    for (const detail::OpDef &d : detail::op_table()) {
        const auto same = [&](const OperatorVersions &o) {
            return o.domain == d.domain && o.op_type == d.op_type;
        };
        auto it = std::find_if(out.begin(), out.end(), same);
        if (it == out.end())
            it = out.insert(out.end(), {std::string(d.domain), std::string(d.op_type), {}});
        it->versions.insert(std::upper_bound(it->versions.begin(), it->versions.end(), d.since),
                            d.since);
    }
    return out;
}

}  // namespace gguftool::runtime
