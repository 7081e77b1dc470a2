// Internal to lib/lower: may a kept node be re-stamped from opset `from` to `to`?
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

namespace gguftool::lower::detail {

// Throws gguftool::Error (bare problem) when `node` (default domain) could mean something else, or
// not exist, at opset `to` than at opset `from`.
void check_restamp(const onnx::NodeProto &node, int64_t from, int64_t to);

}  // namespace gguftool::lower::detail
