// Array conversions between float and the output formats, dispatched to the best instruction set
// (convert.cpp). Results are identical on every target: RNE, NaN rule of gguftool/half.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gguftool::quant {

void f32_to_f16(const float *in, uint16_t *out, size_t n);
void f32_to_bf16(const float *in, uint16_t *out, size_t n);
void f32_to_f64(const float *in, double *out, size_t n);
// `in` holds n little-endian halves and may be unaligned.
void f16_to_f32(const uint8_t *in, float *out, size_t n);

}  // namespace gguftool::quant
