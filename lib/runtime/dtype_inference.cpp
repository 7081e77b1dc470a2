// Element-type inference: the graph is walked in execution order, each node's output type taken
// from the one rule of its operator below. The rules only name the type an operator produces; the
// operators themselves (op_*.cpp) check that their inputs' types are valid when they run.
#include "dtype_inference.hpp"

#include <string_view>
#include <unordered_map>

namespace gguftool::runtime::detail {
namespace {

using Node = Model::Impl::Node;

DataType onnx_dtype(int64_t number) {
    return dtype_from_onnx(number).value_or(DataType::undefined);
}

DataType input_dtype(const std::vector<DataType> &in, size_t k) {
    return k < in.size() ? in[k] : DataType::undefined;
}

// An INT attribute naming an element type; `absent` when the node does not have it.
DataType dtype_attribute(const onnx::NodeProto &n, std::string_view name, DataType absent) {
    const onnx::AttributeProto *a = find_attribute(n, name);
    if (!a) return absent;
    return a->type() == onnx::AttributeProto::INT ? onnx_dtype(a->i()) : DataType::undefined;
}

// Constant: the type of whichever value attribute it has (strings and sparse values: unknown).
DataType constant_dtype(const onnx::NodeProto &n) {
    for (const onnx::AttributeProto &a : n.attribute()) {
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR)
            return onnx_dtype(a.t().data_type());
        if (a.name() == "value_float" || a.name() == "value_floats") return DataType::float32;
        if (a.name() == "value_int" || a.name() == "value_ints") return DataType::int64;
    }
    return DataType::undefined;
}

using OutputRule = DataType (*)(const onnx::NodeProto &n, const std::vector<DataType> &in);

struct OutputDtypeRow {
    std::string_view op_type;
    OutputRule rule;
};

// The type of output 0 per operator; an operator not listed gives its input 0's type (Add, Gather,
// Range, Reshape, Concat, Min, Slice, ...).
constexpr OutputDtypeRow kOutputDtype[] = {
    {"Cast",
     [](const onnx::NodeProto &n, const std::vector<DataType> &) {
         return dtype_attribute(n, "to", DataType::undefined);
     }},
    {"BitCast",
     [](const onnx::NodeProto &n, const std::vector<DataType> &) {
         return dtype_attribute(n, "to", DataType::undefined);
     }},
    {"Equal",
     [](const onnx::NodeProto &, const std::vector<DataType> &) { return DataType::bool_; }},
    {"Shape",
     [](const onnx::NodeProto &, const std::vector<DataType> &) { return DataType::int64; }},
    {"DequantizePacked",
     [](const onnx::NodeProto &n, const std::vector<DataType> &) {
         return dtype_attribute(n, "output_dtype", DataType::float32);
     }},
    {"Unpack",
     [](const onnx::NodeProto &, const std::vector<DataType> &) { return DataType::uint8; }},
    {"OneHot",
     [](const onnx::NodeProto &, const std::vector<DataType> &in) {
         return input_dtype(in, 2);  // the values' type
     }},
    {"Where",
     [](const onnx::NodeProto &, const std::vector<DataType> &in) {
         return input_dtype(in, 1);  // x's type
     }},
    {"Constant",
     [](const onnx::NodeProto &n, const std::vector<DataType> &) { return constant_dtype(n); }},
};

DataType output_dtype(const onnx::NodeProto &n, const std::vector<DataType> &in) {
    for (const OutputDtypeRow &row : kOutputDtype)
        if (row.op_type == n.op_type()) return row.rule(n, in);
    return input_dtype(in, 0);
}

}  // namespace

std::vector<NodeDtypes> infer_dtypes(const Model::Impl &m) {
    std::unordered_map<std::string, DataType> known;
    // An initializer's own type (a graph input of the same name may override it at run time, but
    // only with the type it declares, and the initializer is what runs unless it is fed).
    for (const auto &[name, tensor] : m.initializers) known[name] = tensor.dtype();
    for (const ValueInfo &v : m.inputs) known[v.name] = v.dtype;

    std::vector<NodeDtypes> types;
    types.reserve(m.order.size());
    for (const Node &node : m.order) {
        const onnx::NodeProto &n = *node.proto;
        NodeDtypes t;
        for (const std::string &in : n.input()) {
            const auto it = in.empty() ? known.end() : known.find(in);
            t.inputs.push_back(it == known.end() ? DataType::undefined : it->second);
        }
        // Every operator here has one output (op_registry.cpp).
        t.outputs.assign(size_t(n.output_size()), DataType::undefined);
        if (!t.outputs.empty()) t.outputs[0] = output_dtype(n, t.inputs);
        for (int k = 0; k < n.output_size(); ++k) known[n.output(k)] = t.outputs[size_t(k)];
        types.push_back(std::move(t));
    }
    return types;
}

}  // namespace gguftool::runtime::detail
