// K-quant formats: q2_K q3_K q4_K q5_K q6_K q8_K, 256 elements per block (layouts in
// formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target. A block is decoded in two steps:
// its sub-block scales become floats and its codes are unpacked into 256 bytes with byte vectors
// of up to 32 lanes; then every vector of Lanes(df) codes (always inside one 16- or 32-element
// sub-block) is widened, converted and scaled. q8_K needs only the second step. The arithmetic
// follows ggml operation by operation (same products, same order, two roundings, no fused
// multiply-add), so the output is bit-identical to dequantize_row_<type>.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kquant.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_KQUANT_FORMATS(X) \
    X(q2_k, BlockQ2_K)             \
    X(q3_k, BlockQ3_K)             \
    X(q4_k, BlockQ4_K)             \
    X(q5_k, BlockQ5_K)             \
    X(q6_k, BlockQ6_K)             \
    X(q8_k, BlockQ8_K)
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {
namespace {

// Byte vectors for unpacking codes.
using DB = hn::CappedTag<uint8_t, 32>;
using VB = hn::Vec<DB>;

// Lanes(df) bytes at p, zero- or sign-extended to int32 lanes.
HWY_INLINE VI load_u8(const uint8_t *p) {
    return hn::PromoteTo(DI(), hn::LoadU(DU8(), p));
}
HWY_INLINE VI load_i8(const uint8_t *p) {
    return hn::PromoteTo(DI(), hn::LoadU(DI8(), reinterpret_cast<const int8_t *>(p)));
}

HWY_INLINE VF to_float(VI v) {
    return hn::ConvertTo(DF(), v);
}

// Bit `from` of every byte moved to bit `to`, the other bits cleared.
HWY_INLINE VB move_bit(VB v, int from, int to) {
    const VB moved = from > to ? hn::ShiftRightSame(v, from - to) : hn::ShiftLeftSame(v, to - from);
    return hn::And(moved, hn::Set(DB(), uint8_t(1u << to)));
}

// The 12 packed scale bytes of q3_K, q4_K and q5_K, as three little-endian 32-bit words.
struct Packed12 {
    uint32_t a0, a1, a2;
    explicit Packed12(const uint8_t *s)
        : a0(load_u32(s)), a1(load_u32(s + 4)), a2(load_u32(s + 8)) {}
};

// q3_K: six-bit scales i .. i + Lanes - 1 of 16. Scale i = 4r + k (k = 0..3) has its low four bits
// in byte k of word r % 2 (a0 or a1), in the low nibble for r < 2 and the high one for r >= 2, and
// its top two bits at bits 2r..2r+1 of byte k of a2. Computed in 32-bit lanes with per-lane shift
// counts: assembling the 16 bytes in memory and reloading them stalls on store forwarding.
HWY_INLINE VI scales_q3(const Packed12 &p, size_t i) {
    const hn::RebindToUnsigned<DF> du;
    const auto lane = hn::Iota(du, uint32_t(i));
    const auto r = hn::ShiftRight<2>(lane);
    const auto byte_shift = hn::ShiftLeft<3>(hn::And(lane, hn::Set(du, 3)));
    const auto odd = hn::Eq(hn::And(r, hn::Set(du, 1)), hn::Set(du, 1));
    const auto word = hn::IfThenElse(odd, hn::Set(du, p.a1), hn::Set(du, p.a0));
    const auto nibble_shift = hn::ShiftLeft<1>(hn::And(r, hn::Set(du, 2)));  // 4 for r >= 2
    const auto low = hn::And(word >> hn::Add(byte_shift, nibble_shift), hn::Set(du, 15));
    const auto high =
        hn::And(hn::Set(du, p.a2) >> hn::Add(byte_shift, hn::ShiftLeft<1>(r)), hn::Set(du, 3));
    return hn::BitCast(DI(), hn::Or(low, hn::ShiftLeft<4>(high)));
}

constexpr uint32_t kLow2 = 0x03030303u, kLow4 = 0x0F0F0F0Fu, kLow6 = 0x3F3F3F3Fu;

// q4_K / q5_K: 8 six-bit scales then 8 six-bit mins. Bytes 0..3 hold scales 0..3 and bytes 4..7
// mins 0..3 in their low 6 bits; bytes 8..11 hold scales 4..7 (low nibble) and mins 4..7 (high
// nibble), whose top two bits are the spare top bits of bytes 0..3 (scales) and 4..7 (mins).
HWY_INLINE void unpack_scales_mins(const uint8_t *s, uint8_t out[16]) {
    const Packed12 p(s);
    const uint32_t w[4] = {
        p.a0 & kLow6,
        (p.a2 & kLow4) | (p.a0 >> 6 & kLow2) << 4,
        p.a1 & kLow6,
        (p.a2 >> 4 & kLow4) | (p.a1 >> 6 & kLow2) << 4,
    };
    std::memcpy(out, w, 16);
}

// q4_K / q5_K sub-block factors: sm[j] = d * scale_j and sm[8 + j] = dmin * min_j, j = 0..7.
template <class Block>
HWY_INLINE void scales_mins_f32(const uint8_t *block, float sm[16]) {
    const DF df;
    uint8_t packed[16];
    unpack_scales_mins(block + offsetof(Block, scales), packed);
    const VF d = hn::Set(df, load_f16_scale(block));
    const VF dmin = hn::Set(df, load_f16_scale(block + offsetof(Block, dmin)));
    for (size_t i = 0; i < 16; i += hn::Lanes(df)) {
        const VF factor = hn::IfThenElse(hn::FirstN(df, i < 8 ? 8 - i : 0), d, dmin);
        hn::Store(hn::Mul(factor, to_float(load_u8(packed + i))), df, sm + i);
    }
}

// Hides from the optimizer where p points. The per-block scales are stored just before they are
// used; without this GCC keeps them in a register and extracts each one with a lane permute, where
// a broadcast load is much cheaper (1.5x faster decoding on AVX-512).
template <class T>
HWY_INLINE const T *opaque(const T *p) {
    asm("" : "+r"(p));
    return p;
}

// out[i] = scale[i / 16] * float(code[i]) for the 256 signed codes of a block.
template <bool kStream>
HWY_INLINE void scale_signed_codes(const uint8_t *codes, const float *scale, float *out) {
    const DF df;
    scale = opaque(scale);
    for (size_t i = 0; i < 256; i += hn::Lanes(df))
        store<kStream>(hn::Mul(hn::Set(df, scale[i / 16]), to_float(load_i8(codes + i))), out + i);
}

// out[i] = scale[i / S] * float(code[i]) - min[i / S] for the 256 unsigned codes of a block.
template <size_t S, bool kStream>
HWY_INLINE void scale_min_codes(const uint8_t *codes, const float *scale, const float *min,
                                float *out) {
    const DF df;
    scale = opaque(scale);
    min = opaque(min);
    for (size_t i = 0; i < 256; i += hn::Lanes(df)) {
        const VF x = hn::Mul(hn::Set(df, scale[i / S]), to_float(load_u8(codes + i)));
        store<kStream>(hn::Sub(x, hn::Set(df, min[i / S])), out + i);
    }
}

}  // namespace

// q2_K: scales[16] | qs[64] | f16 d | f16 dmin. Sub-block i (16 elements) has scale
// d * (scales[i] & 15) and min dmin * (scales[i] >> 4); y = scale * q - min, q 2 bits.
// Bits 2j..2j+1 of qs[32h + l] are element 128h + 32j + l.
template <bool kStream>
void q2_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DI di;
    const DB db;
    const size_t N = hn::Lanes(df), NB = hn::Lanes(db);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ2_K), out += kBlockElements<BlockQ2_K>) {
        const VF d = hn::Set(df, load_f16_scale(in + offsetof(BlockQ2_K, d)));
        const VF dmin = hn::Set(df, load_f16_scale(in + offsetof(BlockQ2_K, dmin)));
        HWY_ALIGN float scale[16], min[16];
        for (size_t i = 0; i < 16; i += N) {
            const VI sc = load_u8(in + offsetof(BlockQ2_K, scales) + i);
            hn::Store(hn::Mul(d, to_float(hn::And(sc, hn::Set(di, 15)))), df, scale + i);
            hn::Store(hn::Mul(dmin, to_float(hn::ShiftRight<4>(sc))), df, min + i);
        }
        HWY_ALIGN uint8_t codes[256];
        for (int h = 0; h < 2; ++h) {
            for (size_t l = 0; l < 32; l += NB) {
                const VB q = hn::LoadU(db, in + offsetof(BlockQ2_K, qs) + 32 * h + l);
                for (int j = 0; j < 4; ++j)
                    hn::Store(hn::And(hn::ShiftRightSame(q, 2 * j), hn::Set(db, 3)), db,
                              codes + 128 * h + 32 * j + l);
            }
        }
        scale_min_codes<16, kStream>(codes, scale, min, out);
    }
}

// q3_K: hmask[32] | qs[64] | scales[12] | f16 d. Sub-block i has scale d * (s_i - 32). Element
// 128h + 32j + l has the 2-bit field j of qs[32 + 32h + l] as its low bits and bit 4h + j of
// hmask[l] as bit 2; its value is that 3-bit code minus 4.
template <bool kStream>
void q3_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DI di;
    const DB db;
    const size_t N = hn::Lanes(df), NB = hn::Lanes(db);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ3_K), out += kBlockElements<BlockQ3_K>) {
        const VF d = hn::Set(df, load_f16_scale(in + offsetof(BlockQ3_K, d)));
        const Packed12 packed(in + offsetof(BlockQ3_K, scales));
        HWY_ALIGN float scale[16];
        for (size_t i = 0; i < 16; i += N)
            hn::Store(hn::Mul(d, to_float(hn::Sub(scales_q3(packed, i), hn::Set(di, 32)))), df,
                      scale + i);
        HWY_ALIGN uint8_t codes[256];  // int8 values -4..3
        for (int h = 0; h < 2; ++h) {
            for (size_t l = 0; l < 32; l += NB) {
                const VB q = hn::LoadU(db, in + offsetof(BlockQ3_K, qs) + 32 * h + l);
                const VB hm = hn::LoadU(db, in + offsetof(BlockQ3_K, hmask) + l);
                for (int j = 0; j < 4; ++j) {
                    const VB low = hn::And(hn::ShiftRightSame(q, 2 * j), hn::Set(db, 3));
                    // low - 4 where the hmask bit is clear: subtract (~bit) << 2.
                    const VB high = move_bit(hm, 4 * h + j, 2);
                    const VB code = hn::Sub(low, hn::AndNot(high, hn::Set(db, 4)));
                    hn::Store(code, db, codes + 128 * h + 32 * j + l);
                }
            }
        }
        scale_signed_codes<kStream>(codes, scale, out);
    }
}

// q4_K: f16 d | f16 dmin | scales[12] | qs[128]. Group g (64 elements) uses qs[32g..32g+31]: the
// low nibbles are sub-block 2g, the high nibbles sub-block 2g+1; y = (d*sc) * q - (dmin*m).
template <bool kStream>
void q4_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DB db;
    const size_t NB = hn::Lanes(db);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ4_K), out += kBlockElements<BlockQ4_K>) {
        HWY_ALIGN float sm[16];
        scales_mins_f32<BlockQ4_K>(in, sm);
        HWY_ALIGN uint8_t codes[256];
        for (int g = 0; g < 4; ++g) {
            for (size_t l = 0; l < 32; l += NB) {
                const VB q = hn::LoadU(db, in + offsetof(BlockQ4_K, qs) + 32 * g + l);
                hn::Store(hn::And(q, hn::Set(db, 15)), db, codes + 64 * g + l);
                hn::Store(hn::ShiftRight<4>(q), db, codes + 64 * g + 32 + l);
            }
        }
        scale_min_codes<32, kStream>(codes, sm, sm + 8, out);
    }
}

// q5_K: f16 d | f16 dmin | scales[12] | qh[32] | qs[128]. As q4_K, with bit 2g (low nibbles) or
// 2g+1 (high nibbles) of qh[l] as bit 4 of the code.
template <bool kStream>
void q5_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DB db;
    const size_t NB = hn::Lanes(db);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ5_K), out += kBlockElements<BlockQ5_K>) {
        HWY_ALIGN float sm[16];
        scales_mins_f32<BlockQ5_K>(in, sm);
        HWY_ALIGN uint8_t codes[256];
        for (int g = 0; g < 4; ++g) {
            for (size_t l = 0; l < 32; l += NB) {
                const VB q = hn::LoadU(db, in + offsetof(BlockQ5_K, qs) + 32 * g + l);
                const VB h = hn::LoadU(db, in + offsetof(BlockQ5_K, qh) + l);
                const VB lo = hn::Or(hn::And(q, hn::Set(db, 15)), move_bit(h, 2 * g, 4));
                const VB hi = hn::Or(hn::ShiftRight<4>(q), move_bit(h, 2 * g + 1, 4));
                hn::Store(lo, db, codes + 64 * g + l);
                hn::Store(hi, db, codes + 64 * g + 32 + l);
            }
        }
        scale_min_codes<32, kStream>(codes, sm, sm + 8, out);
    }
}

// q6_K: ql[128] | qh[64] | int8 scales[16] | f16 d. y = (d * scale) * (q - 32), q 6 bits. In half
// h, ql[64h + l] and ql[64h + 32 + l] hold the low nibbles of elements 128h + l and +32 (low
// nibbles), +64 and +96 (high nibbles); bit pairs 0-1, 2-3, 4-5, 6-7 of qh[32h + l] are their
// top bits in the same order.
template <bool kStream>
void q6_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const DB db;
    const size_t N = hn::Lanes(df), NB = hn::Lanes(db);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ6_K), out += kBlockElements<BlockQ6_K>) {
        const VF d = hn::Set(df, load_f16_scale(in + offsetof(BlockQ6_K, d)));
        HWY_ALIGN float scale[16];
        for (size_t i = 0; i < 16; i += N)
            hn::Store(hn::Mul(d, to_float(load_i8(in + offsetof(BlockQ6_K, scales) + i))), df,
                      scale + i);
        HWY_ALIGN uint8_t codes[256];  // int8 values -32..31
        const VB k15 = hn::Set(db, 15), k48 = hn::Set(db, 48), k32 = hn::Set(db, 32);
        for (int h = 0; h < 2; ++h) {
            for (size_t l = 0; l < 32; l += NB) {
                const VB a = hn::LoadU(db, in + offsetof(BlockQ6_K, ql) + 64 * h + l);
                const VB c = hn::LoadU(db, in + offsetof(BlockQ6_K, ql) + 64 * h + 32 + l);
                const VB t = hn::LoadU(db, in + offsetof(BlockQ6_K, qh) + 32 * h + l);
                const VB q1 = hn::Or(hn::And(a, k15), hn::And(hn::ShiftLeft<4>(t), k48));
                const VB q2 = hn::Or(hn::And(c, k15), hn::And(hn::ShiftLeft<2>(t), k48));
                const VB q3 = hn::Or(hn::ShiftRight<4>(a), hn::And(t, k48));
                const VB q4 = hn::Or(hn::ShiftRight<4>(c), hn::And(hn::ShiftRight<2>(t), k48));
                uint8_t *o = codes + 128 * h + l;
                hn::Store(hn::Sub(q1, k32), db, o);
                hn::Store(hn::Sub(q2, k32), db, o + 32);
                hn::Store(hn::Sub(q3, k32), db, o + 64);
                hn::Store(hn::Sub(q4, k32), db, o + 96);
            }
        }
        scale_signed_codes<kStream>(codes, scale, out);
    }
}

// q8_K: f32 d | int8 qs[256] | int16 bsums[16] (not needed to decode). y = d * q.
template <bool kStream>
void q8_k_blocks(const uint8_t *in, size_t nblocks, float *out) {
    const DF df;
    const size_t N = hn::Lanes(df);
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockQ8_K), out += kBlockElements<BlockQ8_K>) {
        const VF d = hn::Set(df, bits_to_f32(load_u32(in)));
        for (size_t l = 0; l < 256; l += N)
            store<kStream>(hn::Mul(d, to_float(load_i8(in + offsetof(BlockQ8_K, qs) + l))),
                           out + l);
    }
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_KQUANT_FORMATS(GGUFTOOL_STREAMING_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(kquant, GGUFTOOL_KQUANT_FORMATS)
#endif  // HWY_ONCE
