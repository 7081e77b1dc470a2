// Highway helpers shared by the block decoders. Like the family files that include it, this is
// compiled once per instruction set, hence Highway's toggling include guard instead of #pragma
// once.
#if defined(GGUFTOOL_FORMATS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef GGUFTOOL_FORMATS_SIMD_INL_H_
#undef GGUFTOOL_FORMATS_SIMD_INL_H_
#else
#define GGUFTOOL_FORMATS_SIMD_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "common.hpp"
#include "formats.hpp"

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// A full vector of floats (16 lanes on AVX3, 8 on AVX2, 1 on HWY_SCALAR, which is the portable
// target with GCC < 12.3, EMU128 otherwise), the 32-bit integers converting to them, and the
// bytes widening to those.
using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DU8 = hn::Rebind<uint8_t, DF>;
using DI8 = hn::Rebind<int8_t, DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

// Lane i holds bit i: TestBit against a broadcast 32-bit word spreads its bits over 32 lanes.
alignas(64) inline constexpr std::array<int32_t, 32> kBitOfLane = [] {
    std::array<int32_t, 32> t{};
    for (int i = 0; i < 32; ++i) t[i] = int32_t(uint32_t(1) << i);
    return t;
}();

// The f16 at p, as fp16_to_f32 (gguftool/half.hpp) would give it: the x86 targets use F16C's
// conversion, which is exact and quiets NaNs the same way.
HWY_INLINE float load_f16_scale(const uint8_t *p) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    const hn::CappedTag<float, 1> d1;
    const hn::Rebind<hwy::float16_t, decltype(d1)> dh;
    return hn::GetLane(
        hn::PromoteTo(d1, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t *>(p))));
#else
    return load_f16(p);
#endif
}

// Stores a vector of outputs: normally, or with a non-temporal store that bypasses the caches
// (then out must be vector aligned); see decode_blocks.
template <bool kStream>
HWY_INLINE void store(VF v, float *out) {
    if constexpr (kStream) {
        hn::Stream(v, DF(), out);
    } else {
        hn::StoreU(v, DF(), out);
    }
}

// out[i] = float(q[i]) * d: ggml's `x * d` for an integer x, one rounding.
template <bool kStream>
HWY_INLINE void store_scaled(VI q, VF d, float *out) {
    store<kStream>(hn::Mul(hn::ConvertTo(DF(), q), d), out);
}

// out[i] = float(q[i]) * d + m, rounded twice as ggml does (never a fused multiply-add).
template <bool kStream>
HWY_INLINE void store_scaled_offset(VI q, VF d, VF m, float *out) {
    store<kStream>(hn::Add(hn::Mul(hn::ConvertTo(DF(), q), d), m), out);
}

// Copies n floats from src to dst with non-temporal (streaming) stores where dst is vector
// aligned; the partial vectors at either end are stored normally.
HWY_INLINE void stream_copy(const float *HWY_RESTRICT src, size_t n, float *HWY_RESTRICT dst) {
    const DF df;
    const size_t lanes = hn::Lanes(df);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(dst);
    size_t i = addr % sizeof(float) ? n : std::min(n, (0 - addr) / sizeof(float) % lanes);
    std::memcpy(dst, src, i * sizeof(float));
    for (; i + lanes <= n; i += lanes) hn::Stream(hn::LoadU(df, src + i), df, dst + i);
    std::memcpy(dst + i, src + i, (n - i) * sizeof(float));
}

using BlockKernel = void (*)(const uint8_t *in, size_t nblocks, float *out);

// Runs a kernel over nblocks blocks of the format Block (sizeof(Block) bytes, each giving
// kBlockElements<Block> floats, a multiple of the vector length): `plain` stores normally,
// `streaming` (may be null) with non-temporal stores to a vector-aligned output. A large output is
// written by `streaming` when it is vector aligned; otherwise (or without one) it is decoded a few
// KiB at a time by `plain` into a scratch buffer and streamed from there, which is slower but works
// for any alignment. Only on x86, where the stores really are non-temporal.
template <class Block>
HWY_INLINE void decode_blocks(BlockKernel plain, BlockKernel streaming, const uint8_t *in,
                              size_t nblocks, float *out) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    constexpr size_t block_bytes = sizeof(Block), block_floats = kBlockElements<Block>;
    if (nblocks * block_floats * sizeof(float) >= kStreamMinBytes) {
        if (streaming &&
            reinterpret_cast<uintptr_t>(out) % (hn::Lanes(DF()) * sizeof(float)) == 0) {
            streaming(in, nblocks, out);
        } else {
            constexpr size_t kScratchFloats = 4096;  // a multiple of every block size
            static_assert(kScratchFloats % block_floats == 0);
            alignas(64) float scratch[kScratchFloats];
            const size_t chunk = kScratchFloats / block_floats;
            for (size_t b = 0; b < nblocks; b += chunk) {
                const size_t nb = std::min(chunk, nblocks - b);
                plain(in + b * block_bytes, nb, scratch);
                stream_copy(scratch, nb * block_floats, out + b * block_floats);
            }
        }
        hwy::FlushStream();  // order the streamed stores before whatever the caller does next
        return;
    }
#else
    (void)streaming;
#endif
    plain(in, nblocks, out);
}

// The same for a kernel that has no streaming variant: large outputs go through the scratch buffer.
template <class Block>
HWY_INLINE void decode_blocks(BlockKernel plain, const uint8_t *in, size_t nblocks, float *out) {
    decode_blocks<Block>(plain, nullptr, in, nblocks, out);
}

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // GGUFTOOL_FORMATS_SIMD_INL_H_
