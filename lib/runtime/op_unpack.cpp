// Unpack-29: the rules of gguftool/opset29.hpp, then the backend's unpacker.
#include <fmt/format.h>

#include "gguftool/opset29.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// Kernel: x UINT8 or UINT32 words, each row along attribute "axis" (normalized) a little-endian
// bit stream of groups of "group_bits" bits; group j's index expands to "group_size" base-"radix"
// digits, least significant first, the row's first y.shape[axis] of them the UINT8 codes of y
// (attributes "radix", "group_size", "group_bits", "group_limit": opset29::Unpack's fields). A
// group index not below "group_limit" is an error.
void run_unpack(OpContext &ctx) {
    const opset29::Unpack p = opset29::check_unpack(ctx.attr_int("bits"), ctx.attr_int("radix"),
                                                    ctx.attr_int("group_size"));
    const DeviceTensor &x = ctx.input(0);
    const unsigned word_bits = opset29::unpack_word_bits(x.dtype);
    const int64_t axis =
        opset29::check_unpack_axis(ctx.attr_int("axis", -1), int64_t(x.shape.size()));

    const DeviceTensor &count_t = ctx.input(1);
    if (count_t.dtype != DataType::int64)
        throw Error(fmt::format("input count must be int64, not {}", dtype_name(count_t.dtype)));
    if (!count_t.shape.empty())
        throw Error(fmt::format("input count must be a scalar, not of shape {}",
                                shape_string(count_t.shape)));
    const int64_t count = ctx.host_input(1).data_as<int64_t>()[0];
    opset29::check_unpack_words(p, count, word_bits, axis, x.shape[size_t(axis)]);

    Shape out_shape = x.shape;
    out_shape[size_t(axis)] = count;
    shape_elements(out_shape, "output Y");
    ctx.allocate_output(ctx.output_dtype(), out_shape);
    Attributes attributes;
    attributes.set("axis", axis);
    attributes.set("radix", int64_t(p.radix));
    attributes.set("group_size", int64_t(p.group_size));
    attributes.set("group_bits", int64_t(p.group_bits));
    attributes.set("group_limit", int64_t(p.group_limit));
    ctx.run_kernel(attributes);
}

}  // namespace

std::span<const OpDef> unpack_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "Unpack",
         .since = 29,
         .inputs = {2, 2},
         .attributes = {"axis", "bits", "radix", "group_size"},
         .run = run_unpack,
         .output_dtype = uint8_output},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
