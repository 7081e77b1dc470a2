// GGUF dims to ONNX shape: the one rule the exporter writes and verify and run --compare expect.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gguftool {

// GGUF lists the fastest-varying dim first (ne[0]); ONNX shapes are row-major, so the order is
// reversed. No dims (n_dims 0) is an ONNX scalar, shape [] (one element), not [1].
// Throws gguftool::Error for a dim above INT64_MAX.
std::vector<int64_t> onnx_shape(std::span<const uint64_t> gguf_dims);

}  // namespace gguftool
