// GraphBuilder: unique names, nodes, shared constants and graph outputs of an export Plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>

#include "gguftool/dims.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "initializer raw_data is written in host byte order, which must be little-endian");

// A constant initializer with its data inline.
void add_constant(onnx::GraphProto &g, const std::string &name, DataType data_type,
                  const std::vector<int64_t> &dims, const void *data, size_t bytes) {
    onnx::TensorProto &t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(onnx_number(data_type));
    for (int64_t d : dims) t.add_dims(d);
    if (bytes) t.set_raw_data(data, bytes);
}

}  // namespace

GraphBuilder::GraphBuilder(Plan &plan, const std::vector<const gguf::TensorInfo *> &tensors)
    : plan_(plan) {
    for (const gguf::TensorInfo *t : tensors) values_.emplace(t->name);
}

std::string GraphBuilder::name(std::string wanted) {
    if (values_.insert(wanted).second) return wanted;
    for (unsigned i = 2;; ++i) {
        std::string candidate = fmt::format("{}_{}", wanted, i);
        if (values_.insert(candidate).second) return candidate;
    }
}

onnx::NodeProto &GraphBuilder::node(std::string_view owner, const char *op,
                                    std::initializer_list<std::string> inputs,
                                    std::initializer_list<std::string> outputs) {
    onnx::NodeProto &n = *(subgraph ? subgraph : &plan_.graph)->add_node();
    n.set_op_type(op);
    std::string node_name = fmt::format("{}:{}", owner, op);
    for (unsigned i = 2; !nodes_.insert(node_name).second; ++i)
        node_name = fmt::format("{}:{}_{}", owner, op, i);
    n.set_name(node_name);
    for (const std::string &in : inputs) n.add_input(in);
    for (const std::string &out : outputs) n.add_output(out);
    return n;
}

std::string GraphBuilder::int64_scalar(int64_t v) {
    const std::string key = fmt::format("int64:{}", v);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    const std::string n = name(fmt::format("gguftool:int64_{}", v));
    add_constant(plan_.graph, n, DataType::int64, {}, &v, sizeof v);
    return constants_[key] = n;
}

std::string GraphBuilder::int64_vector(std::string_view label, const std::vector<int64_t> &v) {
    const std::string joined = fmt::format("{}", fmt::join(v, "x"));
    const std::string key = fmt::format("{}:{}", label, joined);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    const std::string n = name(fmt::format("gguftool:{}_{}", label, joined));
    add_constant(plan_.graph, n, DataType::int64, {static_cast<int64_t>(v.size())}, v.data(),
                 v.size() * sizeof(int64_t));
    return constants_[key] = n;
}

std::string GraphBuilder::float_scalar(float v) {
    const std::string key = fmt::format("float:{}", v);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    const std::string n = name(fmt::format("gguftool:float_{}", v));
    add_constant(plan_.graph, n, DataType::float32, {}, &v, sizeof v);
    return constants_[key] = n;
}

std::string GraphBuilder::float_table(std::string_view key, const std::vector<float> &values) {
    const std::string k = fmt::format("table:{}", key);
    auto it = constants_.find(k);
    if (it != constants_.end()) return it->second;
    const std::string n = name(fmt::format("gguftool:{}", key));
    add_constant(plan_.graph, n, DataType::float32, {static_cast<int64_t>(values.size())},
                 values.data(), values.size() * sizeof(float));
    return constants_[k] = n;
}

std::string GraphBuilder::payload(std::string wanted, DataType data_type, std::vector<int64_t> dims,
                                  uint64_t bytes, std::function<void(Sink &)> write) {
    std::string n = name(std::move(wanted));
    plan_.payloads.push_back({n, data_type, std::move(dims), bytes, std::move(write)});
    return n;
}

void GraphBuilder::output(std::string_view name, DataType data_type,
                          const std::vector<int64_t> &dims) {
    if (!declare_outputs) return;
    onnx::ValueInfoProto &v = *plan_.graph.add_output();
    v.set_name(std::string(name));
    onnx::TypeProto_Tensor &t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx_number(data_type));
    onnx::TensorShapeProto &shape = *t.mutable_shape();
    for (int64_t d : dims) shape.add_dim()->set_dim_value(d);
}

void set_attribute(onnx::NodeProto &n, const char *name, int64_t v) {
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
}

void set_attribute(onnx::NodeProto &n, const char *name, const std::string &v) {
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(v);
}

void set_attribute(onnx::NodeProto &n, const char *name, const std::vector<int64_t> &v) {
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
}

std::vector<int64_t> onnx_dims(const gguf::TensorInfo &t) {
    return onnx_shape(std::span(t.ne).first(t.n_dims));
}

}  // namespace gguftool::onnx_export::detail
