// The opset-29 operators of the specs, DequantizePacked and Unpack, as ONNX OpSchemas with their
// type-and-shape inference (the rules themselves are in gguftool/opset29.hpp).
//
// ONNX 1.12 (Debian's libonnx-dev) knows the default domain only up to opset 17;
// register_schemas() widens that range to 29 first (lib/onnx/opset_range.cpp) and then registers
// both operators, so onnx::checker::check_model and onnx::shape_inference::InferShapes accept
// models importing opset 29.
#pragma once

#include "gguftool/opset29.hpp"

namespace gguftool::opset29 {

// Widens the default domain to opset 29 and registers DequantizePacked-29 and Unpack-29.
// Thread-safe; only the first call does anything.
void register_schemas();

}  // namespace gguftool::opset29
