// The public decode API: any GGML type (quantized or plain) to FLOAT, FLOAT16, BFLOAT16 or DOUBLE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguftool/types.hpp"

namespace gguftool::quant {

// Output element types, numbered as ONNX TensorProto.DataType.
enum class OutputType : int32_t { float32 = 1, float16 = 10, float64 = 11, bfloat16 = 16 };

size_t output_size(OutputType t);  // bytes per element

// Decodes `elements` values of type `type` from `input` into `output` (which must hold
// elements * output_size(out_type) bytes), using up to `threads` threads (0 = all cores).
// Decoding arithmetic is FLOAT; FLOAT16/BFLOAT16 are produced from it by one round-to-nearest-even
// conversion. Plain integer types convert exactly where the output can hold them. `input` must be
// exactly row_bytes(type, elements) long; this is checked before anything is read.
// Throws gguftool::Error on a removed type, a partial block or a wrong byte count.
void decode(GgmlType type, std::span<const uint8_t> input, uint64_t elements, void *output,
            OutputType out_type, unsigned threads = 0);

// Convenience: decode to a float buffer.
void decode_f32(GgmlType type, std::span<const uint8_t> input, uint64_t elements, float *output,
                unsigned threads = 0);

// Name of the instruction set the dispatcher currently uses ("AVX3", "AVX2", "EMU128", ...).
const char *active_target();

}  // namespace gguftool::quant
