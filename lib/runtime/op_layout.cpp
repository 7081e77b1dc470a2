// Slice-10/11/13 and Transpose-1/13/...: which input element each output element reads.
#include <fmt/format.h>

#include <algorithm>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// ceil(diff / step) for diff >= 0 and step != 0 of either sign (|step| up to 2^63).
uint64_t steps_over(uint64_t diff, int64_t step) {
    const uint64_t mag = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
    return diff == 0 ? 0 : (diff - 1) / mag + 1;
}

// Slice: starts, ends, optional axes and steps, all of one index type. Slice-10 and Slice-11
// differ only in wording: negative axes (which Slice-10's own shape inference accepts) and the
// clamping for negative steps are Slice-13's rules, applied to all three. Kernel: y[i0, i1, ...] =
// x[starts[0] + i0 * steps[0], starts[1] + i1 * steps[1], ...] with attributes "starts" and
// "steps" (INTS, one per axis of x, every step non-zero), every index read in range.
void run_slice(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0);
    const DataType index_type = ctx.input(1).dtype;
    static const char *const kNames[] = {"data", "starts", "ends", "axes", "steps"};
    const auto list = [&](size_t i) {
        if (ctx.input(i).dtype != index_type)
            throw Error(fmt::format("input {} is {} but input starts is {}", kNames[i],
                                    dtype_name(ctx.input(i).dtype), dtype_name(index_type)));
        return ctx.index_list(i, kNames[i], true, false);
    };
    const std::vector<int64_t> starts = list(1), ends = list(2);
    const size_t n = starts.size(), rank = data.shape.size();
    const auto check_length = [&](const std::vector<int64_t> &v, size_t i) {
        if (v.size() != n)
            throw Error(fmt::format("input {} has {} values but input starts has {}", kNames[i],
                                    v.size(), n));
    };
    check_length(ends, 2);
    std::vector<int64_t> axes(n), steps(n, 1);
    if (ctx.has_input(3)) {
        axes = list(3);
        check_length(axes, 3);
    } else {
        if (n > rank)
            throw Error(
                fmt::format("input starts has {} values but the data has rank {}", n, rank));
        for (size_t i = 0; i < n; ++i) axes[i] = int64_t(i);
    }
    if (ctx.has_input(4)) {
        steps = list(4);
        check_length(steps, 4);
    }

    std::vector<int64_t> start(rank, 0), step(rank, 1);
    Shape shape = data.shape;
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
        const size_t axis = normalize_axis(axes[i], rank, "axes value");
        if (seen[axis]) throw Error(fmt::format("input axes names axis {} twice", axis));
        seen[axis] = true;
        if (steps[i] == 0) throw Error(fmt::format("input steps has 0 (for axis {})", axis));
        const int64_t dim = data.shape[axis];
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
        uint64_t count = 0;
        if (dim == 0) {
            s = 0;
        } else if (steps[i] > 0) {
            s = std::clamp<int64_t>(s, 0, dim);
            e = std::clamp<int64_t>(e, 0, dim);
            count = e > s ? steps_over(uint64_t(e - s), steps[i]) : 0;
        } else {
            s = std::clamp<int64_t>(s, 0, dim - 1);
            e = std::clamp<int64_t>(e, -1, dim - 1);
            count = s > e ? steps_over(uint64_t(s - e), steps[i]) : 0;
        }
        start[axis] = count ? s : 0;
        step[axis] = count > 1 ? steps[i] : 1;  // one element: read at start, any step
        shape[axis] = int64_t(count);
    }
    ctx.allocate_output(data.dtype, shape);
    Attributes attributes;
    attributes.set("starts", start);
    attributes.set("steps", step);
    ctx.run_kernel(attributes);
}

// Transpose: perm (default: the axes reversed) must be a permutation of the input's axes. Kernel:
// axis i of y is axis perm[i] of x, attribute "perm" (INTS, every axis of x once).
void run_transpose(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    const size_t rank = x.shape.size();
    std::vector<int64_t> perm(rank);
    if (const std::optional<std::vector<int64_t>> p = ctx.attr_ints("perm")) {
        if (p->size() != rank)
            throw Error(fmt::format("attribute 'perm' has {} values but the input has rank {}",
                                    p->size(), rank));
        std::vector<bool> seen(rank, false);
        for (size_t i = 0; i < rank; ++i) {
            const int64_t a = (*p)[i];
            if (a < 0 || a >= int64_t(rank) || seen[size_t(a)])
                throw Error(fmt::format("attribute 'perm' [{}] is not a permutation of 0..{}",
                                        fmt::join(*p, ", "), int64_t(rank) - 1));
            seen[size_t(a)] = true;
            perm[i] = a;
        }
    } else {
        for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(rank - 1 - i);
    }
    Shape shape(rank);
    for (size_t i = 0; i < rank; ++i) shape[i] = x.shape[size_t(perm[i])];
    ctx.allocate_output(x.dtype, shape);
    Attributes attributes;
    attributes.set("perm", perm);
    ctx.run_kernel(attributes);
}

}  // namespace

std::span<const OpDef> layout_ops() {
    static const std::vector<OpDef> rows = {
        // One code for the three: see run_slice.
        {.op_type = "Slice",
         .since = 10,
         .same_as_later = {11, 13},
         .inputs = {3, 5},
         .run = run_slice},
        {.op_type = "Transpose",
         .since = 1,
         .same_as_later = {13, 21, 23, 24, 25},
         .attributes = {"perm"},
         .run = run_transpose},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
