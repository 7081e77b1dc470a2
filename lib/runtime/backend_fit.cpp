// fit_to_backend: one OpQuery per node, then lowering when a node asks for it. gguftool lower
// rewrites every DequantizePacked and Unpack node of the graph (at lower::kMaxOpset), so after
// it the backend is asked again about the nodes that now exist; a node it still wants lowered is
// refused like one it cannot run. With a fallback backend, a node the backend cannot run is asked
// about there and placed on it; only what neither runs is refused.
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

// The backend's answer for one node.
Capability answer(const Backend &backend, const Node &node, NodeDtypes types) {
    return backend.query(op_query(node, std::move(types)));
}

std::vector<Capability> ask(const Model &model, const Backend &backend,
                            const std::vector<NodeDtypes> &types) {
    const Model::Impl &m = model.impl();
    std::vector<Capability> answers;
    answers.reserve(m.order.size());
    for (size_t i = 0; i < m.order.size(); ++i)
        answers.push_back(answer(backend, m.order[i], types[i]));
    return answers;
}

std::string relowered(const Node &node) {
    return fmt::format(
        "{}: still asked to be lowered after the lowering (gguftool lower rewrites "
        "DequantizePacked and Unpack only)",
        node.label);
}

// The one Error for every node refused: `lines` (one per node), after `what` ("the cpu backend
// cannot run").
void refuse(const Model &model, std::vector<std::string> lines, const std::string &what,
            bool again) {
    if (lines.empty()) return;
    const size_t n = lines.size();
    if (n > kListedRefusals) {
        lines.resize(kListedRefusals);
        lines.push_back(fmt::format("and {} more", n - kListedRefusals));
    }
    throw Error(model.impl().name, std::nullopt,
                fmt::format("{} {} {}{}:\n  {}", what, n, n == 1 ? "node" : "nodes",
                            again ? " of the lowered graph" : "", fmt::join(lines, "\n  ")));
}

// Without a fallback: every node the backend cannot run (`again`: answers after the lowering,
// where a node still asking to be lowered is refused too).
void refuse(const Model &model, const std::vector<Capability> &answers, const Backend &backend,
            bool again) {
    const Model::Impl &m = model.impl();
    std::vector<std::string> lines;
    for (size_t i = 0; i < answers.size(); ++i) {
        if (answers[i].kind == Kind::unsupported)
            lines.push_back(fmt::format("{}: {}", m.order[i].label, answers[i].reason));
        else if (answers[i].kind == Kind::lowered && again)
            lines.push_back(relowered(m.order[i]));
    }
    refuse(model, std::move(lines), fmt::format("the {} backend cannot run", backend.name()),
           again);
}

// With a fallback: each node the backend cannot run is asked about on the fallback and placed
// there when it runs it natively; the nodes neither runs (and any still asking to be lowered) are
// refused, with both answers.
void place(const Model &model, const std::vector<Capability> &answers,
           const std::vector<NodeDtypes> &types, const Backend &backend, const Backend &fallback,
           bool again, FittedModel &fitted) {
    const Model::Impl &m = model.impl();
    std::vector<std::string> lines;
    for (size_t i = 0; i < answers.size(); ++i) {
        if (answers[i].kind == Kind::lowered) {
            lines.push_back(relowered(m.order[i]));
            continue;
        }
        if (answers[i].kind != Kind::unsupported) continue;
        const Capability there = answer(fallback, m.order[i], types[i]);
        if (there.kind != Kind::native) {
            lines.push_back(fmt::format(
                "{}: {}; the {} backend: {}", m.order[i].label, answers[i].reason, fallback.name(),
                there.kind == Kind::lowered ? "asks to have it lowered" : there.reason));
            continue;
        }
        if (fitted.on.empty()) {
            fitted.on.assign(answers.size(), 0);
            fitted.reasons.assign(answers.size(), std::string());
        }
        fitted.on[i] = 1;
        fitted.reasons[i] = answers[i].reason;
    }
    refuse(model, std::move(lines),
           fmt::format("neither the {} backend nor the {} backend can run", backend.name(),
                       fallback.name()),
           again);
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

FittedModel fit_to_backend(Model model, const Backend &backend, const Backend *fallback,
                           bool lower_nodes) {
    std::vector<NodeDtypes> types = infer_dtypes(model.impl());
    std::vector<Capability> answers = ask(model, backend, types);
    if (!lower_nodes)
        for (size_t i = 0; i < answers.size(); ++i)
            if (answers[i].kind == Kind::lowered)
                answers[i] = {Kind::unsupported,
                              fmt::format("the {} backend runs {} only lowered, and this graph's "
                                          "weight products are fused",
                                          backend.name(), model.impl().order[i].proto->op_type())};
    if (!fallback) refuse(model, answers, backend, false);
    const bool lower = std::any_of(answers.begin(), answers.end(),
                                   [](const Capability &c) { return c.kind == Kind::lowered; });
    if (!lower) {
        FittedModel fitted{std::move(model), {}, {}, {}};
        if (fallback) place(fitted.model, answers, types, backend, *fallback, false, fitted);
        return fitted;
    }

    const Model::Impl &m = model.impl();
    onnx::ModelProto copy = *m.proto;
    try {
        lower::lower_model(copy, {gguftool::lower::kMaxOpset});
    } catch (const Error &e) {
        throw Error(m.name, std::nullopt,
                    fmt::format("lowering for the {} backend: {}", backend.name(), e.problem()));
    }
    Model lowered = Model::from_proto(copy, m.base_dir, m.name);
    types = infer_dtypes(lowered.impl());
    answers = ask(lowered, backend, types);
    if (!fallback) refuse(lowered, answers, backend, true);
    std::vector<std::string> origins = lowered_origins(model, lowered);
    FittedModel fitted{std::move(lowered), std::move(origins), {}, {}};
    if (fallback) place(fitted.model, answers, types, backend, *fallback, true, fitted);
    return fitted;
}

}  // namespace gguftool::runtime::detail
