// Legacy 32-element formats: q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 (layouts in formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target. Each block is decoded in chunks
// of one vector (16 floats on AVX-512, 8 on AVX2, 1 on the portable target): widen the chunk's
// bytes to int32, apply the integer offset, convert, scale. The arithmetic and its order are
// ggml's: an integer times the f16 scale, then `+ m` as a second rounding where the format has a
// minimum. No fused multiply-add.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "legacy.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_LEGACY_FORMATS(X) \
    X(q4_0, BlockQ4_0)             \
    X(q4_1, BlockQ4_1)             \
    X(q5_0, BlockQ5_0)             \
    X(q5_1, BlockQ5_1)             \
    X(q8_0, BlockQ8_0)             \
    X(q8_1, BlockQ8_1)
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {

// q4_0: f16 d, 16 bytes of nibbles. y[j] = ((q[j] & 15) - 8) * d, y[j+16] from q[j] >> 4.
template <bool kStream>
void q4_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const DU8 du8;
    const size_t n = hn::Lanes(di);
    const auto low4 = hn::Set(du8, 0x0F);
    const auto eight = hn::Set(di, 8);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ4_0), out += kBlockElements<BlockQ4_0>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        for (size_t j = 0; j < 16; j += n) {
            const auto q = hn::LoadU(du8, in + offsetof(BlockQ4_0, qs) + j);
            store_scaled<kStream>(hn::Sub(hn::PromoteTo(di, hn::And(q, low4)), eight), d, out + j);
            store_scaled<kStream>(hn::Sub(hn::PromoteTo(di, hn::ShiftRight<4>(q)), eight), d,
                                  out + 16 + j);
        }
    }
}

// q4_1: f16 d, f16 m, 16 bytes of nibbles. y = nibble * d + m, low nibbles first.
template <bool kStream>
void q4_1_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const DU8 du8;
    const size_t n = hn::Lanes(di);
    const auto low4 = hn::Set(du8, 0x0F);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ4_1), out += kBlockElements<BlockQ4_1>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        const VF m = hn::Set(DF(), load_f16_scale(in + offsetof(BlockQ4_1, m)));
        for (size_t j = 0; j < 16; j += n) {
            const auto q = hn::LoadU(du8, in + offsetof(BlockQ4_1, qs) + j);
            store_scaled_offset<kStream>(hn::PromoteTo(di, hn::And(q, low4)), d, m, out + j);
            store_scaled_offset<kStream>(hn::PromoteTo(di, hn::ShiftRight<4>(q)), d, m,
                                         out + 16 + j);
        }
    }
}

// The 5-bit codes of q5_0/q5_1 for elements [j, j+n) (low nibbles) and [16+j, 16+j+n) (high
// nibbles): bit i of the little-endian word qh is the fifth bit of element i.
struct Q5Codes {
    VI lo, hi;                    // without the fifth bit
    hn::Mask<DI> lo_bit, hi_bit;  // where the fifth bit (16) is set
};

HWY_INLINE Q5Codes q5_codes(const uint8_t *qs, VI qh, size_t j) {
    const DI di;
    const DU8 du8;
    const auto q = hn::LoadU(du8, qs + j);
    return {hn::PromoteTo(di, hn::And(q, hn::Set(du8, 0x0F))),
            hn::PromoteTo(di, hn::ShiftRight<4>(q)),
            hn::TestBit(qh, hn::Load(di, kBitOfLane.data() + j)),
            hn::TestBit(qh, hn::Load(di, kBitOfLane.data() + 16 + j))};
}

// q5_0: f16 d, u32 qh, 16 bytes of nibbles. y = ((nibble | fifth bit << 4) - 16) * d.
template <bool kStream>
void q5_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const size_t n = hn::Lanes(di);
    const auto sixteen = hn::Set(di, 16);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ5_0), out += kBlockElements<BlockQ5_0>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        const VI qh = hn::Set(di, int32_t(load_u32(in + offsetof(BlockQ5_0, qh))));
        for (size_t j = 0; j < 16; j += n) {
            const Q5Codes c = q5_codes(in + offsetof(BlockQ5_0, qs), qh, j);
            // (x | 16) - 16 is x where the bit is set, x - 16 where it is not.
            store_scaled<kStream>(hn::IfThenElse(c.lo_bit, c.lo, hn::Sub(c.lo, sixteen)), d,
                                  out + j);
            store_scaled<kStream>(hn::IfThenElse(c.hi_bit, c.hi, hn::Sub(c.hi, sixteen)), d,
                                  out + 16 + j);
        }
    }
}

// q5_1: f16 d, f16 m, u32 qh, 16 bytes of nibbles. y = (nibble | fifth bit << 4) * d + m.
template <bool kStream>
void q5_1_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const size_t n = hn::Lanes(di);
    const auto sixteen = hn::Set(di, 16);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ5_1), out += kBlockElements<BlockQ5_1>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        const VF m = hn::Set(DF(), load_f16_scale(in + offsetof(BlockQ5_1, m)));
        const VI qh = hn::Set(di, int32_t(load_u32(in + offsetof(BlockQ5_1, qh))));
        for (size_t j = 0; j < 16; j += n) {
            const Q5Codes c = q5_codes(in + offsetof(BlockQ5_1, qs), qh, j);
            store_scaled_offset<kStream>(hn::IfThenElse(c.lo_bit, hn::Add(c.lo, sixteen), c.lo), d,
                                         m, out + j);
            store_scaled_offset<kStream>(hn::IfThenElse(c.hi_bit, hn::Add(c.hi, sixteen), c.hi), d,
                                         m, out + 16 + j);
        }
    }
}

// q8_0 (f16 d, 32 int8) and q8_1 (f16 d, f16 s unused, 32 int8): y = q * d.
template <class Block, bool kStream>
HWY_INLINE void q8_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DI di;
    const DI8 di8;
    const size_t n = hn::Lanes(di);
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(Block), out += kBlockElements<Block>) {
        const VF d = hn::Set(DF(), load_f16_scale(in));
        const int8_t *q = reinterpret_cast<const int8_t *>(in + offsetof(Block, qs));
        for (size_t j = 0; j < 32; j += n) {
            store_scaled<kStream>(hn::PromoteTo(di, hn::LoadU(di8, q + j)), d, out + j);
        }
    }
}

template <bool kStream>
void q8_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    q8_blocks<BlockQ8_0, kStream>(in, nblocks, out);
}
template <bool kStream>
void q8_1_blocks(const uint8_t *in, size_t nblocks, float *out) {
    q8_blocks<BlockQ8_1, kStream>(in, nblocks, out);
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_LEGACY_FORMATS(GGUFTOOL_STREAMING_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(legacy, GGUFTOOL_LEGACY_FORMATS)
#endif  // HWY_ONCE
