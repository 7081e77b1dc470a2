// DequantizePacked-29 -> standard operators: the bytes as [nb, bytes per block] rows, the format's
// lowering (FLOAT in element order), a Reshape to `shape`, and one Cast for the other output types.
#include <fmt/format.h>

#include <algorithm>

#include "formats.hpp"
#include "gguftool/opset29.hpp"
#include "lowerings.hpp"

namespace gguftool::lower::detail {

void lower_dequantize_packed(LoweringBuilder &b, const onnx::NodeProto &node) {
    std::optional<std::string> format;
    std::optional<std::vector<int64_t>> shape;
    std::optional<int64_t> output_dtype;
    for (const onnx::AttributeProto &a : node.attribute()) {
        if (a.name() == "format" && a.type() == onnx::AttributeProto::STRING)
            format = a.s();
        else if (a.name() == "shape" && a.type() == onnx::AttributeProto::INTS)
            shape = std::vector<int64_t>(a.ints().begin(), a.ints().end());
        else if (a.name() == "output_dtype" && a.type() == onnx::AttributeProto::INT)
            output_dtype = a.i();
        else
            throw Error(fmt::format("unexpected attribute '{}'", a.name()));
    }
    if (node.input_size() != 1 || node.output_size() != 1 || node.input(0).empty())
        throw Error("DequantizePacked takes one input and one output");
    const opset29::DequantizePacked op = opset29::check_dequantize_packed(
        format, shape ? std::optional<std::span<const int64_t>>(*shape) : std::nullopt,
        output_dtype);
    const TypeTraits &t = traits(op.type);
    const Value blocks = b.reshape(node.input(0), {-1, int64_t(t.type_size)});
    const Value values = format_lowering(op.type)(b, blocks);
    if (op.output_dtype == DataType::float32) {
        const bool zero = std::find(op.shape.begin(), op.shape.end(), 0) != op.shape.end();
        std::vector<onnx::AttributeProto> attrs;
        if (zero) attrs.push_back(LoweringBuilder::attr("allowzero", 1));
        b.op_into(node.output(0), "Reshape", {values, b.int64s(op.shape)}, attrs);
        return;
    }
    b.op_into(node.output(0), "Cast", {b.reshape(values, op.shape)},
              {LoweringBuilder::attr("to", int64_t(onnx_number(op.output_dtype)))});
}

}  // namespace gguftool::lower::detail
