// Ternary formats: tq1_0 tq2_0, 256 elements per block with codes -1, 0, 1 (layouts in
// formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target; each loop decodes Lanes(df)
// elements at a time. y = float(code - 1) * d, bit-identical to ggml's dequantize_row_tq*_0.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ternary.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_TERNARY_FORMATS(X) \
    X(tq1_0, BlockTq1_0)            \
    X(tq2_0, BlockTq2_0)
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {
namespace {

// Lanes(df) bytes at p, zero-extended to int32 lanes.
HWY_INLINE VI load_u8(const uint8_t *p) {
    return hn::PromoteTo(DI(), hn::LoadU(hn::Rebind<uint8_t, DF>(), p));
}

// float(code - 1) * d, ggml's arithmetic.
HWY_INLINE VF ternary_value(VI code, VF d) {
    return hn::Mul(hn::ConvertTo(DF(), hn::Sub(code, hn::Set(DI(), 1))), d);
}

// On the x86 targets the four possible results of a block (codes 0..3) are computed once, with
// the same products, and each code looks its result up. The portable targets multiply per
// element: their per-lane loops would let the compiler fold (-1) * d into -d, which differs from
// the multiplication in the sign of a NaN.
constexpr bool kLookup = HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128;

class Ternary {
public:
    explicit Ternary(float d) : v_(hn::Set(DF(), d)) {
        if constexpr (kLookup) v_ = ternary_value(hn::And(hn::Iota(DI(), 0), hn::Set(DI(), 3)), v_);
    }
    VF operator()(VI code) const {
        if constexpr (kLookup) return hn::TableLookupLanes(v_, hn::IndicesFromVec(DF(), code));
        return ternary_value(code, v_);
    }

private:
    VF v_;  // lane L: (L % 4 - 1) * d with kLookup, else d
};

// Base-3 digits of tq1_0 bytes, most significant first. A byte holds 5 digits as the fraction
// x / 3^5 scaled to 256 (rounded up); t = (byte * 3^n) mod 256 drops the first n digits, and
// (3 * t) >> 8 is then digit n. Stepping t -> (3 * t) mod 256 walks n = 0, 1, 2, ...
HWY_INLINE VI next_digit(VI &t) {
    const VI u = hn::Add(t, hn::ShiftLeft<1>(t));
    t = hn::And(u, hn::Set(DI(), 255));
    return hn::ShiftRight<8>(u);
}

}  // namespace

// tq1_0: qs[48] | qh[4] | f16 d. qs bytes 0..31 hold elements 32n + m (digit n of byte m),
// bytes 32..47 elements 160 + 16n + m, and qh bytes elements 240 + 4n + m (4 digits each).
void tq1_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DI di;
    const size_t N = hn::Lanes(df);
    // Multipliers 3^n for the qh part, lane 4n + m.
    static constexpr int32_t kPow3Qh[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockTq1_0), out += kBlockElements<BlockTq1_0>) {
        const Ternary ternary(load_f16_scale(in + offsetof(BlockTq1_0, d)));
        for (size_t m = 0; m < 32; m += N) {
            VI t = load_u8(in + offsetof(BlockTq1_0, qs) + m);
            for (int n = 0; n < 5; ++n) hn::StoreU(ternary(next_digit(t)), df, out + 32 * n + m);
        }
        for (size_t m = 0; m < 16; m += N) {
            VI t = load_u8(in + offsetof(BlockTq1_0, qs) + 32 + m);
            for (int n = 0; n < 5; ++n)
                hn::StoreU(ternary(next_digit(t)), df, out + 160 + 16 * n + m);
        }
        const uint8_t *h = in + offsetof(BlockTq1_0, qh);
        const uint8_t qh[16] = {h[0], h[1], h[2], h[3], h[0], h[1], h[2], h[3],
                                h[0], h[1], h[2], h[3], h[0], h[1], h[2], h[3]};
        for (size_t i = 0; i < 16; i += N) {
            VI t = hn::And(hn::Mul(load_u8(qh + i), hn::LoadU(di, kPow3Qh + i)), hn::Set(di, 255));
            hn::StoreU(ternary(next_digit(t)), df, out + 240 + i);
        }
    }
}

// tq2_0: qs[64] | f16 d. Byte 32h + m holds elements 128h + 32j + m in bits 2j..2j+1.
void tq2_0_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DI di;
    const size_t N = hn::Lanes(df);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockTq2_0), out += kBlockElements<BlockTq2_0>) {
        const Ternary ternary(load_f16_scale(in + offsetof(BlockTq2_0, d)));
        for (int h = 0; h < 2; ++h) {
            for (size_t m = 0; m < 32; m += N) {
                const VI v = load_u8(in + offsetof(BlockTq2_0, qs) + 32 * h + m);
                for (int j = 0; j < 4; ++j) {
                    const VI code = hn::And(hn::ShiftRightSame(v, 2 * j), hn::Set(di, 3));
                    hn::StoreU(ternary(code), df, out + 128 * h + 32 * j + m);
                }
            }
        }
    }
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_TERNARY_FORMATS(GGUFTOOL_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(ternary, GGUFTOOL_TERNARY_FORMATS)
#endif  // HWY_ONCE
