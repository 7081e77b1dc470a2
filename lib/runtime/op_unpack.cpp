// Unpack-29 (../shared/spec/onnx-Unpack-29.txt): the two spellings, the axis, and the packed
// word count along the axis.
#include <fmt/format.h>

#include <bit>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

constexpr uint64_t kInt64Max = uint64_t(INT64_MAX);

// radix/group_size (or bits) validated and normalised.
UnpackParams spelling(const OpContext &ctx) {
    const std::optional<int64_t> bits = ctx.attr_int("bits");
    const std::optional<int64_t> radix = ctx.attr_int("radix");
    const std::optional<int64_t> group = ctx.attr_int("group_size");
    UnpackParams p;
    if (bits) {
        if (radix || group)
            throw Error(
                "attribute 'bits' and attributes 'radix'/'group_size' are mutually "
                "exclusive");
        if (*bits < 1 || *bits > 8)
            throw Error(fmt::format("attribute 'bits' {} is outside [1, 8]", *bits));
        p.radix = 1u << *bits;
        p.group_size = 1;
        p.index_bits = uint32_t(*bits);
        p.group_limit = uint64_t(1) << *bits;
        return p;
    }
    if (!radix && !group) throw Error("needs attribute 'bits', or both 'radix' and 'group_size'");
    if (!radix) throw Error("attribute 'group_size' requires attribute 'radix'");
    if (!group) throw Error("attribute 'radix' requires attribute 'group_size'");
    if (*radix < 2 || *radix > 256)
        throw Error(fmt::format("attribute 'radix' {} is outside [2, 256]", *radix));
    if (*group < 1) throw Error(fmt::format("attribute 'group_size' {} is not positive", *group));
    // radix^group_size <= 2^63 - 1, multiplied out step by step so that nothing overflows.
    uint64_t limit = 1;
    for (int64_t i = 0; i < *group; ++i) {
        if (limit > kInt64Max / uint64_t(*radix))
            throw Error(fmt::format("radix^group_size = {}^{} exceeds 2^63 - 1", *radix, *group));
        limit *= uint64_t(*radix);
    }
    p.radix = uint32_t(*radix);
    p.group_size = uint32_t(*group);
    p.group_limit = limit;
    p.index_bits = uint32_t(std::bit_width(limit - 1));  // ceil(log2(R^G)), limit >= 2
    return p;
}

}  // namespace

void run_unpack(OpContext &ctx) {
    UnpackParams p = spelling(ctx);
    const DeviceTensor &x = ctx.input(0);
    if (x.dtype != DataType::uint8 && x.dtype != DataType::uint32)
        throw Error(fmt::format("input X must be uint8 or uint32, not {}", dtype_name(x.dtype)));
    if (x.shape.empty()) throw Error("input X must have rank at least 1, not a scalar");
    p.axis = normalize_axis(ctx.attr_int("axis", -1), x.shape.size(), "attribute 'axis'");

    const DeviceTensor &count_t = ctx.input(1);
    if (count_t.dtype != DataType::int64)
        throw Error(fmt::format("input count must be int64, not {}", dtype_name(count_t.dtype)));
    if (!count_t.shape.empty())
        throw Error(fmt::format("input count must be a scalar, not of shape {}",
                                shape_string(count_t.shape)));
    const int64_t count = ctx.host_input(1).data_as<int64_t>()[0];
    if (count < 0) throw Error(fmt::format("input count {} is negative", count));
    p.count = uint64_t(count);

    // Words along the axis: ceil(ceil(count / G) * W / word_bits), in 128 bits (no overflow).
    const unsigned word_bits = x.dtype == DataType::uint8 ? 8 : 32;
    const unsigned __int128 groups = (p.count + p.group_size - 1) / p.group_size;
    const unsigned __int128 words = (groups * p.index_bits + word_bits - 1) / word_bits;
    const int64_t have = x.shape[p.axis];
    if (words != (unsigned __int128)have) {
        const std::string formula =
            p.group_size == 1 ? fmt::format("ceil({} * {} / {})", count, p.index_bits, word_bits)
                              : fmt::format("ceil(ceil({} / {}) * {} / {})", count, p.group_size,
                                            p.index_bits, word_bits);
        throw Error(fmt::format("input X has {} words along axis {} but count {} needs {} = {}",
                                have, p.axis, count, formula, words));
    }

    Shape out_shape = x.shape;
    out_shape[p.axis] = count;
    shape_elements(out_shape, "output Y");
    DeviceTensor &y = ctx.allocate_output(DataType::uint8, out_shape);
    ctx.backend().unpack(p, x, y);
}

}  // namespace gguftool::runtime::detail
