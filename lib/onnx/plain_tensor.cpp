// A plain GGUF tensor (f32 f16 bf16 f64 i8 i16 i32 i64): an initializer of its own ONNX type, or
// of the output type when the exporter converts plain floating tensors (quant::decode: one
// rounding to nearest even), exposed as the graph output of the tensor's name through an Identity
// node (a value name is defined once, so the initializer itself takes a derived name).
#include <algorithm>
#include <vector>

#include "gguftool/onnx_schemas.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

// Reverses the bytes of each `width`-byte value: a big-endian file's values to little-endian.
void swap_values(const uint8_t *in, size_t n, size_t width, uint8_t *out) {
    for (size_t i = 0; i < n; ++i, in += width, out += width)
        std::reverse_copy(in, in + width, out);
}

}  // namespace

void emit_plain(GraphBuilder &g, const gguf::TensorInfo &t, const gguf::TensorData &source,
                bool swap_bytes, DataType out, unsigned threads) {
    const DataType stored = onnx_data_type(t.type);
    const std::vector<int64_t> dims = onnx_dims(t);
    const size_t width = traits(t.type).type_size;
    const std::span<const uint8_t> data = t.data;
    const bool swap = swap_bytes && width > 1;  // ONNX raw data is little-endian
    std::function<void(Sink &)> write = [source](Sink &s) { s.copy(source); };
    if (out != stored) {
        const GgmlType type = t.type;
        const size_t out_width = quant::output_size(out);
        write = [=](Sink &s) {
            std::vector<uint8_t> swapped;
            transform_blocks(s, data, width, out_width,
                             [&](const uint8_t *in, size_t n, uint8_t *dst) {
                                 if (swap) {
                                     swapped.resize(n * width);
                                     swap_values(in, n, width, swapped.data());
                                     in = swapped.data();
                                 }
                                 quant::decode(type, {in, n * width}, n, dst, out, threads);
                             });
        };
    } else if (swap) {
        write = [data, width](Sink &s) {
            transform_blocks(s, data, width, width,
                             [width](const uint8_t *in, size_t n, uint8_t *dst) {
                                 swap_values(in, n, width, dst);
                             });
        };
    }
    const std::string name(t.name);
    const std::string value =
        g.payload(name + ":value", out, dims, t.elements * dtype_size(out), write);
    g.node(name, "Identity", {value}, {name});
    g.output(name, out, dims);
}

}  // namespace gguftool::onnx_export::detail
