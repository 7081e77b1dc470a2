// Dot products of quantized weight rows with quantized activations, as ggml-cpu computes them for
// a matrix product with few rows (ggml/src/ggml-cpu/arch/x86/quants.c, ggml_vec_dot_<type>_q8_0
// and ggml_vec_dot_<type>_q8_K): the activations are quantized per block to int8 with one scale,
// to the weight type's vec_dot_type (type_traits_cpu in ggml/src/ggml-cpu/ggml-cpu.c: Q8_0 for
// the 32-element formats, Q8_K for the 256-element ones), and each block's integer dot product
// is scaled by both scales and summed in float. Internal to the library (the runtime's fused
// matrix products use it).
//
// The kernels read the weight blocks in place (the structs of formats/blocks.hpp) and compile
// once per instruction set with Highway (foreach_target), as the decoders do; the integer dot
// products are x86's (AVX2's maddubs/madd, on the AVX2 and AVX-512 targets). On the other targets
// there are none: dot_kernel() gives nullptr and the caller decodes to float instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/blocks.hpp"
#include "gguftool/types.hpp"

namespace gguftool::formats {

// How a row of activations is quantized for a weight type: its vec_dot_type.
enum class ActFormat : uint8_t {
    q8_0,  // 32 per block: ActQ8_0
    q8_K,  // 256 per block: BlockQ8_K, ggml's block_q8_K
};

// 32 activations as ggml-cpu's quantize_row_q8_0 (x86) makes them: d = amax / 127 (rounded to f16
// as ggml stores it, kept here as the float it stands for), qs = round(x * 127 / amax) to nearest
// even. `dsum` is d * sum(qs), what q8_1's s holds (the formats with a minimum or an offset use
// it).
struct ActQ8_0 {
    float d;
    float dsum;
    int8_t qs[32];
};

inline constexpr size_t act_block_elements(ActFormat f) {
    return f == ActFormat::q8_0 ? 32 : 256;
}
inline constexpr size_t act_block_bytes(ActFormat f) {
    return f == ActFormat::q8_0 ? sizeof(ActQ8_0) : sizeof(BlockQ8_K);
}

// Quantizes n activations (a multiple of the format's block) into n / act_block_elements(f)
// blocks at `out`: q8_0 as ggml-cpu's x86 quantize_row_q8_0, q8_K as quantize_row_q8_K_ref.
void quantize_activations(ActFormat f, const float *x, size_t n, uint8_t *out);

// out[r] = the dot product of weight row r (`nblocks` blocks at w + r * row_bytes) with the
// quantized activation row at `act` (as many activation elements), for r in [0, rows).
using RowDots = void (*)(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act,
                         size_t nblocks, float *out);

struct DotKernel {
    GgmlType type;
    ActFormat act;
    RowDots dots;  // for the instruction set dispatch chose when dot_kernel() was called
};

// The dot kernel for weights of type t on the instruction set dispatch uses now, or nullptr when
// there is none (a format without one, or a target without integer dot products).
const DotKernel *dot_kernel(GgmlType t);

}  // namespace gguftool::formats
