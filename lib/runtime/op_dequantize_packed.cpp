// DequantizePacked-29: the rules of gguftool/opset29.hpp, then the backend's decoder.
#include <fmt/format.h>

#include "gguftool/opset29.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// Kernel: x UINT8 holds exactly the blocks of y.elements() values of the GGUF type in attribute
// "format" (its GgmlType number); y is FLOAT, FLOAT16, BFLOAT16 or DOUBLE.
void run_dequantize_packed(OpContext &ctx) {
    const std::optional<std::string> format = ctx.attr_string("format");
    const std::optional<std::vector<int64_t>> shape = ctx.attr_ints("shape");
    const opset29::DequantizePacked op = opset29::check_dequantize_packed(
        format ? std::optional<std::string_view>(*format) : std::nullopt,
        shape ? std::optional<std::span<const int64_t>>(*shape) : std::nullopt,
        ctx.attr_int("output_dtype"));

    const DeviceTensor &x = ctx.input(0);
    if (x.dtype != DataType::uint8)
        throw Error(fmt::format("input x must be uint8, not {}", dtype_name(x.dtype)));
    const std::vector<std::optional<int64_t>> x_shape(x.shape.begin(), x.shape.end());
    opset29::check_dequantize_packed_input(op, x_shape);

    ctx.allocate_output(op.output_dtype, op.shape);
    Attributes attributes;
    attributes.set("format", int64_t(op.type));
    ctx.run_kernel(attributes);
}

// The output_dtype attribute (float when absent).
DataType output_dtype_attribute(const onnx::NodeProto &n, std::span<const DataType>) {
    return attribute_dtype(n, "output_dtype", DataType::float32);
}

}  // namespace

std::span<const OpDef> dequantize_packed_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "DequantizePacked",
         .since = 29,
         .attributes = {"format", "shape", "output_dtype"},
         .run = run_dequantize_packed,
         .output_dtype = output_dtype_attribute},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
