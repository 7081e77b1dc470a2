// fit_to_backend: one OpQuery per node, then lowering when a node asks for it. gguftool lower
// rewrites every DequantizePacked and Unpack node of the graph (at lower::kMaxOpset), so after
// it the backend is asked again about the nodes that now exist; a node it still wants lowered is
// refused like one it cannot run.
#include "backend_fit.hpp"

#include <fmt/format.h>

#include <unordered_map>

#include "dtype_inference.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/opset29.hpp"

namespace gguftool::runtime::detail {
namespace {

using Node = Model::Impl::Node;
using Kind = Capability::Kind;

// How many refused nodes an error lists before "and N more".
constexpr size_t kListedRefusals = 10;

// DequantizePacked's format, as its operator reads it (opset29::format_type); nullopt when the
// attribute is missing or names no format (the node reports that when it runs).
std::optional<GgmlType> dequantize_format(const onnx::NodeProto &n) {
    const onnx::AttributeProto *a = find_attribute(n, "format");
    if (!a || a->type() != onnx::AttributeProto::STRING) return std::nullopt;
    return opset29::format_type(a->s());
}

OpQuery op_query(const Node &node, NodeDtypes types) {
    const onnx::NodeProto &n = *node.proto;
    OpQuery q;
    q.op_type = n.op_type();
    q.version = node.version;
    q.inputs = std::move(types.inputs);
    q.outputs = std::move(types.outputs);
    if (q.op_type == "DequantizePacked") q.format = dequantize_format(n);
    q.attributes = typed_attributes(n);
    return q;
}

// The backend's answer for one node: an operator that runs a registered kernel the backend does
// not have is unsupported without asking.
Capability answer(const Backend &backend, const Node &node, NodeDtypes types) {
    if (node.op->kernel && !backend.kernel(node.op->op_type))
        return {Kind::unsupported,
                fmt::format("the {} backend has no {}", backend.name(), node.op->op_type)};
    return backend.query(op_query(node, std::move(types)));
}

std::vector<Capability> ask(const Model &model, const Backend &backend) {
    const Model::Impl &m = model.impl();
    std::vector<NodeDtypes> types = infer_dtypes(m);
    std::vector<Capability> answers;
    answers.reserve(m.order.size());
    for (size_t i = 0; i < m.order.size(); ++i)
        answers.push_back(answer(backend, m.order[i], std::move(types[i])));
    return answers;
}

// The one Error for every node refused (`again`: answers after the lowering).
void refuse(const Model &model, const std::vector<Capability> &answers, const Backend &backend,
            bool again) {
    const Model::Impl &m = model.impl();
    std::vector<std::string> lines;
    for (size_t i = 0; i < answers.size(); ++i) {
        if (answers[i].kind == Kind::unsupported)
            lines.push_back(fmt::format("{}: {}", m.order[i].label, answers[i].reason));
        else if (answers[i].kind == Kind::lowered && again)
            lines.push_back(
                fmt::format("{}: still asked to be lowered after the lowering (gguftool "
                            "lower rewrites DequantizePacked and Unpack only)",
                            m.order[i].label));
    }
    if (lines.empty()) return;
    const size_t n = lines.size();
    if (n > kListedRefusals) {
        lines.resize(kListedRefusals);
        lines.push_back(fmt::format("and {} more", n - kListedRefusals));
    }
    throw Error(m.name, std::nullopt,
                fmt::format("the {} backend cannot run {} {}{}:\n  {}", backend.name(), n,
                            n == 1 ? "node" : "nodes", again ? " of the lowered graph" : "",
                            fmt::join(lines, "\n  ")));
}

// NodeProfile::lowered_from of a node that gets lowered: "\"name\" (DequantizePacked-29, q4_K)".
std::string lowered_label(const Node &node) {
    const onnx::NodeProto &n = *node.proto;
    std::string what = fmt::format("{}-{}", n.op_type(), node.version);
    if (n.op_type() == "DequantizePacked")
        if (const std::optional<GgmlType> f = dequantize_format(n))
            what += fmt::format(", {}", type_name(*f));
    const std::string name = n.name().empty() ? node.name : fmt::format("\"{}\"", n.name());
    return fmt::format("{} ({})", name, what);
}

// The lowering names each node it writes "<owner>/lower/<op>..." after the node it replaces
// (lib/lower/builder.cpp; the owner is that node's first output, or its name): per node of
// `lowered`, the label of the original node it came from.
std::vector<std::string> lowered_origins(const Model &original, const Model &lowered) {
    std::unordered_map<std::string, std::string> by_owner;
    for (const Node &node : original.impl().order) {
        const onnx::NodeProto &n = *node.proto;
        if (n.op_type() != "DequantizePacked" && n.op_type() != "Unpack") continue;
        const std::string label = lowered_label(node);
        if (!n.name().empty()) by_owner.emplace(n.name(), label);
        if (n.output_size() > 0 && !n.output(0).empty()) by_owner[n.output(0)] = label;
    }
    std::vector<std::string> origins;
    for (const Node &node : lowered.impl().order) {
        const std::string &name = node.proto->name();
        const size_t at = name.rfind("/lower/");
        const auto it =
            at == std::string::npos ? by_owner.end() : by_owner.find(name.substr(0, at));
        origins.push_back(it == by_owner.end() ? std::string() : it->second);
    }
    return origins;
}

}  // namespace

FittedModel fit_to_backend(Model model, const Backend &backend) {
    const std::vector<Capability> answers = ask(model, backend);
    refuse(model, answers, backend, false);
    const bool lower = std::any_of(answers.begin(), answers.end(),
                                   [](const Capability &c) { return c.kind == Kind::lowered; });
    if (!lower) return {std::move(model), {}};

    const Model::Impl &m = model.impl();
    onnx::ModelProto copy = *m.proto;
    try {
        lower::lower_model(copy, {gguftool::lower::kMaxOpset});
    } catch (const Error &e) {
        throw Error(m.name, std::nullopt,
                    fmt::format("lowering for the {} backend: {}", backend.name(), e.problem()));
    }
    Model lowered = Model::from_proto(copy, m.base_dir, m.name);
    refuse(lowered, ask(lowered, backend), backend, true);
    std::vector<std::string> origins = lowered_origins(model, lowered);
    return {std::move(lowered), std::move(origins)};
}

}  // namespace gguftool::runtime::detail
