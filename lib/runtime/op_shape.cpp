// Operators that never read the data: Unsqueeze-1/11/13, Squeeze-1/11/13, Reshape-5/14, Identity
// and BitCast-26, whose output is a view of the input's buffer, and Shape-1/15, which outputs the
// dims.
#include <fmt/format.h>

#include <algorithm>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

DeviceTensor view(const DeviceTensor &x, Shape shape) {
    DeviceTensor y = x;
    y.shape = std::move(shape);
    return y;
}

void run_unsqueeze(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0);
    std::vector<int64_t> axes;
    if (ctx.version() >= 13) {
        axes = ctx.index_list(1, "axes", false, true);
    } else {
        std::optional<std::vector<int64_t>> a = ctx.attr_ints("axes");
        if (!a) throw Error("attribute 'axes' is required");
        axes = std::move(*a);
    }
    const int64_t out_rank = int64_t(data.shape.size() + axes.size());
    std::vector<bool> inserted(size_t(out_rank), false);
    for (int64_t a : axes) {
        if (ctx.version() == 1 && a < 0)
            throw Error(
                fmt::format("axes value {} is negative (Unsqueeze-1 takes non-negative "
                            "axes; negative ones need opset 11)",
                            a));
        if (a < -out_rank || a >= out_rank)
            throw Error(
                fmt::format("axes value {} is out of range for output rank {} (valid: "
                            "[{}, {}])",
                            a, out_rank, -out_rank, out_rank - 1));
        const size_t k = size_t(a < 0 ? a + out_rank : a);
        if (inserted[k]) throw Error(fmt::format("axes contains output axis {} twice", k));
        inserted[k] = true;
    }
    Shape shape;
    size_t next = 0;
    for (int64_t k = 0; k < out_rank; ++k) shape.push_back(inserted[k] ? 1 : data.shape[next++]);
    ctx.set_output(0, view(data, std::move(shape)));
}

// Squeeze: the dims named by axes (attribute before 13, optional input from 13), each of size 1,
// removed; without axes, every dim of size 1. Squeeze-1 takes no negative axes.
void run_squeeze(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0);
    const size_t rank = data.shape.size();
    std::optional<std::vector<int64_t>> axes;
    if (ctx.version() >= 13) {
        if (ctx.has_input(1)) axes = ctx.index_list(1, "axes", false, true);
    } else {
        axes = ctx.attr_ints("axes");
    }
    std::vector<bool> removed(rank, false);
    if (axes) {
        for (const int64_t a : *axes) {
            if (ctx.version() == 1 && a < 0)
                throw Error(fmt::format(
                    "axes value {} is negative (Squeeze-1 takes non-negative axes; negative ones "
                    "need opset 11)",
                    a));
            const size_t k = normalize_axis(a, rank, "axes value");
            if (removed[k]) throw Error(fmt::format("axes contains axis {} twice", k));
            if (data.shape[k] != 1)
                throw Error(fmt::format("cannot squeeze axis {} of shape {}: its size is not 1", k,
                                        shape_string(data.shape)));
            removed[k] = true;
        }
    } else {
        for (size_t k = 0; k < rank; ++k) removed[k] = data.shape[k] == 1;
    }
    Shape shape;
    for (size_t k = 0; k < rank; ++k)
        if (!removed[k]) shape.push_back(data.shape[k]);
    ctx.set_output(0, view(data, std::move(shape)));
}

void run_reshape(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0);
    const std::vector<int64_t> target = ctx.index_list(1, "shape", false, false);
    const bool allow_zero = ctx.version() >= 14 && ctx.attr_int("allowzero", 0) != 0;
    Shape shape(target.size());
    int inferred = -1;
    bool has_zero = false;
    for (size_t i = 0; i < target.size(); ++i) {
        const int64_t d = target[i];
        if (d == -1) {
            if (inferred >= 0) throw Error("input shape has more than one -1");
            inferred = int(i);
            shape[i] = 1;
        } else if (d == 0 && !allow_zero) {
            if (i >= data.shape.size())
                throw Error(
                    fmt::format("input shape {} copies dimension {} (0) but the data has "
                                "rank {}",
                                shape_string(target), i, data.shape.size()));
            shape[i] = data.shape[i];
        } else if (d < 0) {
            throw Error(
                fmt::format("input shape {} has invalid dimension {}", shape_string(target), d));
        } else {
            has_zero |= d == 0;
            shape[i] = d;
        }
    }
    if (allow_zero && has_zero && inferred >= 0)
        throw Error("input shape has both 0 and -1 while allowzero is set");
    const uint64_t n = data.elements();
    if (inferred >= 0) {
        uint64_t rest = 1;
        bool zero = false;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (int(i) == inferred) continue;
            if (shape[i] == 0)
                zero = true;
            else if (uint64_t(shape[i]) > kMaxElements / rest)
                throw Error(fmt::format("input shape {} is too large", shape_string(target)));
            else
                rest *= uint64_t(shape[i]);
        }
        if (zero || n % rest != 0)
            throw Error(fmt::format("cannot reshape {} elements of shape {} to {}", n,
                                    shape_string(data.shape), shape_string(target)));
        shape[size_t(inferred)] = int64_t(n / rest);
    }
    if (shape_elements(shape, "reshaped output") != n)
        throw Error(fmt::format("cannot reshape {} elements of shape {} to {}", n,
                                shape_string(data.shape), shape_string(shape)));
    ctx.set_output(0, view(data, std::move(shape)));
}

void run_identity(OpContext &ctx) {
    ctx.set_output(0, ctx.input(0));
}

// BitCast-26: the same bytes as another type of the same width.
void run_bitcast(OpContext &ctx) {
    const DataType dtype = ctx.attr_dtype("to");
    const DeviceTensor &x = ctx.input(0);
    if (dtype_size(dtype) != dtype_size(x.dtype))
        throw Error(fmt::format("cannot bitcast {} ({} bits) to {} ({} bits): the widths differ",
                                dtype_name(x.dtype), 8 * dtype_size(x.dtype), dtype_name(dtype),
                                8 * dtype_size(dtype)));
    DeviceTensor y = x;
    y.dtype = dtype;
    ctx.set_output(0, std::move(y));
}

// Shape-1/13: every dim; Shape-15 and later: dims [start, end), negative values counting from
// the end, both clamped to [0, rank].
void run_shape(OpContext &ctx) {
    const Shape &dims = ctx.input(0).shape;
    const int64_t rank = int64_t(dims.size());
    const auto clamp = [rank](int64_t v) {
        if (v < 0) v = std::max<int64_t>(v, -rank) + rank;
        return std::min(v, rank);
    };
    int64_t start = 0, end = rank;
    if (ctx.version() >= 15) {
        start = clamp(ctx.attr_int("start", 0));
        end = clamp(ctx.attr_int("end", rank));
    }
    const std::vector<int64_t> values(dims.begin() + start, dims.begin() + std::max(start, end));
    ctx.set_output(0, ctx.backend().upload(
                          Tensor::from_values(DataType::int64, {int64_t(values.size())}, values)));
}

}  // namespace

std::span<const OpDef> shape_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "Unsqueeze",
         .since = 1,
         .attributes = {"axes"},
         .run = run_unsqueeze,
         .view = true},
        {.op_type = "Unsqueeze",
         .since = 11,
         .attributes = {"axes"},
         .run = run_unsqueeze,
         .view = true},
        {.op_type = "Unsqueeze",
         .since = 13,
         .same_as_later = {21, 23, 24, 25},
         .inputs = {2, 2},
         .run = run_unsqueeze,
         .view = true},
        {.op_type = "Squeeze",
         .since = 1,
         .attributes = {"axes"},
         .run = run_squeeze,
         .view = true},
        {.op_type = "Squeeze",
         .since = 11,
         .attributes = {"axes"},
         .run = run_squeeze,
         .view = true},
        {.op_type = "Squeeze",
         .since = 13,
         .same_as_later = {21, 23, 24, 25},
         .inputs = {1, 2},
         .run = run_squeeze,
         .view = true},
        {.op_type = "Shape",
         .since = 1,
         .same_as_later = {13},
         .run = run_shape,
         .output_dtype = int64_output},
        {.op_type = "Shape",
         .since = 15,
         .same_as_later = {19, 21, 23, 24, 25},
         .attributes = {"start", "end"},
         .run = run_shape,
         .output_dtype = int64_output},
        {.op_type = "BitCast",
         .since = 26,
         .attributes = {"to"},
         .run = run_bitcast,
         .output_dtype = to_attribute_dtype,
         .view = true},
        {.op_type = "Reshape",
         .since = 5,
         .same_as_later = {13},
         .inputs = {2, 2},
         .run = run_reshape,
         .view = true},
        {.op_type = "Reshape",
         .since = 14,
         .same_as_later = {19, 21, 23, 24, 25},
         .inputs = {2, 2},
         .attributes = {"allowzero"},
         .run = run_reshape,
         .view = true},
        {.op_type = "Identity",
         .since = 1,
         .same_as_later = {13, 14, 16, 19, 21, 23, 24, 25},
         .run = run_identity,
         .view = true},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
