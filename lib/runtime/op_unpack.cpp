// Unpack-29: the rules of gguftool/opset29.hpp, then the backend's unpacker.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

void run_unpack(OpContext &ctx) {
    UnpackParams p;
    static_cast<opset29::Unpack &>(p) = opset29::check_unpack(
        ctx.attr_int("bits"), ctx.attr_int("radix"), ctx.attr_int("group_size"));
    const DeviceTensor &x = ctx.input(0);
    const unsigned word_bits = opset29::unpack_word_bits(x.dtype);
    p.axis = size_t(opset29::check_unpack_axis(ctx.attr_int("axis", -1), int64_t(x.shape.size())));

    const DeviceTensor &count_t = ctx.input(1);
    if (count_t.dtype != DataType::int64)
        throw Error(fmt::format("input count must be int64, not {}", dtype_name(count_t.dtype)));
    if (!count_t.shape.empty())
        throw Error(fmt::format("input count must be a scalar, not of shape {}",
                                shape_string(count_t.shape)));
    const int64_t count = ctx.host_input(1).data_as<int64_t>()[0];
    opset29::check_unpack_words(p, count, word_bits, int64_t(p.axis), x.shape[p.axis]);
    p.count = uint64_t(count);

    Shape out_shape = x.shape;
    out_shape[p.axis] = count;
    shape_elements(out_shape, "output Y");
    DeviceTensor &y = ctx.allocate_output(ctx.output_dtype(), out_shape);
    ctx.backend().unpack(p, x, y);
}

}  // namespace

std::span<const OpDef> unpack_ops() {
    static const std::vector<OpDef> rows = {
        {"Unpack",
         29,
         {},
         2,
         2,
         1,
         1,
         {"axis", "bits", "radix", "group_size"},
         run_unpack,
         uint8_output},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
