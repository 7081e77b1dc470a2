// Block decoders, one per quantized GGML type. Internal to the library (lib/quant uses it).
//
// Each decoder turns `nblocks` consecutive blocks at `in` into nblocks * block_size floats at
// `out`, exactly as ggml's dequantize_row_<type> does. The caller checks lengths; decoders trust
// them. Each family file compiles its kernels once per instruction set with Highway
// (foreach_target) and exports a dispatching entry point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "gguftool/types.hpp"

namespace gguftool::formats {

// Outputs of at least this many bytes per call are written with non-temporal (streaming) stores:
// they would not stay in the caches anyway, and skipping each line's read-for-ownership makes
// decoding ~1.5x faster once it is bound by memory bandwidth. Smaller outputs stay in the cache for
// whoever reads them next.
inline constexpr size_t kStreamMinBytes = size_t(16) << 20;

using BlockDecoder = void (*)(const uint8_t *in, size_t nblocks, float *out);

struct DecodeKernel {
    GgmlType type;
    BlockDecoder decode;  // dispatches to the best instruction set at call time
};

// Every family file contributes its kernels (formats/<family>.cpp lists its formats).
std::span<const DecodeKernel> legacy_kernels();
std::span<const DecodeKernel> kquant_kernels();
std::span<const DecodeKernel> iq_kernels();
std::span<const DecodeKernel> ternary_kernels();
std::span<const DecodeKernel> fp4_kernels();
std::span<const DecodeKernel> q1q2_kernels();

// The decoder for `t`, or nullptr for plain and removed types.
BlockDecoder block_decoder(GgmlType t);

}  // namespace gguftool::formats

// How a family file registers its kernels: one X-list of its formats, X(type, Block) with the
// GgmlType enumerator and the block struct (formats/blocks.hpp), e.g.
//   #define GGUFTOOL_LEGACY_FORMATS(X) X(q4_0, BlockQ4_0) X(q4_1, BlockQ4_1) ...
// and for each format a kernel `<type>_blocks` (templated on kStream when it has a streaming
// variant). The list is expanded twice:
//   - inside the per-target namespace, after the kernels:
//       GGUFTOOL_LEGACY_FORMATS(GGUFTOOL_STREAMING_DECODER)   (kernels templated on kStream)
//       GGUFTOOL_KQUANT_FORMATS(GGUFTOOL_DECODER)             (kernels without a streaming one)
//     each defining the entry point decode_<type> (decode_blocks in simd-inl.h);
//   - once, under HWY_ONCE: GGUFTOOL_FAMILY_KERNELS(legacy, GGUFTOOL_LEGACY_FORMATS), which
//     defines each entry point's table of targets (GGUFTOOL_EXPORT), the wrapper dispatching to
//     the best one, and legacy_kernels() with one DecodeKernel row per format.
// So a format in an existing family is its block struct, its kernel and one entry in the list.
#define GGUFTOOL_DECODER(type, Block)                                   \
    void decode_##type(const uint8_t *in, size_t nblocks, float *out) { \
        decode_blocks<Block>(type##_blocks, in, nblocks, out);          \
    }
#define GGUFTOOL_STREAMING_DECODER(type, Block)                                            \
    void decode_##type(const uint8_t *in, size_t nblocks, float *out) {                    \
        decode_blocks<Block>(type##_blocks<false>, type##_blocks<true>, in, nblocks, out); \
    }
#define GGUFTOOL_DISPATCHER(type, Block)                                   \
    GGUFTOOL_EXPORT(decode_##type);                                        \
    static void dispatch_##type(const uint8_t *in, size_t n, float *out) { \
        GGUFTOOL_DISPATCH(decode_##type)(in, n, out);                      \
    }
#define GGUFTOOL_KERNEL_ROW(type, Block) DecodeKernel{GgmlType::type, dispatch_##type},
#define GGUFTOOL_FAMILY_KERNELS(family, FORMATS)                                   \
    namespace gguftool::formats {                                                  \
    FORMATS(GGUFTOOL_DISPATCHER)                                                   \
    std::span<const DecodeKernel> family##_kernels() {                             \
        static constexpr DecodeKernel kKernels[] = {FORMATS(GGUFTOOL_KERNEL_ROW)}; \
        return kKernels;                                                           \
    }                                                                              \
    }
