// Cast, Gather, Concat and Constant: checks and output shapes.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// Cast-6/19. Kernel: x of any type converted to y's ("to"; the man page gives the rules: floats
// round to nearest even, floats to integers truncate and saturate, integers wrap), same shape.
void run_cast(OpContext &ctx) {
    const DataType dtype = ctx.attr_dtype("to");
    const DeviceTensor &x = ctx.input(0);
    ctx.allocate_output(dtype, x.shape);
    ctx.run_kernel();
}

// Gather-1/11. Kernel: y[o, j, i] = data[o, indices[j], i] along attribute "axis" (normalized);
// indices INT32 or INT64, negative ones counting from the end when attribute
// "negative_indices" is 1 (Gather-11); an index out of range is an error.
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
    ctx.allocate_output(data.dtype, shape);
    Attributes attributes;
    attributes.set("axis", int64_t(axis));
    attributes.set("negative_indices", int64_t(ctx.version() >= 11));
    ctx.run_kernel(attributes);
}

// Concat-1/4/11. Kernel: the inputs (all present, of y's type) joined along attribute "axis"
// (normalized); they match y's shape on every other axis.
void run_concat(OpContext &ctx) {
    size_t axis = 0;
    const Shape shape = check_concat(ctx, axis);
    ctx.allocate_output(ctx.input(0).dtype, shape);
    Attributes attributes;
    attributes.set("axis", int64_t(axis));
    ctx.run_kernel(attributes);
}

}  // namespace

// Concat's checks (above run_concat's contract): the output's shape, and the axis normalized.
Shape check_concat(const OpContext &ctx, size_t &axis_out) {
    const DeviceTensor &first = ctx.input(0);
    if (first.shape.empty()) throw Error("inputs must have rank at least 1");
    std::optional<int64_t> axis_attr = ctx.attr_int("axis");
    if (!axis_attr) {
        if (ctx.version() >= 4) throw Error("attribute 'axis' is required");
        axis_attr = 1;  // Concat-1's default
    }
    if (ctx.version() < 11 && *axis_attr < 0)
        throw Error(fmt::format("attribute 'axis' {} is negative (needs opset 11)", *axis_attr));
    const size_t axis = axis_out =
        normalize_axis(*axis_attr, first.shape.size(), "attribute 'axis'");
    Shape shape = first.shape;
    uint64_t total = 0;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
        const DeviceTensor &t = ctx.input(i);
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
    return shape;
}

namespace {

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
DataType constant_dtype(const onnx::NodeProto &n, std::span<const DataType>, size_t) {
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
        {.op_type = "Cast",
         .since = 6,
         .same_as_later = {9, 13},
         .attributes = {"to"},
         .run = run_cast,
         .output_dtype = to_attribute_dtype},
        {.op_type = "Cast",
         .since = 19,
         .same_as_later = {21, 23, 24, 25},
         .attributes = {"to", "saturate", "round_mode"},
         .run = run_cast,
         .output_dtype = to_attribute_dtype},
        {.op_type = "Gather",
         .since = 1,
         .inputs = {2, 2},
         .attributes = {"axis"},
         .run = run_gather},
        {.op_type = "Gather",
         .since = 11,
         .same_as_later = {13},
         .inputs = {2, 2},
         .attributes = {"axis"},
         .run = run_gather},
        {.op_type = "Concat",
         .since = 1,
         .inputs = {1, kMany},
         .attributes = {"axis"},
         .run = run_concat},
        {.op_type = "Concat",
         .since = 4,
         .inputs = {1, kMany},
         .attributes = {"axis"},
         .run = run_concat},
        {.op_type = "Concat",
         .since = 11,
         .same_as_later = {13},
         .inputs = {1, kMany},
         .attributes = {"axis"},
         .run = run_concat},
        {.op_type = "Constant",
         .since = 1,
         .same_as_later = {9},
         .inputs = {0, 0},
         .attributes = {"value"},
         .run = run_constant,
         .output_dtype = constant_dtype},
        {.op_type = "Constant",
         .since = 11,
         .inputs = {0, 0},
         .attributes = {"value", "sparse_value"},
         .run = run_constant,
         .output_dtype = constant_dtype},
        {.op_type = "Constant",
         .since = 12,
         .same_as_later = {13, 19, 21, 23, 24, 25},
         .inputs = {0, 0},
         .attributes = {"value", "sparse_value", "value_float", "value_floats", "value_int",
                        "value_ints", "value_string", "value_strings"},
         .run = run_constant,
         .output_dtype = constant_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
