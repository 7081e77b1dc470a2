// Dequantized mode: a quantized tensor decoded by the core (quant::decode, bit-exact with
// llama.cpp) into a plain initializer of the output type, for runtimes without the opset-29
// operators. Decoding runs chunk by chunk as the bytes are written.
#include "plan.hpp"

namespace gguftool::onnx_export::detail {

void emit_dequantized(GraphBuilder &g, const gguf::TensorInfo &t, DataType out, unsigned threads) {
    const std::string name(t.name);
    const std::vector<int64_t> dims = onnx_dims(t);
    const TypeTraits &tt = traits(t.type);
    const size_t out_block = size_t{tt.block_size} * quant::output_size(out);
    const std::span<const uint8_t> data = t.data;
    const GgmlType type = t.type;
    const std::string value =
        g.payload(name + ":value", out, dims, t.elements * quant::output_size(out), [=](Sink &s) {
            transform_blocks(s, data, tt.type_size, out_block,
                             [&](const uint8_t *in, size_t n, uint8_t *dst) {
                                 quant::decode(type, {in, n * tt.type_size}, n * tt.block_size, dst,
                                               out, threads);
                             });
        });
    g.node(name, "Identity", {value}, {name});
    g.output(name, out, dims);
}

}  // namespace gguftool::onnx_export::detail
