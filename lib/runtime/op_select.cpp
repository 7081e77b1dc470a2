// TopK, NonZero and ScatterND: the selections a mixture of experts routes with. Checks and output
// shapes; the backend's kernels compute (cpu_select.cpp).
#include <fmt/format.h>

#include "dtype_dispatch.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// TopK-11/24: the k largest (or smallest) elements along an axis, and their indices. Kernel: X
// of a numeric type, outputs Values (X's type) and Indices (INT64) of X's shape with the axis cut
// to k; attributes "axis" (normalized), "k", "largest" (0 or 1). The elements come sorted (the
// order is undefined with sorted=0, so sorting is one of its orders), equal values lowest index
// first, NaN above every number.
void run_topk(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (x.dtype == DataType::bool_ || x.dtype == DataType::undefined)
        throw Error(fmt::format("input X must be numeric, not {}", dtype_name(x.dtype)));
    if (x.shape.empty()) throw Error("input X must have rank at least 1");
    const std::vector<int64_t> k = ctx.index_list(1, "K", false, true);
    if (k.size() != 1) throw Error(fmt::format("input K has {} values, needs 1", k.size()));
    const size_t axis =
        normalize_axis(ctx.attr_int("axis", -1), x.shape.size(), "attribute 'axis'");
    if (k[0] < 0 || k[0] > x.shape[axis])
        throw Error(
            fmt::format("K = {} is outside [0, {}] (axis {} of X)", k[0], x.shape[axis], axis));
    const int64_t largest = ctx.attr_int("largest", 1);
    if (largest != 0 && largest != 1)
        throw Error(fmt::format("attribute 'largest' must be 0 or 1, not {}", largest));
    const int64_t sorted = ctx.attr_int("sorted", 1);
    if (sorted != 0 && sorted != 1)
        throw Error(fmt::format("attribute 'sorted' must be 0 or 1, not {}", sorted));
    Shape shape = x.shape;
    shape[axis] = k[0];
    ctx.allocate_output(0, x.dtype, shape);
    ctx.allocate_output(1, DataType::int64, shape);
    Attributes attributes;
    attributes.set("axis", int64_t(axis));
    attributes.set("k", k[0]);
    attributes.set("largest", largest);
    ctx.run_kernel(attributes);
}

DataType topk_dtypes(const onnx::NodeProto &, std::span<const DataType> inputs, size_t output) {
    if (output == 1) return DataType::int64;
    return inputs.empty() ? DataType::undefined : inputs[0];
}

// NonZero-9/13: the indices of X's non-zero elements, [rank, count] INT64, in row-major order of
// X (a scalar X gives [0, count]). The count depends on X's values, so X is read on the host here.
// Kernel: X of any type, the output allocated with that count; floats are non-zero unless +0 or
// -0 (NaN is non-zero).
void run_nonzero(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    const Tensor host = ctx.host_input(0);
    int64_t count = 0;
    for (uint64_t i = 0; i < host.elements(); ++i)
        count += with_value(host.dtype(), host.data(), i, [](auto v) { return v != 0; });
    ctx.allocate_output(0, DataType::int64, {int64_t(x.shape.size()), count});
    ctx.run_kernel();
}

// ScatterND-11/13, 16 and 18: a copy of data with the slices that indices [..., q] name replaced
// by (or, with a reduction, combined with) updates [indices.shape[:-1], data.shape[q:]].
// Kernel: data of any type (numeric for a reduction), indices INT64, updates of data's type,
// output of data's type and shape; attribute "reduction" ("none", "add", "mul", "max", "min").
// Negative indices count from the end of their axis; an index out of range is an error; with
// repeated indices the updates apply in order.
void run_scatter_nd(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
    if (indices.dtype != DataType::int64)
        throw Error(fmt::format("input indices must be int64, not {}", dtype_name(indices.dtype)));
    if (updates.dtype != data.dtype)
        throw Error(fmt::format("input updates is {} but data is {}", dtype_name(updates.dtype),
                                dtype_name(data.dtype)));
    if (data.shape.empty()) throw Error("input data must have rank at least 1");
    if (indices.shape.empty()) throw Error("input indices must have rank at least 1");
    const int64_t q = indices.shape.back();
    if (q < 1 || q > int64_t(data.shape.size()))
        throw Error(fmt::format("indices' last dimension {} is outside [1, {}] (data's rank)", q,
                                data.shape.size()));
    Shape want(indices.shape.begin(), indices.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + q, data.shape.end());
    if (updates.shape != want)
        throw Error(fmt::format("input updates has shape {}, needs {}", shape_string(updates.shape),
                                shape_string(want)));
    const std::string reduction = ctx.attr_string("reduction").value_or("none");
    const bool known = reduction == "none" ||
                       (ctx.version() >= 16 && (reduction == "add" || reduction == "mul")) ||
                       (ctx.version() >= 18 && (reduction == "max" || reduction == "min"));
    if (!known)
        throw Error(fmt::format("attribute 'reduction' \"{}\" is not one of ScatterND-{}'s",
                                reduction, ctx.version()));
    if (reduction != "none" && data.dtype == DataType::bool_)
        throw Error("a reduction needs numeric data, not bool");
    ctx.allocate_output(data.dtype, data.shape);
    Attributes attributes;
    attributes.set("reduction", reduction);
    ctx.run_kernel(attributes);
}

}  // namespace

std::span<const OpDef> select_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "TopK",
         .since = 11,
         .inputs = {2, 2},
         .outputs = {2, 2},
         .attributes = {"axis", "largest", "sorted"},
         .run = run_topk,
         .output_dtype = topk_dtypes},
        // 24 states the tie rule this kernel follows for both (lowest index first).
        {.op_type = "TopK",
         .since = 24,
         .inputs = {2, 2},
         .outputs = {2, 2},
         .attributes = {"axis", "largest", "sorted"},
         .run = run_topk,
         .output_dtype = topk_dtypes},
        {.op_type = "NonZero",
         .since = 9,
         .same_as_later = {13},
         .run = run_nonzero,
         .output_dtype = int64_output},
        {.op_type = "ScatterND",
         .since = 11,
         .same_as_later = {13},
         .inputs = {3, 3},
         .attributes = {},
         .run = run_scatter_nd},
        {.op_type = "ScatterND",
         .since = 16,
         .inputs = {3, 3},
         .attributes = {"reduction"},
         .run = run_scatter_nd},
        {.op_type = "ScatterND",
         .since = 18,
         .inputs = {3, 3},
         .attributes = {"reduction"},
         .run = run_scatter_nd},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
