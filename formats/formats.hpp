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

struct Kernel {
    GgmlType type;
    BlockDecoder decode;  // dispatches to the best instruction set at call time
};

// Every family file contributes its kernels (formats/<family>.cpp lists its formats).
std::span<const Kernel> legacy_kernels();
std::span<const Kernel> kquant_kernels();
std::span<const Kernel> iq_kernels();
std::span<const Kernel> ternary_kernels();
std::span<const Kernel> fp4_kernels();
std::span<const Kernel> q1q2_kernels();

// The decoder for `t`, or nullptr for plain and removed types.
BlockDecoder block_decoder(GgmlType t);

}  // namespace gguftool::formats
