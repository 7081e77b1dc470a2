// A plain GGUF tensor (f32 f16 bf16 f64 i8 i16 i32 i64): an initializer of the matching ONNX
// type, exposed as the graph output of the tensor's name through an Identity node (a value name
// is defined once, so the initializer itself takes a derived name).
#include <algorithm>

#include "gguftool/onnx_schemas.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {

void emit_plain(GraphBuilder &g, const gguf::TensorInfo &t, bool swap_bytes) {
    const DataType data_type = onnx_data_type(t.type);
    const std::vector<int64_t> dims = onnx_dims(t);
    const size_t width = traits(t.type).type_size;
    const std::span<const uint8_t> data = t.data;
    std::function<void(Sink &)> write = [data](Sink &s) { copy_input(s, data); };
    if (swap_bytes && width > 1)  // a big-endian file: ONNX raw data is little-endian
        write = [data, width](Sink &s) {
            transform_blocks(s, data, width, width,
                             [width](const uint8_t *in, size_t n, uint8_t *out) {
                                 for (size_t i = 0; i < n; ++i, in += width, out += width)
                                     std::reverse_copy(in, in + width, out);
                             });
        };
    const std::string name(t.name);
    const std::string value = g.payload(name + ":value", data_type, dims, t.bytes, write);
    g.node(name, "Identity", {value}, {name});
    g.output(name, data_type, dims);
}

}  // namespace gguftool::onnx_export::detail
