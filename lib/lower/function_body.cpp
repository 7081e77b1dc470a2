// Unpack-29's function body: the lowering itself as written for opset 17 (no BitwiseAnd), its
// constants as Constant nodes, over the schema's formal names X, count and Y.
#include "builder.hpp"
#include "gguftool/error.hpp"
#include "gguftool/lower.hpp"
#include "lowerings.hpp"

namespace gguftool::lower {

bool unpack_function_body(const onnx::NodeProto &node, int32_t x_elem_type, int64_t x_rank,
                          onnx::FunctionProto &function) {
    const std::optional<DataType> x_type = dtype_from_onnx(x_elem_type);
    if (!x_type) return false;
    onnx::NodeProto formal;
    formal.set_op_type("Unpack");
    formal.add_input("X");
    formal.add_input("count");
    formal.add_output("Y");
    for (const onnx::AttributeProto &a : node.attribute()) *formal.add_attribute() = a;
    onnx::FunctionProto body;
    body.set_name("Unpack");
    body.set_domain("");
    body.add_input("X");
    body.add_input("count");
    body.add_output("Y");
    onnx::OperatorSetIdProto &o = *body.add_opset_import();
    o.set_domain("");
    // The body imports the operator's own opset, as function bodies do (ONNX's expansion looks the
    // operator up at it); it uses only operators whose meaning is the same from opset 17 to 29.
    o.set_version(29);
    detail::FunctionSink sink(body);
    for (const char *name : {"X", "count", "Y"}) sink.reserve(name);
    try {
        detail::LoweringBuilder b(sink, kMinOpset, "Y");
        detail::lower_unpack(b, formal, *x_type,
                             x_rank >= 0 ? std::optional<int64_t>(x_rank) : std::nullopt);
    } catch (const Error &) {
        return false;
    }
    function = std::move(body);
    return true;
}

}  // namespace gguftool::lower
