// Internal to lib/lower: the node lowerings.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>

#include "builder.hpp"

namespace gguftool::lower::detail {

// Writes standard-operator nodes computing `node`'s output (same output name). Throws
// gguftool::Error with the bare problem; the caller names the node.
void lower_dequantize_packed(LoweringBuilder &b, const onnx::NodeProto &node);

// Unpack-29 with X of element type `x_type` (uint8 or uint32) and rank `x_rank` (nullopt when
// unknown: then only a negative axis can be lowered).
void lower_unpack(LoweringBuilder &b, const onnx::NodeProto &node, DataType x_type,
                  std::optional<int64_t> x_rank);

}  // namespace gguftool::lower::detail
