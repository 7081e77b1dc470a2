// model_opset(): the default-domain opset a converted model imports.
#include "gguftool/opset29.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

// Identity-1 (the schema in force up to opset 12) allows every numeric tensor type but bfloat16,
// which arrived with Identity-13. The floor is 7, not 1: onnxruntime guarantees opsets >= 7 only
// (below, it warns and its transpose optimizer gives up). ONNX 1.12's checker accepts both.
constexpr int kIdentityOpset = 7;
constexpr int kIdentityBfloat16Opset = 13;

bool has_bfloat16_output(const onnx::GraphProto &graph) {
    for (const onnx::ValueInfoProto &o : graph.output())
        if (o.type().tensor_type().elem_type() == onnx_number(DataType::bfloat16)) return true;
    return false;
}

}  // namespace

int model_opset(Mode mode, const onnx::GraphProto &graph) {
    if (mode != Mode::dequantized) return opset29::kOpsetVersion;
    return has_bfloat16_output(graph) ? kIdentityBfloat16Opset : kIdentityOpset;
}

}  // namespace gguftool::onnx_export::detail
