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
    OneHotParams p;
    p.axis = size_t(axis < 0 ? axis + rank + 1 : axis);
    p.depth = depth;
    p.negative_indices = ctx.version() >= 11;

    Shape shape = indices.shape;
    shape.insert(shape.begin() + std::ptrdiff_t(p.axis), depth);
    shape_elements(shape, "output");
    DeviceTensor &y = ctx.allocate_output(ctx.output_dtype(), shape);
    ctx.backend().one_hot(p, indices, values, y);
}

// The output has the type of values (input 2).
DataType values_dtype(const onnx::NodeProto &, std::span<const DataType> in) {
    return in.size() > 2 ? in[2] : DataType::undefined;
}

}  // namespace

std::span<const OpDef> one_hot_ops() {
    static const std::vector<OpDef> rows = {
        {"OneHot", 9, {}, 3, 3, 1, 1, {"axis"}, run_one_hot, values_dtype},
        {"OneHot", 11, {}, 3, 3, 1, 1, {"axis"}, run_one_hot, values_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
