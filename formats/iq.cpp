// IQ formats: iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m iq4_nl iq4_xs (formats/SPEC.md).
//
// The grid formats decode in groups of 8 elements: one grid entry of 8 magnitudes (or two iq3
// entries of 4), 8 sign bits or one shift, and the scale of the 32-element sub-block. A group is
// one 8-lane vector (one lane at a time on the scalar target). ggml's arithmetic is kept operation
// by operation: scale * grid, then the sign bit flipped where a sign bit is set. (ggml writes
// `* (s ? -1.f : 1.f)`, which its compiler turns into a sign flip, so NaNs come out negated too:
// we flip the bit rather than multiply.) No fused multiply-add: ggml rounds twice.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "iq.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "blocks.hpp"
#include "codebooks/iq1_grid.hpp"
#include "codebooks/iq2_grids.hpp"
#include "codebooks/iq3_grids.hpp"
#include "codebooks/iq4_values.hpp"
#include "codebooks/iq_signs.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "formats.hpp"
#include "simd-inl.h"

// The formats of this file, X(type, Block): each has its kernel <type>_blocks below (formats.hpp).
// clang-format off
#define GGUFTOOL_IQ_FORMATS(X) \
    X(iq2_xxs, BlockIq2_XXS)   \
    X(iq2_xs, BlockIq2_XS)     \
    X(iq2_s, BlockIq2_S)       \
    X(iq3_xxs, BlockIq3_XXS)   \
    X(iq3_s, BlockIq3_S)       \
    X(iq1_s, BlockIq1_S)       \
    X(iq1_m, BlockIq1_M)       \
    X(iq4_nl, BlockIq4_NL)     \
    X(iq4_xs, BlockIq4_XS)
// clang-format on

#ifndef GGUFTOOL_FORMATS_IQ_ONCE
#define GGUFTOOL_FORMATS_IQ_ONCE
namespace gguftool::formats {

// kSignRows[s][j] = bit j of s ? -0.0f : +0.0f: XOR masks flipping the signs chosen by byte s.
struct SignRows {
    alignas(32) float row[256][8];
};
inline constexpr SignRows kSignRows = [] {
    SignRows t{};
    for (int s = 0; s < 256; ++s)
        for (int j = 0; j < 8; ++j) t.row[s][j] = (s >> j) & 1 ? -0.0f : 0.0f;
    return t;
}();

// The iq1 shift as a row of 8, positive (row 0) or negated (row 1).
struct DeltaRows {
    alignas(32) float row[2][8];
};
inline constexpr DeltaRows kDeltaRows = [] {
    DeltaRows t{};
    for (int j = 0; j < 8; ++j) {
        t.row[0][j] = codebooks::iq1_delta;
        t.row[1][j] = -codebooks::iq1_delta;
    }
    return t;
}();

}  // namespace gguftool::formats
#endif

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {
using namespace codebooks;

using D8 = hn::CappedTag<float, 8>;  // one group of 8: one vector, or one lane at a time

// Stores one group: normally, or non-temporally (decode_blocks then guarantees alignment).
template <bool kStream, class D, class V>
HWY_INLINE void store_group(D d, V v, float *out) {
    if constexpr (kStream) {
        hn::Stream(v, d, out);
    } else {
        hn::StoreU(v, d, out);
    }
}

inline const uint8_t *entry_bytes(const uint64_t &e) {
    return reinterpret_cast<const uint8_t *>(&e);
}
inline const uint8_t *entry_bytes(const uint32_t &e) {
    return reinterpret_cast<const uint8_t *>(&e);
}

// out[j] = scale * grid[j], its sign bit flipped by sign[j] (a +-0.0f mask), for j = 0..7; grid
// holds unsigned bytes.
template <bool kStream>
HWY_INLINE void put_signed(float scale, const uint8_t *grid, const float *sign, float *out) {
    const D8 d;
    const hn::Rebind<uint8_t, D8> du8;
    const hn::Rebind<int32_t, D8> di;
    const auto vscale = hn::Set(d, scale);
    for (size_t k = 0; k < 8; k += hn::Lanes(d)) {
        const auto g = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(du8, grid + k)));
        store_group<kStream>(d, hn::Xor(hn::Mul(vscale, g), hn::Load(d, sign + k)), out + k);
    }
}

// As put_signed, with grid bytes 0..3 from g0 and 4..7 from g1 (two iq3 entries).
template <bool kStream>
HWY_INLINE void put_signed_pair(float scale, const uint8_t *g0, const uint8_t *g1,
                                const float *sign, float *out) {
#if HWY_MAX_BYTES < 32  // a group of 8 floats is more than one vector: assemble the bytes
    uint8_t grid[8];
    std::memcpy(grid, g0, 4);
    std::memcpy(grid + 4, g1, 4);
    put_signed<kStream>(scale, grid, sign, out);
#else
    const D8 d;
    const hn::Rebind<int32_t, D8> di;
    const hn::Half<decltype(di)> di4;
    const hn::Rebind<uint8_t, decltype(di4)> du4;
    const auto lo = hn::PromoteTo(di4, hn::LoadU(du4, g0));
    const auto hi = hn::PromoteTo(di4, hn::LoadU(du4, g1));
    const auto g = hn::ConvertTo(d, hn::Combine(di, hi, lo));
    store_group<kStream>(d, hn::Xor(hn::Mul(hn::Set(d, scale), g), hn::Load(d, sign)), out);
#endif
}

// out[j] = scale * (grid[j] + delta[j]) for j = 0..7; grid holds signed bytes.
template <bool kStream>
HWY_INLINE void put_shifted(float scale, const float *delta, const int8_t *grid, float *out) {
    const D8 d;
    const hn::Rebind<int8_t, D8> di8;
    const hn::Rebind<int32_t, D8> di;
    const auto vscale = hn::Set(d, scale);
    for (size_t k = 0; k < 8; k += hn::Lanes(d)) {
        const auto g = hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(di8, grid + k)));
        store_group<kStream>(d, hn::Mul(vscale, hn::Add(g, hn::Load(d, delta + k))), out + k);
    }
}

// iq2_xxs: f16 d; per sub-block 8 bytes: 4 grid indices, then a u32 holding four
// 7-bit sign indices and a 4-bit scale.
template <bool kStream>
void iq2_xxs_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq2_XXS)) {
        const float d = load_f16_scale(in);
        for (int ib = 0; ib < 8; ++ib) {
            const uint32_t idx = load_u32(in + offsetof(BlockIq2_XXS, qs) + 8 * ib);
            const uint32_t aux = load_u32(in + offsetof(BlockIq2_XXS, qs) + 8 * ib + 4);
            const float db = d * (0.5f + float(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, out += 8) {
                const uint8_t signs = ksigns_iq2xs[(aux >> 7 * l) & 127];
                put_signed<kStream>(db, entry_bytes(iq2xxs_grid[(idx >> 8 * l) & 255]),
                                    kSignRows.row[signs], out);
            }
        }
    }
}

// iq2_xs: f16 d, 32 u16 codes (9-bit grid index, 7-bit sign index), 8 bytes of two
// 4-bit scales.
template <bool kStream>
void iq2_xs_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq2_XS)) {
        const float d = load_f16_scale(in);
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t scale = in[offsetof(BlockIq2_XS, scales) + ib];
            const float db[2] = {d * (0.5f + float(scale & 15)) * 0.25f,
                                 d * (0.5f + float(scale >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, out += 8) {
                const uint16_t code = load_u16(in + offsetof(BlockIq2_XS, qs) + 8 * ib + 2 * l);
                put_signed<kStream>(db[l / 2], entry_bytes(iq2xs_grid[code & 511]),
                                    kSignRows.row[ksigns_iq2xs[code >> 9]], out);
            }
        }
    }
}

// The grid entries of the 32 groups of an iq2_s block:
// idx[g] = qs[g] | ((qh[g / 4] >> 2 * (g % 4)) & 3) << 8.
HWY_INLINE void iq2_s_groups(const uint8_t *qs, const uint8_t *qh, uint16_t *idx) {
#if HWY_TARGET == HWY_SCALAR
    for (int g = 0; g < 32; ++g) idx[g] = uint16_t(qs[g] | ((qh[g / 4] >> 2 * (g % 4)) & 3) << 8);
#else
    const hn::Full128<uint8_t> d8;
    const hn::Full128<uint16_t> d16;
    const hn::Rebind<uint8_t, decltype(d16)> d8x8;
    // Lane g of a chunk of 8 groups takes qh byte g / 4 and moves its bits 2 * (g % 4) + {0, 1}
    // to bits 14, 15 (multiplying), then to 8, 9.
    alignas(16) static constexpr uint8_t kWhich[16] = {0, 0, 0, 0, 1, 1, 1, 1};
    alignas(16) static constexpr uint16_t kLift[8] = {1 << 14, 1 << 12, 1 << 10, 1 << 8,
                                                      1 << 14, 1 << 12, 1 << 10, 1 << 8};
    const auto which = hn::Load(d8, kWhich);
    const auto lift = hn::Load(d16, kLift);
    const auto h = hn::LoadU(d8, qh);  // 8 bytes of qh, then 8 the caller does not use
    for (int c = 0; c < 4; ++c) {
        const auto hb = hn::TableLookupBytes(h, hn::Add(which, hn::Set(d8, uint8_t(2 * c))));
        const auto high = hn::ShiftRight<6>(hn::Mul(hn::PromoteTo(d16, hn::LowerHalf(hb)), lift));
        const auto low = hn::PromoteTo(d16, hn::LoadU(d8x8, qs + 8 * c));
        hn::Store(hn::Or(low, hn::And(high, hn::Set(d16, 0x300))), d16, idx + 8 * c);
    }
#endif
}

// iq2_s: f16 d, 32 grid index low bytes, 32 sign bytes, 8 bytes of index high bits
// (2 per group), 8 bytes of two 4-bit scales.
template <bool kStream>
void iq2_s_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq2_S)) {
        const float d = load_f16_scale(in);
        HWY_ALIGN uint16_t idx[32];
        iq2_s_groups(in + offsetof(BlockIq2_S, qs), in + offsetof(BlockIq2_S, qh), idx);
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t scale = in[offsetof(BlockIq2_S, scales) + ib];
            const float db[2] = {d * (0.5f + float(scale & 15)) * 0.25f,
                                 d * (0.5f + float(scale >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, out += 8) {
                const int g = 4 * ib + l;
                put_signed<kStream>(db[l / 2], entry_bytes(iq2s_grid[idx[g]]),
                                    kSignRows.row[in[offsetof(BlockIq2_S, qs) + 32 + g]], out);
            }
        }
    }
}

// iq3_xxs: f16 d, 64 grid indices (4 elements each), then per sub-block a u32 holding
// four 7-bit sign indices and a 4-bit scale.
template <bool kStream>
void iq3_xxs_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq3_XXS)) {
        const float d = load_f16_scale(in);
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t *q = in + offsetof(BlockIq3_XXS, qs) + 8 * ib;
            const uint32_t aux = load_u32(in + offsetof(BlockIq3_XXS, aux) + 4 * ib);
            const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, out += 8) {
                put_signed_pair<kStream>(db, entry_bytes(iq3xxs_grid[q[2 * l]]),
                                         entry_bytes(iq3xxs_grid[q[2 * l + 1]]),
                                         kSignRows.row[ksigns_iq2xs[(aux >> 7 * l) & 127]], out);
            }
        }
    }
}

// The 64 grid entries of an iq3_s block: entry k = qs[k] | (bit k % 8 of qh[k / 8]) << 8.
HWY_INLINE void iq3_s_entries(const uint8_t *qs, const uint8_t *qh, uint16_t *idx) {
#if HWY_TARGET == HWY_SCALAR
    for (int k = 0; k < 64; ++k) idx[k] = uint16_t(qs[k] | ((qh[k / 8] >> (k % 8)) & 1) << 8);
#else
    const hn::Full128<uint8_t> d8;
    const hn::Full128<uint16_t> d16;
    // Byte i of a chunk of 16 entries reads qh byte i / 8 (of the chunk's two) and tests bit i % 8.
    alignas(16) static constexpr uint8_t kWhich[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                       1, 1, 1, 1, 1, 1, 1, 1};
    alignas(16) static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                                     1, 2, 4, 8, 16, 32, 64, 128};
    const auto which = hn::Load(d8, kWhich), bit = hn::Load(d8, kBit), one = hn::Set(d8, 1);
    const auto h = hn::LoadU(d8, qh);  // 8 bytes of qh, then 8 the caller does not use
    for (int c = 0; c < 4; ++c) {
        const auto hb = hn::TableLookupBytes(h, hn::Add(which, hn::Set(d8, uint8_t(2 * c))));
        const auto high = hn::Min(hn::And(hb, bit), one);
        const auto low = hn::LoadU(d8, qs + 16 * c);
        hn::Store(hn::ZipLower(d16, low, high), d16, idx + 16 * c);
        hn::Store(hn::ZipUpper(d16, low, high), d16, idx + 16 * c + 8);
    }
#endif
}

// iq3_s: f16 d, 64 grid index low bytes, 8 bytes of index high bits (1 per entry),
// 32 sign bytes, 4 bytes of two 4-bit scales.
template <bool kStream>
void iq3_s_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq3_S)) {
        const float d = load_f16_scale(in);
        HWY_ALIGN uint16_t idx[64];
        iq3_s_entries(in + offsetof(BlockIq3_S, qs), in + offsetof(BlockIq3_S, qh), idx);
        for (int ib = 0; ib < 8; ++ib) {
            const float db =
                d *
                float(1 + 2 * ((in[offsetof(BlockIq3_S, scales) + ib / 2] >> 4 * (ib % 2)) & 15));
            for (int l = 0; l < 4; ++l, out += 8) {
                const int g = 4 * ib + l;
                put_signed_pair<kStream>(db, entry_bytes(iq3s_grid[idx[2 * g]]),
                                         entry_bytes(iq3s_grid[idx[2 * g + 1]]),
                                         kSignRows.row[in[offsetof(BlockIq3_S, signs) + g]], out);
            }
        }
    }
}

// The grid entries of the 32 groups of an iq1_s block, h being the u16 fields at qh:
// idx[g] = qs[g] | ((h[g / 4] >> 3 * (g % 4)) & 7) << 8.
HWY_INLINE void iq1_s_groups(const uint8_t *qs, const uint8_t *qh, uint16_t *idx) {
#if HWY_TARGET == HWY_SCALAR
    for (int g = 0; g < 32; ++g)
        idx[g] = uint16_t(qs[g] | ((load_u16(qh + 2 * (g / 4)) >> 3 * (g % 4)) & 7) << 8);
#else
    const hn::Full128<uint8_t> d8;
    const hn::Full128<uint16_t> d16;
    const hn::Rebind<uint8_t, decltype(d16)> d8x8;
    // Lane g of a chunk of 8 groups takes field g / 4 and moves its bits 3 * (g % 4) + {0, 1, 2}
    // to bits 13..15 (multiplying), then to 8..10.
    alignas(16) static constexpr uint8_t kWhich[16] = {0, 1, 0, 1, 0, 1, 0, 1,
                                                       2, 3, 2, 3, 2, 3, 2, 3};
    alignas(16) static constexpr uint16_t kLift[8] = {1 << 13, 1 << 10, 1 << 7, 1 << 4,
                                                      1 << 13, 1 << 10, 1 << 7, 1 << 4};
    const auto which = hn::Load(d8, kWhich);
    const auto lift = hn::Load(d16, kLift);
    const auto h = hn::LoadU(d8, qh);
    for (int c = 0; c < 4; ++c) {
        const auto hc = hn::TableLookupBytes(h, hn::Add(which, hn::Set(d8, uint8_t(4 * c))));
        const auto high = hn::ShiftRight<5>(hn::Mul(hn::BitCast(d16, hc), lift));
        const auto low = hn::PromoteTo(d16, hn::LoadU(d8x8, qs + 8 * c));
        hn::Store(hn::Or(low, hn::And(high, hn::Set(d16, 0x700))), d16, idx + 8 * c);
    }
#endif
}

// iq1_s: f16 d, 32 grid index low bytes, 8 u16: index high bits (3 per group), a
// 3-bit scale and the sign of the shift.
template <bool kStream>
void iq1_s_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq1_S)) {
        const float d = load_f16_scale(in);
        HWY_ALIGN uint16_t idx[32];
        iq1_s_groups(in + offsetof(BlockIq1_S, qs), in + offsetof(BlockIq1_S, qh), idx);
        for (int ib = 0; ib < 8; ++ib) {
            const uint32_t h = load_u16(in + offsetof(BlockIq1_S, qh) + 2 * ib);
            const float dl = d * float(2 * ((h >> 12) & 7) + 1);
            const float *delta = kDeltaRows.row[h >> 15];
            for (int l = 0; l < 4; ++l, out += 8) {
                const int g = 4 * ib + l;
                put_shifted<kStream>(dl, delta,
                                     reinterpret_cast<const int8_t *>(&iq1s_grid[idx[g]]), out);
            }
        }
    }
}

// Grid entries and shift signs of the 32 groups of an iq1_m block: group g has index
// qs[g] | (nibble & 7) << 8 and shift sign nibble >> 3, its nibble being qh[g / 2] >> 4 * (g % 2).
HWY_INLINE void iq1_m_groups(const uint8_t *qs, const uint8_t *qh, uint16_t *idx, uint8_t *neg) {
#if HWY_TARGET == HWY_SCALAR
    for (int g = 0; g < 32; ++g) {
        const int nibble = (qh[g / 2] >> 4 * (g % 2)) & 15;
        idx[g] = uint16_t(qs[g] | (nibble & 7) << 8);
        neg[g] = uint8_t(nibble >> 3);
    }
#else
    const hn::Full128<uint8_t> d8;
    const hn::Full128<uint16_t> d16;
    const auto h = hn::LoadU(d8, qh);
    const auto lo = hn::And(h, hn::Set(d8, 15)), hi = hn::ShiftRight<4>(h);
    const decltype(h) nibbles[2] = {hn::InterleaveLower(lo, hi), hn::InterleaveUpper(d8, lo, hi)};
    for (int c = 0; c < 2; ++c) {
        const auto low = hn::LoadU(d8, qs + 16 * c);
        const auto high = hn::And(nibbles[c], hn::Set(d8, 7));
        hn::Store(hn::ZipLower(d16, low, high), d16, idx + 16 * c);
        hn::Store(hn::ZipUpper(d16, low, high), d16, idx + 16 * c + 8);
        hn::Store(hn::ShiftRight<3>(nibbles[c]), d8, neg + 16 * c);
    }
#endif
}

// iq1_m: 32 grid index low bytes, 16 bytes of (3 index high bits, shift sign) per
// group, 4 u16 holding 3-bit scales and, in their top nibbles, the f16 d.
template <bool kStream>
void iq1_m_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq1_M)) {
        const uint8_t *scales = in + offsetof(BlockIq1_M, scales);
        const uint32_t sc[4] = {load_u16(scales), load_u16(scales + 2), load_u16(scales + 4),
                                load_u16(scales + 6)};
        const float d = fp16_to_f32(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) |
                                             ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000)));
        HWY_ALIGN uint16_t idx[32];
        HWY_ALIGN uint8_t neg[32];
        iq1_m_groups(in + offsetof(BlockIq1_M, qs), in + offsetof(BlockIq1_M, qh), idx, neg);
        for (int ib = 0; ib < 8; ++ib) {
            const uint32_t s = sc[ib / 2] >> 6 * (ib % 2);
            const float dl[2] = {d * float(2 * (s & 7) + 1), d * float(2 * ((s >> 3) & 7) + 1)};
            for (int l = 0; l < 4; ++l, out += 8) {
                const int g = 4 * ib + l;
                put_shifted<kStream>(dl[l / 2], kDeltaRows.row[neg[g]],
                                     reinterpret_cast<const int8_t *>(&iq1s_grid[idx[g]]), out);
            }
        }
    }
}

// 32 outputs from 16 bytes of 4-bit codes: out[j] = scale * kvalues_iq4nl[low nibble of q[j]],
// out[j + 16] = scale * kvalues_iq4nl[high nibble].
template <bool kStream>
HWY_INLINE void put_iq4(float scale, const uint8_t *q, float *out) {
#if HWY_TARGET == HWY_SCALAR
    for (int j = 0; j < 16; ++j) {
        out[j] = scale * float(kvalues_iq4nl[q[j] & 15]);
        out[j + 16] = scale * float(kvalues_iq4nl[q[j] >> 4]);
    }
#else
    const hn::FixedTag<uint8_t, 16> du8;
    const hn::FixedTag<int8_t, 16> di8;
    const hn::ScalableTag<float> d;
    const hn::Rebind<int8_t, decltype(d)> dn8;
    const hn::Rebind<int32_t, decltype(d)> di;
    const auto table = hn::LoadU(di8, kvalues_iq4nl);
    const auto bytes = hn::LoadU(du8, q);
    HWY_ALIGN int8_t values[32];
    hn::Store(hn::TableLookupBytes(table, hn::BitCast(di8, hn::And(bytes, hn::Set(du8, 15)))), di8,
              values);
    hn::Store(hn::TableLookupBytes(table, hn::BitCast(di8, hn::ShiftRight<4>(bytes))), di8,
              values + 16);
    const auto vscale = hn::Set(d, scale);
    for (size_t k = 0; k < 32; k += hn::Lanes(d)) {
        const auto v = hn::ConvertTo(d, hn::PromoteTo(di, hn::Load(dn8, values + k)));
        store_group<kStream>(d, hn::Mul(vscale, v), out + k);
    }
#endif
}

// iq4_nl: f16 d, 16 bytes of 4-bit codes.
template <bool kStream>
void iq4_nl_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks;
         ++b, in += sizeof(BlockIq4_NL), out += kBlockElements<BlockIq4_NL>)
        put_iq4<kStream>(load_f16_scale(in), in + offsetof(BlockIq4_NL, qs), out);
}

// iq4_xs: f16 d, u16 of 2-bit scale high parts, 4 bytes of 4-bit scale low parts, 128
// bytes of 4-bit codes.
template <bool kStream>
void iq4_xs_blocks(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += sizeof(BlockIq4_XS)) {
        const float d = load_f16_scale(in);
        const uint32_t scales_h = load_u16(in + offsetof(BlockIq4_XS, scales_h));
        const uint32_t scales_l = load_u32(in + offsetof(BlockIq4_XS, scales_l));
        for (int ib = 0; ib < 8; ++ib, out += 32) {
            const int ls = int((scales_l >> 4 * ib) & 15) | int((scales_h >> 2 * ib) & 3) << 4;
            put_iq4<kStream>(d * float(ls - 32), in + offsetof(BlockIq4_XS, qs) + 16 * ib, out);
        }
    }
}

// Entry points decode_<type>: the kernels above, streaming large outputs (simd-inl.h).
GGUFTOOL_IQ_FORMATS(GGUFTOOL_STREAMING_DECODER)

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
GGUFTOOL_FAMILY_KERNELS(iq, GGUFTOOL_IQ_FORMATS)
#endif  // HWY_ONCE
