// Internal to lib/onnx: the pieces register_schemas() puts together.
#pragma once

#include <onnx/defs/schema.h>

namespace gguftool::opset29::detail {

// Makes ONNX's registry accept default-domain schemas and opset imports up to `max_version`.
void extend_default_domain(int max_version);

onnx::OpSchema dequantize_packed_schema();
onnx::OpSchema unpack_schema();

}  // namespace gguftool::opset29::detail
