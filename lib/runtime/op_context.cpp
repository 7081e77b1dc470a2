// OpContext: inputs, outputs and typed attribute access.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

const char *attribute_type_name(int type) {
    switch (type) {
        case onnx::AttributeProto::FLOAT:
            return "FLOAT";
        case onnx::AttributeProto::INT:
            return "INT";
        case onnx::AttributeProto::STRING:
            return "STRING";
        case onnx::AttributeProto::TENSOR:
            return "TENSOR";
        case onnx::AttributeProto::GRAPH:
            return "GRAPH";
        case onnx::AttributeProto::FLOATS:
            return "FLOATS";
        case onnx::AttributeProto::INTS:
            return "INTS";
        case onnx::AttributeProto::STRINGS:
            return "STRINGS";
        case onnx::AttributeProto::TENSORS:
            return "TENSORS";
        case onnx::AttributeProto::GRAPHS:
            return "GRAPHS";
        case onnx::AttributeProto::SPARSE_TENSOR:
            return "SPARSE_TENSOR";
        case onnx::AttributeProto::SPARSE_TENSORS:
            return "SPARSE_TENSORS";
        case onnx::AttributeProto::TYPE_PROTO:
            return "TYPE_PROTO";
        case onnx::AttributeProto::TYPE_PROTOS:
            return "TYPE_PROTOS";
        default:
            return "UNDEFINED";
    }
}

}  // namespace

OpContext::OpContext(const OpDef &def, const onnx::NodeProto &node, Backend &backend,
                     ExternalData &external, std::vector<const DeviceTensor *> inputs)
    : def_(def),
      node_(node),
      version_(def.since),
      backend_(backend),
      external_(external),
      inputs_(std::move(inputs)),
      outputs_(size_t(node.output_size())) {}

const DeviceTensor &OpContext::input(size_t i) const {
    if (!has_input(i)) throw Error(fmt::format("input {} is required but absent", i));
    return *inputs_[i];
}

Tensor OpContext::host_input(size_t i) {
    return backend_.download(input(i));
}

std::vector<int64_t> OpContext::index_list(size_t i, const char *what, bool int32_ok,
                                           bool scalar_ok) {
    const DeviceTensor &t = input(i);
    if (t.dtype != DataType::int64 && !(int32_ok && t.dtype == DataType::int32))
        throw Error(fmt::format("input {} must be {}, not {}", what,
                                int32_ok ? "int32 or int64" : "int64", dtype_name(t.dtype)));
    if (t.shape.size() > 1 || (t.shape.empty() && !scalar_ok))
        throw Error(fmt::format("input {} must be one-dimensional, not of shape {}", what,
                                shape_string(t.shape)));
    const Tensor host = host_input(i);
    if (t.dtype == DataType::int64) return host.to_vector<int64_t>();
    const std::vector<int32_t> v = host.to_vector<int32_t>();
    return {v.begin(), v.end()};
}

DataType OpContext::output_dtype() const {
    std::vector<DataType> types;
    for (const DeviceTensor *t : inputs_) types.push_back(t ? t->dtype : DataType::undefined);
    return def_.output_dtype(node_, types);
}

DeviceTensor &OpContext::allocate_output(DataType dtype, const Shape &shape) {
    outputs_.at(0) = backend_.allocate(dtype, shape);
    return outputs_[0];
}

void OpContext::run_kernel(const Attributes &attributes) {
    run_kernel(inputs_, outputs_, attributes);
}

void OpContext::run_kernel(std::span<const DeviceTensor *const> inputs,
                           std::span<DeviceTensor> outputs, const Attributes &attributes) {
    const OpKernel *kernel = backend_.kernel(def_.op_type);
    if (!kernel)
        throw Error(fmt::format("the {} backend has no {} kernel", backend_.name(), def_.op_type));
    (*kernel)(KernelArgs{inputs, outputs, attributes});
}

const onnx::AttributeProto *find_attribute(const onnx::NodeProto &node, std::string_view name) {
    for (const onnx::AttributeProto &a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

DataType attribute_dtype(const onnx::NodeProto &node, std::string_view name, DataType absent) {
    const onnx::AttributeProto *a = find_attribute(node, name);
    if (!a) return absent;
    return a->type() == onnx::AttributeProto::INT
               ? dtype_from_onnx(a->i()).value_or(DataType::undefined)
               : DataType::undefined;
}

Attributes typed_attributes(const onnx::NodeProto &node) {
    Attributes out;
    for (const onnx::AttributeProto &a : node.attribute()) {
        switch (a.type()) {
            case onnx::AttributeProto::INT:
                out.set(a.name(), int64_t(a.i()));
                break;
            case onnx::AttributeProto::FLOAT:
                out.set(a.name(), double(a.f()));
                break;
            case onnx::AttributeProto::STRING:
                out.set(a.name(), a.s());
                break;
            case onnx::AttributeProto::INTS:
                out.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
                break;
            default:
                break;
        }
    }
    return out;
}

const onnx::AttributeProto *OpContext::attribute(std::string_view name) const {
    return find_attribute(node_, name);
}

const onnx::AttributeProto *OpContext::typed(std::string_view name,
                                             onnx::AttributeProto::AttributeType type) const {
    const onnx::AttributeProto *a = attribute(name);
    if (a && a->type() != type)
        throw Error(fmt::format("attribute '{}' must be of type {}, not {}", name,
                                attribute_type_name(type), attribute_type_name(a->type())));
    return a;
}

std::optional<int64_t> OpContext::attr_int(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::INT);
    if (!a) return std::nullopt;
    return a->i();
}

int64_t OpContext::attr_int(std::string_view name, int64_t fallback) const {
    return attr_int(name).value_or(fallback);
}

std::optional<std::vector<int64_t>> OpContext::attr_ints(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::INTS);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<float> OpContext::attr_float(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::FLOAT);
    if (!a) return std::nullopt;
    return a->f();
}

std::optional<std::vector<float>> OpContext::attr_floats(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::FLOATS);
    if (!a) return std::nullopt;
    return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::optional<std::string> OpContext::attr_string(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::STRING);
    if (!a) return std::nullopt;
    return a->s();
}

const onnx::TensorProto *OpContext::attr_tensor(std::string_view name) const {
    const onnx::AttributeProto *a = typed(name, onnx::AttributeProto::TENSOR);
    return a ? &a->t() : nullptr;
}

DataType OpContext::attr_dtype(std::string_view name) const {
    const std::optional<int64_t> to = attr_int(name);
    if (!to) throw Error(fmt::format("attribute '{}' is required", name));
    const std::optional<DataType> dtype =
        *to >= INT32_MIN && *to <= INT32_MAX ? dtype_from_onnx(int32_t(*to)) : std::nullopt;
    if (!dtype) throw Error(fmt::format("attribute '{}': unsupported target type {}", name, *to));
    return *dtype;
}

}  // namespace gguftool::runtime::detail
