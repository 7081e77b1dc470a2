// OneHot-9 and OneHot-11: indices, depth, values [off, on]; a depth dimension inserted at axis.
#include <fmt/format.h>

#include <cmath>

#include "dtype_dispatch.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// The single value of the depth input, as ONNX takes it: non-integer types cast to int64.
int64_t depth_value(const Tensor &t) {
    if (!is_integer(t.dtype()) && !is_floating(t.dtype()))
        throw Error(fmt::format("input depth must be numeric, not {}", dtype_name(t.dtype())));
    return with_value(t.dtype(), t.data(), 0, [](auto v) -> int64_t {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, double>) {
            if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
                throw Error(fmt::format("depth {} is not a valid size", v));
            return int64_t(std::trunc(v));
        } else if constexpr (std::is_same_v<V, uint64_t>) {
            if (v > uint64_t(INT64_MAX)) throw Error(fmt::format("depth {} is too large", v));
            return int64_t(v);
        } else {
            return v;
        }
    });
}

// Kernel: indices of any numeric type (floats truncated toward zero), input 1 the depth (already
// read: attribute "depth"), values [off, on] of y's type; y has a dimension of "depth" inserted at
// attribute "axis" (normalized) of the indices' shape; an index k < 0 means depth + k when
// attribute "negative_indices" is 1 (OneHot-11); out-of-range indices give all-off rows.
void run_one_hot(OpContext &ctx) {
    const DeviceTensor &indices = ctx.input(0);
    if (!is_integer(indices.dtype) && !is_floating(indices.dtype))
        throw Error(
            fmt::format("input indices must be numeric, not {}", dtype_name(indices.dtype)));

    const DeviceTensor &depth_t = ctx.input(1);
    if (depth_t.elements() != 1 || depth_t.shape.size() > 1)
        throw Error(
            fmt::format("input depth must be a scalar or a one-element vector, not of "
                        "shape {}",
                        shape_string(depth_t.shape)));
    if (!is_integer(depth_t.dtype) && !is_floating(depth_t.dtype))
        throw Error(fmt::format("input depth must be numeric, not {}", dtype_name(depth_t.dtype)));
    const int64_t depth = depth_value(ctx.host_input(1));
    if (depth < 0) throw Error(fmt::format("depth {} is negative", depth));

    const DeviceTensor &values = ctx.input(2);
    if (values.shape.size() != 1 || values.shape[0] != 2)
        throw Error(fmt::format("input values must be [off_value, on_value] of shape [2], not {}",
                                shape_string(values.shape)));

    // axis in [-r-1, r], r = rank(indices): the position of the new dimension in the output.
    const int64_t rank = int64_t(indices.shape.size());
    const int64_t axis = ctx.attr_int("axis", -1);
    if (axis < -rank - 1 || axis > rank)
        throw Error(
            fmt::format("attribute 'axis' {} is out of range for indices of rank {} "
                        "(valid: [{}, {}])",
                        axis, rank, -rank - 1, rank));
    const int64_t position = axis < 0 ? axis + rank + 1 : axis;

    Shape shape = indices.shape;
    shape.insert(shape.begin() + position, depth);
    shape_elements(shape, "output");
    ctx.allocate_output(ctx.output_dtype(), shape);
    Attributes attributes;
    attributes.set("axis", position);
    attributes.set("depth", depth);
    attributes.set("negative_indices", int64_t(ctx.version() >= 11));
    ctx.run_kernel(attributes);
}

// The output has the type of values (input 2).
DataType values_dtype(const onnx::NodeProto &, std::span<const DataType> in) {
    return in.size() > 2 ? in[2] : DataType::undefined;
}

}  // namespace

std::span<const OpDef> one_hot_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "OneHot",
         .since = 9,
         .inputs = {3, 3},
         .attributes = {"axis"},
         .run = run_one_hot,
         .output_dtype = values_dtype},
        {.op_type = "OneHot",
         .since = 11,
         .inputs = {3, 3},
         .attributes = {"axis"},
         .run = run_one_hot,
         .output_dtype = values_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
