// 1- and 2-bit formats with one f16 scale per block: q1_0 q2_0 (layouts in formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target. The codes are read a
// little-endian 32-bit word at a time, broadcast to every lane, and each lane picks out its own
// bit (q1_0: d or -d) or bit pair (q2_0: (code - 1) * d, converted and multiplied as ggml does).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "q1q2.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_Q1Q2_FORMATS(X) \
    X(q1_0, BlockQ1_0)           \
    X(q2_0, BlockQ2_0)
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {

// q1_0: f16 d, 16 bytes of bits. Element j is bit j % 8 of byte j / 8: d if set, else -d.
template <bool kStream>
void q1_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DI di;
    const size_t n = hn::Lanes(df);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ1_0), out += kBlockElements<BlockQ1_0>) {
        const float d = load_f16_scale(in);
        const VF pos = hn::Set(df, d);
        const VF neg = hn::Set(df, -d);  // a sign flip, as ggml's `-d` (NaNs too)
        for (size_t w = 0; w < 4; ++w) {
            const VI word = hn::Set(di, int32_t(load_u32(in + offsetof(BlockQ1_0, qs) + 4 * w)));
            for (size_t j = 0; j < 32; j += n) {
                const auto set = hn::TestBit(word, hn::Load(di, kBitOfLane.data() + j));
                store<kStream>(hn::IfThenElse(hn::RebindMask(df, set), pos, neg), out + 32 * w + j);
            }
        }
    }
}

// q2_0: f16 d, 16 bytes of 2-bit codes. Element j is bits 2*(j % 4).. of byte j / 4;
// code c gives (c - 1) * d.
template <bool kStream>
void q2_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const size_t n = hn::Lanes(di);
    // Lane i of a 16-element group shifts its code down by 2*i.
    alignas(64) static constexpr int32_t kShift[16] = {0,  2,  4,  6,  8,  10, 12, 14,
                                                       16, 18, 20, 22, 24, 26, 28, 30};
    const auto three = hn::Set(di, 3);
    const auto one = hn::Set(di, 1);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ2_0), out += kBlockElements<BlockQ2_0>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        for (size_t w = 0; w < 4; ++w) {
            // Shifting the signed word is fine: the mask keeps 2 bits below bit 31.
            const VI word = hn::Set(di, int32_t(load_u32(in + offsetof(BlockQ2_0, qs) + 4 * w)));
            for (size_t j = 0; j < 16; j += n) {
                const VI code = hn::And(hn::Shr(word, hn::Load(di, kShift + j)), three);
                store_scaled<kStream>(hn::Sub(code, one), d, out + 16 * w + j);
            }
        }
    }
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_Q1Q2_FORMATS(GGUFTOOL_STREAMING_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(q1q2, GGUFTOOL_Q1Q2_FORMATS)
#endif  // HWY_ONCE
