// Softmax-13, ReduceMean-13/18 and ReduceSum-13: type checks, axes and output shapes; the backend's
// kernels compute (cpu_reduce.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

void check_float(DataType t) {
    if (!is_floating(t))
        throw Error(
            fmt::format("input must be float, double, float16 or bfloat16, not {}", dtype_name(t)));
}

// Softmax-13: exp(x - max) / sum along one axis (default -1). Kernel: x float, double, float16 or
// bfloat16, y of its type and shape; attribute "axis" (normalized).
void run_softmax(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    check_float(x.dtype);
    if (x.shape.empty()) throw Error("input must have rank at least 1");
    const size_t axis =
        normalize_axis(ctx.attr_int("axis", -1), x.shape.size(), "attribute 'axis'");
    Attributes attributes;
    attributes.set("axis", int64_t(axis));
    ctx.allocate_output(x.dtype, x.shape);
    ctx.run_kernel(attributes);
}

// ReduceMean and ReduceSum: the mean or sum over `axes` (ReduceMean-13: an attribute;
// ReduceMean-18 and ReduceSum-13: an optional INT64 input), every axis when there are none
// (unless noop_with_empty_axes, which passes the input through); reduced dims kept as 1 unless
// keepdims is 0. Kernel: x floating (a second input, the axes, is ignored), y of its type with
// the reduced shape; attribute "axes" (INTS, normalized and sorted; empty only for a scalar x).
void run_reduce(OpContext &ctx, bool axes_input) {
    const DeviceTensor &x = ctx.input(0);
    check_float(x.dtype);
    const size_t rank = x.shape.size();
    const int64_t keepdims = ctx.attr_int("keepdims", 1);
    if (keepdims != 0 && keepdims != 1)
        throw Error(fmt::format("attribute 'keepdims' must be 0 or 1, not {}", keepdims));
    std::vector<int64_t> axes;
    bool noop = false;
    if (axes_input) {
        const int64_t noop_attr = ctx.attr_int("noop_with_empty_axes", 0);
        if (noop_attr != 0 && noop_attr != 1)
            throw Error(
                fmt::format("attribute 'noop_with_empty_axes' must be 0 or 1, not {}", noop_attr));
        if (ctx.has_input(1)) axes = ctx.index_list(1, "axes", false, false);
        noop = axes.empty() && noop_attr;
    } else {
        axes = ctx.attr_ints("axes").value_or(std::vector<int64_t>{});
    }
    if (noop) return ctx.set_output(0, x);
    std::vector<bool> reduced(rank, axes.empty());
    for (const int64_t a : axes) {
        const size_t k = normalize_axis(a, rank, "axes value");
        if (reduced[k]) throw Error(fmt::format("axes contains axis {} twice", k));
        reduced[k] = true;
    }
    Shape shape;
    std::vector<int64_t> normalized;
    for (size_t k = 0; k < rank; ++k) {
        if (reduced[k]) {
            normalized.push_back(int64_t(k));  // an empty axis gives NaN means (0 / 0)
            if (keepdims) shape.push_back(1);
        } else {
            shape.push_back(x.shape[k]);
        }
    }
    Attributes attributes;
    attributes.set("axes", normalized);
    ctx.allocate_output(x.dtype, shape);
    ctx.run_kernel(attributes);
}

void run_reduce_mean(OpContext &ctx) {
    run_reduce(ctx, ctx.version() >= 18);
}
void run_reduce_sum(OpContext &ctx) {
    run_reduce(ctx, true);
}

}  // namespace

std::span<const OpDef> reduce_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "Softmax", .since = 13, .attributes = {"axis"}, .run = run_softmax},
        {.op_type = "ReduceMean",
         .since = 13,
         .attributes = {"axes", "keepdims"},
         .run = run_reduce_mean},
        {.op_type = "ReduceMean",
         .since = 18,
         .inputs = {1, 2},
         .attributes = {"keepdims", "noop_with_empty_axes"},
         .run = run_reduce_mean},
        {.op_type = "ReduceSum",
         .since = 13,
         .inputs = {1, 2},
         .attributes = {"keepdims", "noop_with_empty_axes"},
         .run = run_reduce_sum},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
