// Packed mode: a quantized tensor is a 1-D UINT8 initializer holding its exact GGUF bytes and one
// DequantizePacked node that decodes it into the graph output of the tensor's name.
#include <fmt/format.h>

#include "gguftool/onnx_schemas.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {

void emit_packed(GraphBuilder &g, const gguf::TensorInfo &t, const gguf::TensorData &source,
                 DataType out) {
    const std::string name(t.name);
    const std::string format = opset29::format_name(t.type);
    const std::vector<int64_t> dims = onnx_dims(t);
    const opset29::DequantizePacked op =
        opset29::check_dequantize_packed(format, dims, onnx_number(out));
    if (op.input_bytes != t.bytes)  // the reader checked the size; this would be our bug
        throw Error(fmt::format("tensor {}: {} bytes, DequantizePacked expects {}", name, t.bytes,
                                op.input_bytes));

    const std::string x =
        g.payload(name + ":packed", DataType::uint8, {static_cast<int64_t>(t.bytes)}, t.bytes,
                  [source](Sink &s) { s.copy(source); });
    onnx::NodeProto &n = g.node(name, "DequantizePacked", {x}, {name});
    set_attribute(n, "format", format);
    set_attribute(n, "shape", dims);
    set_attribute(n, "output_dtype", onnx_number(out));
    g.output(name, out, dims);
    ++g.plan().packed;
}

}  // namespace gguftool::onnx_export::detail
