// lower_model / lower_graph: every DequantizePacked-29 and Unpack-29 node of the main graph is
// replaced, in place (so the node order stays topological), by its standard-operator subgraph;
// every other node is kept after checking that the new opset reads it the same way.
#include <fmt/format.h>

#include "builder.hpp"
#include "gguftool/error.hpp"
#include "gguftool/lower.hpp"
#include "lowerings.hpp"
#include "opset_change.hpp"

namespace gguftool::lower {
namespace {

bool default_domain(const std::string &d) {
    return d.empty() || d == "ai.onnx";
}

void note(ValueTypes &types, const std::string &name, const onnx::TypeProto &t) {
    if (!t.has_tensor_type()) return;
    ValueType v;
    v.elem_type = t.tensor_type().elem_type();
    if (t.tensor_type().has_shape()) v.rank = t.tensor_type().shape().dim_size();
    types[name] = v;
}

ValueTypes declared_types(const onnx::GraphProto &g, const ValueTypes &known) {
    ValueTypes types = known;
    for (const auto &v : g.input()) note(types, v.name(), v.type());
    for (const auto &v : g.value_info()) note(types, v.name(), v.type());
    for (const auto &t : g.initializer()) types[t.name()] = {t.data_type(), t.dims_size()};
    return types;
}

std::string node_label(const onnx::NodeProto &n) {
    if (!n.name().empty()) return fmt::format("node '{}' ({})", n.name(), n.op_type());
    return fmt::format("{} node writing '{}'", n.op_type(), n.output_size() ? n.output(0) : "");
}

}  // namespace

Report lower_graph(onnx::GraphProto &graph, int64_t from_opset, int opset,
                   const ValueTypes &known) {
    if (opset < kMinOpset || opset > kMaxOpset)
        throw Error(
            fmt::format("target opset {} is outside [{}, {}]", opset, kMinOpset, kMaxOpset));
    const ValueTypes types = declared_types(graph, known);
    detail::GraphSink sink(graph);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph.mutable_node());
    for (onnx::NodeProto &node : nodes) {
        try {
            // A control-flow node's subgraphs (Loop's body) are lowered as graphs of their own:
            // their lookup tables and constants become the subgraph's initializers.
            for (onnx::AttributeProto &a : *node.mutable_attribute()) {
                if (a.type() == onnx::AttributeProto::GRAPH) {
                    const Report sub = lower_graph(*a.mutable_g(), from_opset, opset, known);
                    sink.report.dequantize_packed += sub.dequantize_packed;
                    sink.report.unpack += sub.unpack;
                    sink.report.nodes_added += sub.nodes_added;
                    sink.report.table_bytes += sub.table_bytes;
                    for (const auto &[op, n] : sub.op_count) sink.report.op_count[op] += n;
                }
            }
            if (!default_domain(node.domain())) {
                *graph.add_node() = std::move(node);
                continue;
            }
            const std::string owner =
                node.output_size() && !node.output(0).empty() ? node.output(0) : node.name();
            const bool opset29_op =
                node.op_type() == "DequantizePacked" || node.op_type() == "Unpack";
            if (opset29_op && from_opset < 29)
                throw Error(fmt::format("{} needs opset 29, but the model imports opset {}",
                                        node.op_type(), from_opset));
            if (node.op_type() == "DequantizePacked") {
                detail::LoweringBuilder b(sink, opset, owner);
                detail::lower_dequantize_packed(b, node);
                ++sink.report.dequantize_packed;
            } else if (node.op_type() == "Unpack") {
                if (node.input_size() < 1) throw Error("Unpack takes inputs X and count");
                auto it = types.find(node.input(0));
                if (it == types.end() || it->second.elem_type == 0)
                    throw Error(
                        fmt::format("the type of input X '{}' is not declared (give it a "
                                    "value_info), so it cannot be lowered",
                                    node.input(0)));
                const std::optional<DataType> x_type = dtype_from_onnx(it->second.elem_type);
                if (!x_type) throw Error("input X has an unknown element type");
                detail::LoweringBuilder b(sink, opset, owner);
                detail::lower_unpack(
                    b, node, *x_type,
                    it->second.rank >= 0 ? std::optional<int64_t>(it->second.rank) : std::nullopt);
                ++sink.report.unpack;
            } else {
                detail::check_restamp(node, from_opset, opset);
                *graph.add_node() = std::move(node);
            }
        } catch (const Error &e) {
            throw Error(fmt::format("{}: {}", node_label(node), e.problem()));
        }
    }
    return sink.report;
}

Report lower_model(onnx::ModelProto &model, const Options &options) {
    if (options.opset < kMinOpset || options.opset > kMaxOpset)
        throw Error(fmt::format("target opset {} is outside [{}, {}]", options.opset, kMinOpset,
                                kMaxOpset));
    onnx::OperatorSetIdProto *import = nullptr;
    for (auto &o : *model.mutable_opset_import())
        if (default_domain(o.domain())) import = &o;
    const int64_t from = import ? import->version() : 1;
    // A model below the target opset has nothing to lower (the opset-29 operators need 29) and
    // keeps its opset: raising it could change what its nodes mean.
    const int target = int(std::min<int64_t>(from, options.opset));
    Report r = lower_graph(*model.mutable_graph(), from, std::max(target, kMinOpset));
    r.opset = from < options.opset ? int(from) : options.opset;
    if (from < options.opset) return r;
    if (!import) {
        import = model.add_opset_import();
        import->set_domain("");
    }
    import->set_version(options.opset);
    // The IR version of the target opset: older runtimes refuse newer IR versions.
    model.set_ir_version(ir_version(options.opset));
    return r;
}

}  // namespace gguftool::lower
