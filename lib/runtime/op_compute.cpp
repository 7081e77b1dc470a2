// Cast, Gather, Concat and Constant: checks and output shapes.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

void run_cast(OpContext &ctx) {
    const DataType dtype = ctx.attr_dtype("to");
    const DeviceTensor &x = ctx.input(0);
    DeviceTensor &y = ctx.allocate_output(dtype, x.shape);
    ctx.backend().cast(x, y);
}

void run_gather(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0);
    const DeviceTensor &indices = ctx.input(1);
    if (indices.dtype != DataType::int32 && indices.dtype != DataType::int64)
        throw Error(
            fmt::format("input indices must be int32 or int64, not {}", dtype_name(indices.dtype)));
    if (data.shape.empty()) throw Error("input data must have rank at least 1");
    const size_t axis =
        normalize_axis(ctx.attr_int("axis", 0), data.shape.size(), "attribute 'axis'");
    Shape shape(data.shape.begin(), data.shape.begin() + std::ptrdiff_t(axis));
    shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
    shape.insert(shape.end(), data.shape.begin() + std::ptrdiff_t(axis) + 1, data.shape.end());
    shape_elements(shape, "output");
    DeviceTensor &y = ctx.allocate_output(data.dtype, shape);
    ctx.backend().gather(axis, ctx.version() >= 11, data, indices, y);
}

void run_concat(OpContext &ctx) {
    std::vector<DeviceTensor> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.input(i));
    const DeviceTensor &first = inputs[0];
    if (first.shape.empty()) throw Error("inputs must have rank at least 1");
    std::optional<int64_t> axis_attr = ctx.attr_int("axis");
    if (!axis_attr) {
        if (ctx.version() >= 4) throw Error("attribute 'axis' is required");
        axis_attr = 1;  // Concat-1's default
    }
    if (ctx.version() < 11 && *axis_attr < 0)
        throw Error(fmt::format("attribute 'axis' {} is negative (needs opset 11)", *axis_attr));
    const size_t axis = normalize_axis(*axis_attr, first.shape.size(), "attribute 'axis'");
    Shape shape = first.shape;
    uint64_t total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const DeviceTensor &t = inputs[i];
        if (t.dtype != first.dtype)
            throw Error(fmt::format("input {} is {} but input 0 is {}", i, dtype_name(t.dtype),
                                    dtype_name(first.dtype)));
        if (t.shape.size() != first.shape.size())
            throw Error(fmt::format("input {} has rank {} but input 0 has rank {}", i,
                                    t.shape.size(), first.shape.size()));
        for (size_t d = 0; d < shape.size(); ++d)
            if (d != axis && t.shape[d] != first.shape[d])
                throw Error(
                    fmt::format("input {} of shape {} does not match input 0 of shape {} "
                                "outside axis {}",
                                i, shape_string(t.shape), shape_string(first.shape), axis));
        total += uint64_t(t.shape[axis]);
        if (total > kMaxElements) throw Error("output is too large");
    }
    shape[axis] = int64_t(total);
    shape_elements(shape, "output");
    DeviceTensor &y = ctx.allocate_output(first.dtype, shape);
    ctx.backend().concat(axis, inputs, y);
}

void run_constant(OpContext &ctx) {
    int set = 0;
    for (const onnx::AttributeProto &a : ctx.node().attribute()) (void)a, ++set;
    if (set != 1) throw Error(fmt::format("needs exactly one value attribute, has {}", set));
    if (ctx.attribute("sparse_value")) throw Error("attribute 'sparse_value' is not supported");
    if (ctx.attribute("value_string") || ctx.attribute("value_strings"))
        throw Error("string constants are not supported");
    Tensor t;
    if (const onnx::TensorProto *p = ctx.attr_tensor("value")) {
        t = tensor_from_proto(*p, ctx.external(), "attribute 'value'", nullptr);
    } else if (std::optional<float> f = ctx.attr_float("value_float")) {
        t = Tensor::from_values(DataType::float32, {}, std::vector<float>{*f});
    } else if (std::optional<std::vector<float>> fs = ctx.attr_floats("value_floats")) {
        t = Tensor::from_values(DataType::float32, {int64_t(fs->size())}, *fs);
    } else if (std::optional<int64_t> i = ctx.attr_int("value_int")) {
        t = Tensor::from_values(DataType::int64, {}, std::vector<int64_t>{*i});
    } else if (std::optional<std::vector<int64_t>> is = ctx.attr_ints("value_ints")) {
        t = Tensor::from_values(DataType::int64, {int64_t(is->size())}, *is);
    }
    ctx.set_output(0, ctx.backend().upload(t));
}

// Constant: the type of whichever value attribute it has (strings and sparse values: unknown).
DataType constant_dtype(const onnx::NodeProto &n, std::span<const DataType>) {
    for (const onnx::AttributeProto &a : n.attribute()) {
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR)
            return dtype_from_onnx(a.t().data_type()).value_or(DataType::undefined);
        if (a.name() == "value_float" || a.name() == "value_floats") return DataType::float32;
        if (a.name() == "value_int" || a.name() == "value_ints") return DataType::int64;
    }
    return DataType::undefined;
}

}  // namespace

std::span<const OpDef> compute_ops() {
    static const std::vector<OpDef> rows = {
        {"Cast", 6, {9, 13}, 1, 1, 1, 1, {"to"}, run_cast, to_attribute_dtype},
        {"Cast",
         19,
         {21, 23, 24, 25},
         1,
         1,
         1,
         1,
         {"to", "saturate", "round_mode"},
         run_cast,
         to_attribute_dtype},
        {"Gather", 1, {}, 2, 2, 1, 1, {"axis"}, run_gather},
        {"Gather", 11, {13}, 2, 2, 1, 1, {"axis"}, run_gather},
        {"Concat", 1, {}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Concat", 4, {}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Concat", 11, {13}, 1, kMany, 1, 1, {"axis"}, run_concat},
        {"Constant", 1, {9}, 0, 0, 1, 1, {"value"}, run_constant, constant_dtype},
        {"Constant", 11, {}, 0, 0, 1, 1, {"value", "sparse_value"}, run_constant, constant_dtype},
        {"Constant",
         12,
         {13, 19, 21, 23, 24, 25},
         0,
         0,
         1,
         1,
         {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
          "value_string", "value_strings"},
         run_constant,
         constant_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
