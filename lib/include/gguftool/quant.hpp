// The public decode API: any GGML type (quantized or plain) to FLOAT, FLOAT16, BFLOAT16 or DOUBLE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguftool/data_type.hpp"
#include "gguftool/types.hpp"

namespace gguftool::quant {

// Bytes per element of a type decode() writes (float32, float16, bfloat16, float64); 0 for any
// other DataType.
size_t output_size(DataType t);

// Decodes `elements` values of type `type` from `input` into `output`, which must hold
// elements * output_size(out_type) bytes and be aligned to output_size(out_type).
//
// Quantized types decode to FLOAT exactly as llama.cpp's dequantize_row_<type>; FLOAT16 and
// BFLOAT16 are that FLOAT rounded once to nearest even (overflow gives infinity; a NaN keeps its
// sign and top payload bits and comes out quiet); DOUBLE is that FLOAT widened exactly.
// Plain types (f32 f16 bf16 f64 i8 i16 i32 i64) copy their bytes when the output is the same
// format, else convert with one rounding to nearest even (exact where the output holds the value).
//
// `threads`: up to this many threads over contiguous block ranges (0 = all cores); small outputs
// (under 256 KiB) are decoded on the calling thread. The result does not depend on it.
//
// `input` must be exactly row_bytes(type, elements) long; this is checked before anything is read.
// Throws gguftool::Error on an unknown or removed type, a partial block, a wrong byte count, or a
// format with no decoder.
void decode(GgmlType type, std::span<const uint8_t> input, uint64_t elements, void *output,
            DataType out_type, unsigned threads = 0);

// Convenience: decode to a float buffer.
void decode_f32(GgmlType type, std::span<const uint8_t> input, uint64_t elements, float *output,
                unsigned threads = 0);

// Name of the instruction set the dispatcher currently uses ("AVX3", "AVX2", "EMU128", ...).
const char *active_target();

}  // namespace gguftool::quant
