// Loading a model: parse, resolve the opset and every node's operator, load the initializers
// (external data mapped), and order the nodes so each runs after its inputs exist.
#include <fmt/format.h>

#include <climits>
#include <filesystem>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "gguftool/mapped_file.hpp"
#include "model_impl.hpp"

namespace gguftool::runtime {
namespace {

using Impl = Model::Impl;

std::string node_name(const onnx::NodeProto &n, size_t index) {
    return n.name().empty() ? fmt::format("#{}", index) : n.name();
}

std::string node_label(const onnx::NodeProto &n, size_t index, int version) {
    const std::string op = version > 0 ? fmt::format("{}-{}", n.op_type(), version) : n.op_type();
    if (!n.name().empty()) return fmt::format("node \"{}\" ({})", n.name(), op);
    if (n.output_size() > 0 && !n.output(0).empty())
        return fmt::format("node #{} ({}, output \"{}\")", index, op, n.output(0));
    return fmt::format("node #{} ({})", index, op);
}

ValueInfo value_info(const onnx::ValueInfoProto &v, const std::string &where, const char *kind) {
    ValueInfo info;
    info.name = v.name();
    if (!v.has_type()) return info;
    if (!v.type().has_tensor_type())
        throw Error(where, std::nullopt,
                    fmt::format("graph {} \"{}\" is not a tensor (sequences, maps and optionals "
                                "are not supported)",
                                kind, v.name()));
    const onnx::TypeProto::Tensor &tt = v.type().tensor_type();
    if (tt.elem_type() != 0) {
        const std::optional<DataType> d = dtype_from_onnx(tt.elem_type());
        if (!d)
            throw Error(where, std::nullopt,
                        fmt::format("graph {} \"{}\" has unsupported element type {}", kind,
                                    v.name(), tt.elem_type()));
        info.dtype = *d;
    }
    if (tt.has_shape()) {
        info.has_shape = true;
        for (const onnx::TensorShapeProto::Dimension &d : tt.shape().dim())
            info.dims.push_back(d.has_dim_value() ? std::optional<int64_t>(d.dim_value())
                                                  : std::nullopt);
    }
    return info;
}

// The default domain's version from opset_import ("" and "ai.onnx" are the same domain).
int64_t default_opset(const onnx::ModelProto &m, const std::string &where) {
    int64_t version = 0;
    for (const onnx::OperatorSetIdProto &o : m.opset_import()) {
        if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
        if (version != 0 && version != o.version())
            throw Error(where, std::nullopt,
                        fmt::format("opset_import gives the default domain twice, as {} and {}",
                                    version, o.version()));
        version = o.version();
    }
    return version;
}

void resolve_nodes(Impl &impl, const onnx::GraphProto &g, std::vector<Impl::Node> &nodes) {
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto &n = g.node(i);
        Impl::Node node;
        node.proto = &n;
        node.name = node_name(n, size_t(i));
        const auto fail = [&](const std::string &what, int version = 0) {
            throw Error(impl.name, std::nullopt,
                        fmt::format("{}: {}", node_label(n, size_t(i), version), what));
        };
        const bool contrib = n.domain() == detail::kContribDomain;
        if (!n.domain().empty() && n.domain() != "ai.onnx" && !contrib)
            fail(
                fmt::format("unsupported operator domain \"{}\" (only the default ONNX domain "
                            "and com.microsoft are supported)",
                            n.domain()));
        int64_t opset = impl.opset;
        if (contrib) {
            opset = impl.contrib_opset;
            if (opset <= 0) fail("the model imports no version of the com.microsoft domain");
        } else if (opset <= 0) {
            fail("the model imports no version of the default ONNX domain");
        }
        std::string why;
        node.op = detail::find_op(contrib ? detail::kContribDomain : std::string_view(),
                                  n.op_type(), opset, &why);
        if (!node.op) fail(why);
        node.version = node.op->onnx_version(opset);
        node.label = node_label(n, size_t(i), node.version);
        const detail::OpDef &op = *node.op;
        if (n.input_size() < op.inputs.min || n.input_size() > op.inputs.max)
            fail(op.inputs.min == op.inputs.max
                     ? fmt::format("has {} inputs, needs {}", n.input_size(), op.inputs.min)
                     : fmt::format("has {} inputs, needs {} to {}", n.input_size(), op.inputs.min,
                                   op.inputs.max),
                 node.version);
        if (n.output_size() < op.outputs.min || n.output_size() > op.outputs.max)
            fail(fmt::format("has {} outputs, needs {}", n.output_size(), op.outputs.min),
                 node.version);
        for (int k = 0; k < op.inputs.min; ++k)
            if (n.input(k).empty())
                fail(fmt::format("required input {} is empty", k), node.version);
        for (const std::string &o : n.output())
            if (o.empty()) fail("has an output with an empty name", node.version);
        std::set<std::string> seen;
        for (const onnx::AttributeProto &a : n.attribute()) {
            if (std::find(op.attributes.begin(), op.attributes.end(), a.name()) ==
                op.attributes.end())
                fail(fmt::format("unknown attribute '{}'", a.name()), node.version);
            if (!seen.insert(a.name()).second)
                fail(fmt::format("attribute '{}' is given twice", a.name()), node.version);
        }
        nodes.push_back(std::move(node));
    }
}

// Kahn's algorithm, keeping the file order among ready nodes. Reports the first node with an
// input nothing produces, or a node on a cycle.
std::vector<Impl::Node> execution_order(const Impl &impl, std::vector<Impl::Node> nodes,
                                        const std::unordered_set<std::string> &available) {
    std::unordered_map<std::string, size_t> producer;
    for (size_t i = 0; i < nodes.size(); ++i)
        for (const std::string &o : nodes[i].proto->output()) {
            if (available.count(o) || !producer.emplace(o, i).second)
                throw Error(impl.name, std::nullopt,
                            fmt::format("{}: output \"{}\" is already produced by another node, "
                                        "an initializer or a graph input",
                                        nodes[i].label, o));
        }
    std::vector<size_t> waiting(nodes.size(), 0);
    std::vector<std::vector<size_t>> consumers(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        std::set<size_t> deps;
        for (const std::string &in : nodes[i].proto->input()) {
            if (in.empty() || available.count(in)) continue;
            const auto it = producer.find(in);
            if (it == producer.end())
                throw Error(impl.name, std::nullopt,
                            fmt::format("{}: input \"{}\" is not a graph input, an initializer or "
                                        "any node's output",
                                        nodes[i].label, in));
            deps.insert(it->second);
        }
        waiting[i] = deps.size();
        for (size_t d : deps) consumers[d].push_back(i);
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (waiting[i] == 0) ready.push(i);
    std::vector<Impl::Node> order;
    std::vector<bool> done(nodes.size(), false);
    while (!ready.empty()) {
        const size_t i = ready.top();
        ready.pop();
        done[i] = true;
        order.push_back(nodes[i]);
        for (size_t c : consumers[i])
            if (--waiting[c] == 0) ready.push(c);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        if (!done[i])
            throw Error(impl.name, std::nullopt,
                        fmt::format("{}: the graph has a cycle through this node", nodes[i].label));
    return order;
}

std::shared_ptr<const Impl> build(std::shared_ptr<const onnx::ModelProto> proto,
                                  std::string base_dir, std::string name) {
    auto impl = std::make_shared<Impl>();
    impl->name = std::move(name);
    impl->base_dir = std::move(base_dir);
    impl->proto = proto;
    const std::string &where = impl->name;
    if (!proto->has_graph()) throw Error(where, std::nullopt, "the model has no graph");
    const onnx::GraphProto &g = proto->graph();
    if (g.sparse_initializer_size() > 0)
        throw Error(where, std::nullopt, "sparse initializers are not supported");
    impl->opset = default_opset(*proto, where);
    for (const onnx::OperatorSetIdProto &o : proto->opset_import())
        if (o.domain() == detail::kContribDomain) impl->contrib_opset = o.version();

    std::unordered_set<std::string> available;
    detail::ExternalData external(impl->base_dir);
    for (const onnx::TensorProto &t : g.initializer()) {
        if (t.name().empty()) throw Error(where, std::nullopt, "an initializer has no name");
        if (!available.insert(t.name()).second)
            throw Error(where, std::nullopt,
                        fmt::format("initializer \"{}\" is defined twice", t.name()));
        impl->initializers.emplace_back(
            t.name(),
            detail::tensor_from_proto(
                t, external, fmt::format("{}: initializer \"{}\"", where, t.name()), proto));
    }
    const std::unordered_set<std::string> initializer_names = available;
    std::unordered_set<std::string> input_names;
    for (const onnx::ValueInfoProto &v : g.input()) {
        if (v.name().empty()) throw Error(where, std::nullopt, "a graph input has no name");
        if (!input_names.insert(v.name()).second)
            throw Error(where, std::nullopt,
                        fmt::format("graph input \"{}\" is declared twice", v.name()));
        ValueInfo info = value_info(v, where, "input");
        if (initializer_names.count(v.name())) {
            impl->overridable.push_back(std::move(info));
        } else {
            available.insert(v.name());
            impl->inputs.push_back(std::move(info));
        }
    }
    std::vector<Impl::Node> nodes;
    resolve_nodes(*impl, g, nodes);
    impl->order = execution_order(*impl, std::move(nodes), available);

    std::unordered_set<std::string> produced = available;
    for (const Impl::Node &n : impl->order)
        for (const std::string &o : n.proto->output()) produced.insert(o);
    for (const onnx::ValueInfoProto &v : g.output()) {
        if (!produced.count(v.name()))
            throw Error(where, std::nullopt,
                        fmt::format("graph output \"{}\" is not produced by any node, initializer "
                                    "or graph input",
                                    v.name()));
        impl->outputs.push_back(value_info(v, where, "output"));
    }
    return impl;
}

std::string directory_of(const std::string &path) {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    return dir.empty() ? "." : dir.string();
}

}  // namespace

Model Model::load(const std::string &path) {
    const std::shared_ptr<const MappedFile> file = MappedFile::open(path);
    return from_bytes(file->bytes(), directory_of(path), path);
}

Model Model::from_bytes(std::span<const uint8_t> bytes, const std::string &base_dir,
                        const std::string &name) {
    if (bytes.size() > size_t(INT_MAX))
        throw Error(name, std::nullopt,
                    fmt::format("the file is {} bytes; protobuf cannot parse more than 2 GiB "
                                "(large models keep their tensors in external data)",
                                bytes.size()));
    auto proto = std::make_shared<onnx::ModelProto>();
    if (!proto->ParseFromArray(bytes.data(), int(bytes.size())))
        throw Error(name, std::nullopt, "not a valid ONNX model (protobuf parsing failed)");
    Model m;
    m.impl_ = build(std::move(proto), base_dir, name);
    return m;
}

Model Model::from_proto(const onnx::ModelProto &proto, const std::string &base_dir,
                        const std::string &name) {
    Model m;
    m.impl_ = build(std::make_shared<onnx::ModelProto>(proto), base_dir, name);
    return m;
}

const std::string &Model::name() const {
    return impl_->name;
}
const std::vector<ValueInfo> &Model::inputs() const {
    return impl_->inputs;
}
const std::vector<ValueInfo> &Model::outputs() const {
    return impl_->outputs;
}
int64_t Model::opset() const {
    return impl_->opset;
}
size_t Model::node_count() const {
    return impl_->order.size();
}

}  // namespace gguftool::runtime
