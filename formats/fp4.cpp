// FP4 (E2M1) formats with power-of-two or FP8 scales: mxfp4 nvfp4 (layouts in formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target. A byte shuffle maps each nibble
// to its doubled e2m1 value (an int8, e2m1_table.hpp), which is widened, converted and multiplied
// by the halved block scale: ggml's `x * d` for an integer x, one rounding.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fp4.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "e2m1_table.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_FP4_FORMATS(X) \
    X(mxfp4, BlockMxfp4)        \
    X(nvfp4, BlockNvfp4)
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {

// The doubled e2m1 values of the low and high nibbles of n bytes, as int32 lanes.
struct Fp4Values {
    VI lo, hi;
};

HWY_INLINE Fp4Values fp4_values(const uint8_t *q) {
    const DI di;
#if HWY_TARGET == HWY_SCALAR
    // One lane: no byte shuffle to speak of, index the table directly.
    return {hn::Set(di, kE2m1Doubled[q[0] & 0x0F]), hn::Set(di, kE2m1Doubled[q[0] >> 4])};
#else
    const DU8 du8;
    const DI8 di8;
    const auto table = hn::Load(hn::Full128<int8_t>(), kE2m1Doubled);
    const auto bytes = hn::LoadU(du8, q);
    const auto lo = hn::TableLookupBytes(table, hn::And(bytes, hn::Set(du8, 0x0F)));
    const auto hi = hn::TableLookupBytes(table, hn::ShiftRight<4>(bytes));
    return {hn::PromoteTo(di, hn::BitCast(di8, lo)), hn::PromoteTo(di, hn::BitCast(di8, hi))};
#endif
}

// mxfp4: e8m0 scale e, 16 bytes of nibbles. y[j] = e2m1x2[q[j] & 15] * 2^(e-128),
// y[j+16] from q[j] >> 4.
template <bool kStream>
void mxfp4_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const size_t n = hn::Lanes(DF());
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockMxfp4), out += kBlockElements<BlockMxfp4>) {
        const VF d = hn::Set(DF(), e8m0_to_f32_half(in[offsetof(BlockMxfp4, e)]));
        for (size_t j = 0; j < 16; j += n) {
            const Fp4Values v = fp4_values(in + offsetof(BlockMxfp4, qs) + j);
            store_scaled<kStream>(v.lo, d, out + j);
            store_scaled<kStream>(v.hi, d, out + 16 + j);
        }
    }
}

// nvfp4: 4 ue4m3 scales, then 4 sub-blocks of 8 bytes of nibbles. Sub-block s gives
// y[16s + j] = e2m1x2[q[8s+j] & 15] * ue4m3_half(scale[s]), y[16s + 8 + j] from q[8s+j] >> 4.
template <bool kStream>
void nvfp4_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
#if HWY_MAX_BYTES == 64
    // 16 lanes, one sub-block per vector. A 16-byte load holds two sub-blocks; interleaving the
    // 64-bit halves of the low and high nibbles' values puts each sub-block's outputs in order.
    const DI di;
    const DU8 du8;  // 16 bytes
    const DI8 di8;
    const hn::Repartition<uint64_t, DU8> du64;
    const auto table = hn::Load(di8, kE2m1Doubled);
    const auto low4 = hn::Set(du8, 0x0F);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockNvfp4), out += kBlockElements<BlockNvfp4>) {
        for (size_t p = 0; p < 2; ++p) {
            const auto bytes = hn::LoadU(du8, in + offsetof(BlockNvfp4, qs) + 16 * p);
            const auto lo = hn::BitCast(du64, hn::TableLookupBytes(table, hn::And(bytes, low4)));
            const auto hi =
                hn::BitCast(du64, hn::TableLookupBytes(table, hn::ShiftRight<4>(bytes)));
            const auto first = hn::BitCast(di8, hn::InterleaveLower(du64, lo, hi));
            const auto second = hn::BitCast(di8, hn::InterleaveUpper(du64, lo, hi));
            store_scaled<kStream>(hn::PromoteTo(di, first),
                                  hn::Set(df, kUe4m3Half[in[offsetof(BlockNvfp4, d) + 2 * p]]),
                                  out + 32 * p);
            store_scaled<kStream>(hn::PromoteTo(di, second),
                                  hn::Set(df, kUe4m3Half[in[offsetof(BlockNvfp4, d) + 2 * p + 1]]),
                                  out + 32 * p + 16);
        }
    }
#else
    const size_t n = hn::Lanes(df);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockNvfp4), out += kBlockElements<BlockNvfp4>) {
        for (size_t s = 0; s < 4; ++s) {
            const VF d = hn::Set(df, kUe4m3Half[in[offsetof(BlockNvfp4, d) + s]]);
            for (size_t j = 0; j < 8; j += n) {
                const Fp4Values v = fp4_values(in + offsetof(BlockNvfp4, qs) + 8 * s + j);
                store_scaled<kStream>(v.lo, d, out + 16 * s + j);
                store_scaled<kStream>(v.hi, d, out + 16 * s + 8 + j);
            }
        }
    }
#endif
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_FP4_FORMATS(GGUFTOOL_STREAMING_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(fp4, GGUFTOOL_FP4_FORMATS)
#endif  // HWY_ONCE
