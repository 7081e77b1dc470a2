// GGUF dims to ONNX shape: the one rule the exporter writes and verify and run --compare expect;
// and the one rule for an ONNX axis attribute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gguftool {

// GGUF lists the fastest-varying dim first (ne[0]); ONNX shapes are row-major, so the order is
// reversed. No dims (n_dims 0) is an ONNX scalar, shape [] (one element), not [1].
// Throws gguftool::Error for a dim above INT64_MAX.
std::vector<int64_t> onnx_shape(std::span<const uint64_t> gguf_dims);

// An axis in [-rank, rank - 1] made non-negative. Throws gguftool::Error naming `what`
// ("attribute 'axis' 2 is out of range for rank 2 (valid: [-2, 1])").
size_t normalize_axis(int64_t axis, size_t rank, const char *what);

}  // namespace gguftool
