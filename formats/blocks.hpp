// The block layouts of the 27 formats, as ggml declares them (ggml-common.h's block_q4_0 ...), one
// struct per format with the type it encodes. The decoders (formats/<family>.cpp) and the lowering
// to standard ONNX operators (lib/lower) read fields at offsetof(Block, field) and step by
// sizeof(Block): no offset or size is written a second time. GGUFTOOL_CHECK_BLOCK ties each struct
// to its row of the type table. Layouts in words: formats/SPEC.md.
//
// GGUFTOOL_BYTE_ORDER gives each field's width for byte order (formats/common.hpp), decided by how
// ggml's quantizer writes it and its dequantizer reads it (ggml-quants.c):
//   - f16 scales (d, m, s, dmin), q8_K's float d: numbers, reversed;
//   - q5_0/q5_1 qh: declared as 4 bytes, but written and read through memcpy to and from one
//     uint32_t whose bit i belongs to element i: one 32-bit word;
//   - iq3_xxs aux: a uint32_t of signs and scale per sub-block, written through a uint32_t
//     pointer and read by memcpy into one: 32-bit words;
//   - iq2_xs qs, iq1_s qh, iq4_xs scales_h, q8_K bsums: declared and used as uint16_t/int16_t;
//   - iq1_m scales: declared as 8 bytes, written and read through a uint16_t pointer: 16-bit words;
//   - everything else is bytes, read byte by byte. q3_K's scales are copied into uint32_t words
//     and unpacked with shifts and masks, but every operation stays within its byte
//     (masks 0x0f0f0f0f, 0x03030303) and the result is read back as bytes: bytes either way.
#pragma once

#include <cstdint>

#include "formats/common.hpp"

namespace gguftool::formats {

// formats/legacy.cpp
// The block layouts (ggml's block_q4_0 ... block_q8_1); d, m, s are f16.
struct BlockQ4_0 {
    static constexpr GgmlType type = GgmlType::q4_0;
    uint16_t d;
    uint8_t qs[16];  // nibbles
};
struct BlockQ4_1 {
    static constexpr GgmlType type = GgmlType::q4_1;
    uint16_t d, m;
    uint8_t qs[16];
};
struct BlockQ5_0 {
    static constexpr GgmlType type = GgmlType::q5_0;
    uint16_t d;
    uint8_t qh[4];  // fifth bits
    uint8_t qs[16];
};
struct BlockQ5_1 {
    static constexpr GgmlType type = GgmlType::q5_1;
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[16];
};
struct BlockQ8_0 {
    static constexpr GgmlType type = GgmlType::q8_0;
    uint16_t d;
    int8_t qs[32];
};
struct BlockQ8_1 {
    static constexpr GgmlType type = GgmlType::q8_1;
    uint16_t d, s;  // s = d * sum(qs), not needed to decode
    int8_t qs[32];
};
GGUFTOOL_CHECK_BLOCK(BlockQ4_0, sizeof(BlockQ4_0::qs) * 2);
GGUFTOOL_CHECK_BLOCK(BlockQ4_1, sizeof(BlockQ4_1::qs) * 2);
GGUFTOOL_CHECK_BLOCK(BlockQ5_0, sizeof(BlockQ5_0::qh) * 8);
GGUFTOOL_CHECK_BLOCK(BlockQ5_1, sizeof(BlockQ5_1::qh) * 8);
GGUFTOOL_CHECK_BLOCK(BlockQ8_0, sizeof(BlockQ8_0::qs));
GGUFTOOL_CHECK_BLOCK(BlockQ8_1, sizeof(BlockQ8_1::qs));
GGUFTOOL_BYTE_ORDER(BlockQ4_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ4_1, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(m, 2), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ5_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qh, 4), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ5_1, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(m, 2), GGUFTOOL_FIELD(qh, 4),
                    GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ8_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ8_1, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(s, 2), GGUFTOOL_FIELD(qs, 1));

// formats/q1q2.cpp
// The block layouts (ggml's block_q1_0, block_q2_0); d is f16.
struct BlockQ1_0 {
    static constexpr GgmlType type = GgmlType::q1_0;
    uint16_t d;
    uint8_t qs[16];  // one bit per element
};
struct BlockQ2_0 {
    static constexpr GgmlType type = GgmlType::q2_0;
    uint16_t d;
    uint8_t qs[16];  // 2-bit codes
};
GGUFTOOL_CHECK_BLOCK(BlockQ1_0, sizeof(BlockQ1_0::qs) * 8);
GGUFTOOL_CHECK_BLOCK(BlockQ2_0, sizeof(BlockQ2_0::qs) * 4);
GGUFTOOL_BYTE_ORDER(BlockQ1_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ2_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));

// formats/fp4.cpp
// The block layouts (ggml's block_mxfp4, block_nvfp4).
struct BlockMxfp4 {
    static constexpr GgmlType type = GgmlType::mxfp4;
    uint8_t e;       // E8M0 scale
    uint8_t qs[16];  // e2m1 nibbles
};
struct BlockNvfp4 {
    static constexpr GgmlType type = GgmlType::nvfp4;
    uint8_t d[4];    // UE4M3 scale per 16 elements
    uint8_t qs[32];  // e2m1 nibbles
};
GGUFTOOL_CHECK_BLOCK(BlockMxfp4, sizeof(BlockMxfp4::qs) * 2);
GGUFTOOL_CHECK_BLOCK(BlockNvfp4, sizeof(BlockNvfp4::qs) * 2);
GGUFTOOL_BYTE_ORDER(BlockMxfp4, GGUFTOOL_FIELD(e, 1), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockNvfp4, GGUFTOOL_FIELD(d, 1), GGUFTOOL_FIELD(qs, 1));

// formats/kquant.cpp
// The block layouts (ggml's block_q2_K ... block_q8_K); d and dmin are f16 except in q8_K.
struct BlockQ2_K {
    static constexpr GgmlType type = GgmlType::q2_k;
    uint8_t scales[16];  // 4-bit scale and min per 16 elements
    uint8_t qs[64];      // 2-bit codes
    uint16_t d, dmin;
};
struct BlockQ3_K {
    static constexpr GgmlType type = GgmlType::q3_k;
    uint8_t hmask[32];   // bit 2 of each code
    uint8_t qs[64];      // low 2 bits of each code
    uint8_t scales[12];  // 16 six-bit scales
    uint16_t d;
};
struct BlockQ4_K {
    static constexpr GgmlType type = GgmlType::q4_k;
    uint16_t d, dmin;
    uint8_t scales[12];  // 8 six-bit scales and 8 six-bit mins
    uint8_t qs[128];     // nibbles
};
struct BlockQ5_K {
    static constexpr GgmlType type = GgmlType::q5_k;
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[32];  // bit 4 of each code
    uint8_t qs[128];
};
struct BlockQ6_K {
    static constexpr GgmlType type = GgmlType::q6_k;
    uint8_t ql[128];    // low 4 bits of each code
    uint8_t qh[64];     // high 2 bits
    int8_t scales[16];  // per 16 elements
    uint16_t d;
};
struct BlockQ8_K {
    static constexpr GgmlType type = GgmlType::q8_k;
    float d;
    int8_t qs[256];
    int16_t bsums[16];  // sums of 16 codes each, not needed to decode
};
GGUFTOOL_CHECK_BLOCK(BlockQ2_K, sizeof(BlockQ2_K::qs) * 4);
GGUFTOOL_CHECK_BLOCK(BlockQ3_K, sizeof(BlockQ3_K::hmask) * 8);
GGUFTOOL_CHECK_BLOCK(BlockQ4_K, sizeof(BlockQ4_K::qs) * 2);
GGUFTOOL_CHECK_BLOCK(BlockQ5_K, sizeof(BlockQ5_K::qh) * 8);
GGUFTOOL_CHECK_BLOCK(BlockQ6_K, sizeof(BlockQ6_K::ql) * 2);
GGUFTOOL_CHECK_BLOCK(BlockQ8_K, sizeof(BlockQ8_K::qs));
GGUFTOOL_BYTE_ORDER(BlockQ2_K, GGUFTOOL_FIELD(scales, 1), GGUFTOOL_FIELD(qs, 1),
                    GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(dmin, 2));
GGUFTOOL_BYTE_ORDER(BlockQ3_K, GGUFTOOL_FIELD(hmask, 1), GGUFTOOL_FIELD(qs, 1),
                    GGUFTOOL_FIELD(scales, 1), GGUFTOOL_FIELD(d, 2));
GGUFTOOL_BYTE_ORDER(BlockQ4_K, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(dmin, 2),
                    GGUFTOOL_FIELD(scales, 1), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ5_K, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(dmin, 2),
                    GGUFTOOL_FIELD(scales, 1), GGUFTOOL_FIELD(qh, 1), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockQ6_K, GGUFTOOL_FIELD(ql, 1), GGUFTOOL_FIELD(qh, 1),
                    GGUFTOOL_FIELD(scales, 1), GGUFTOOL_FIELD(d, 2));
GGUFTOOL_BYTE_ORDER(BlockQ8_K, GGUFTOOL_FIELD(d, 4), GGUFTOOL_FIELD(qs, 1),
                    GGUFTOOL_FIELD(bsums, 2));

// formats/ternary.cpp
// The block layouts (ggml's block_tq1_0, block_tq2_0); d is f16.
struct BlockTq1_0 {
    static constexpr GgmlType type = GgmlType::tq1_0;
    uint8_t qs[48];  // 5 base-3 digits per byte
    uint8_t qh[4];   // 4 base-3 digits per byte
    uint16_t d;
};
struct BlockTq2_0 {
    static constexpr GgmlType type = GgmlType::tq2_0;
    uint8_t qs[64];  // 2-bit codes
    uint16_t d;
};
GGUFTOOL_CHECK_BLOCK(BlockTq1_0, sizeof(BlockTq1_0::qs) * 5 + sizeof(BlockTq1_0::qh) * 4);
GGUFTOOL_CHECK_BLOCK(BlockTq2_0, sizeof(BlockTq2_0::qs) * 4);
GGUFTOOL_BYTE_ORDER(BlockTq1_0, GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(qh, 1), GGUFTOOL_FIELD(d, 2));
GGUFTOOL_BYTE_ORDER(BlockTq2_0, GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(d, 2));

// formats/iq.cpp
// The block layouts (ggml's block_iq2_xxs ... block_iq4_xs); d is f16.
struct BlockIq2_XXS {
    static constexpr GgmlType type = GgmlType::iq2_xxs;
    uint16_t d;
    uint8_t qs[64];  // per sub-block of 32: 4 grid indices, then a u32 of signs and scale
};
struct BlockIq2_XS {
    static constexpr GgmlType type = GgmlType::iq2_xs;
    uint16_t d;
    uint16_t qs[32];    // per group of 8: grid index and sign index
    uint8_t scales[8];  // two 4-bit scales per 32 elements
};
struct BlockIq2_S {
    static constexpr GgmlType type = GgmlType::iq2_s;
    uint16_t d;
    uint8_t qs[64];  // 32 grid index low bytes, then 32 sign bytes
    uint8_t qh[8];   // grid index high bits, 2 per group
    uint8_t scales[8];
};
struct BlockIq3_XXS {
    static constexpr GgmlType type = GgmlType::iq3_xxs;
    uint16_t d;
    uint8_t qs[64];   // indices of 4-element grid entries (ggml: the first 64 bytes of qs[96])
    uint8_t aux[32];  // per sub-block a u32 of signs and scale (ggml: the rest of qs)
};
struct BlockIq3_S {
    static constexpr GgmlType type = GgmlType::iq3_s;
    uint16_t d;
    uint8_t qs[64];  // grid index low bytes
    uint8_t qh[8];   // grid index high bits, 1 per entry
    uint8_t signs[32];
    uint8_t scales[4];  // two 4-bit scales per byte
};
struct BlockIq1_S {
    static constexpr GgmlType type = GgmlType::iq1_s;
    uint16_t d;
    uint8_t qs[32];  // grid index low bytes
    uint16_t qh[8];  // per sub-block: index high bits, scale, shift sign
};
struct BlockIq1_M {
    static constexpr GgmlType type = GgmlType::iq1_m;
    uint8_t qs[32];     // grid index low bytes
    uint8_t qh[16];     // per group: 3 index high bits, shift sign
    uint8_t scales[8];  // 4 u16: 3-bit scales, and d in their top nibbles
};
struct BlockIq4_NL {
    static constexpr GgmlType type = GgmlType::iq4_nl;
    uint16_t d;
    uint8_t qs[16];  // 4-bit codes
};
struct BlockIq4_XS {
    static constexpr GgmlType type = GgmlType::iq4_xs;
    uint16_t d;
    uint16_t scales_h;    // 2-bit scale high parts
    uint8_t scales_l[4];  // 4-bit scale low parts
    uint8_t qs[128];      // 4-bit codes
};
GGUFTOOL_CHECK_BLOCK(BlockIq2_XXS, sizeof(BlockIq2_XXS::qs) * 4);
GGUFTOOL_CHECK_BLOCK(BlockIq2_XS, sizeof(BlockIq2_XS::scales) * 32);
GGUFTOOL_CHECK_BLOCK(BlockIq2_S, sizeof(BlockIq2_S::scales) * 32);
GGUFTOOL_CHECK_BLOCK(BlockIq3_XXS, sizeof(BlockIq3_XXS::qs) * 4);
GGUFTOOL_CHECK_BLOCK(BlockIq3_S, sizeof(BlockIq3_S::signs) * 8);
GGUFTOOL_CHECK_BLOCK(BlockIq1_S, sizeof(BlockIq1_S::qs) * 8);
GGUFTOOL_CHECK_BLOCK(BlockIq1_M, sizeof(BlockIq1_M::qs) * 8);
GGUFTOOL_CHECK_BLOCK(BlockIq4_NL, sizeof(BlockIq4_NL::qs) * 2);
GGUFTOOL_CHECK_BLOCK(BlockIq4_XS, sizeof(BlockIq4_XS::qs) * 2);
GGUFTOOL_NO_BYTE_ORDER(
    BlockIq2_XXS,
    "iq2_xxs data has no certain big-endian layout: ggml's quantizer packs each sub-block's four "
    "grid indices into one 32-bit word and its dequantizer reads them back as four bytes, which "
    "agree only on a little-endian machine");
GGUFTOOL_BYTE_ORDER(BlockIq2_XS, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 2),
                    GGUFTOOL_FIELD(scales, 1));
GGUFTOOL_BYTE_ORDER(BlockIq2_S, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(qh, 1),
                    GGUFTOOL_FIELD(scales, 1));
GGUFTOOL_BYTE_ORDER(BlockIq3_XXS, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1),
                    GGUFTOOL_FIELD(aux, 4));
GGUFTOOL_BYTE_ORDER(BlockIq3_S, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(qh, 1),
                    GGUFTOOL_FIELD(signs, 1), GGUFTOOL_FIELD(scales, 1));
GGUFTOOL_BYTE_ORDER(BlockIq1_S, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(qh, 2));
GGUFTOOL_BYTE_ORDER(BlockIq1_M, GGUFTOOL_FIELD(qs, 1), GGUFTOOL_FIELD(qh, 1),
                    GGUFTOOL_FIELD(scales, 2));
GGUFTOOL_BYTE_ORDER(BlockIq4_NL, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));
GGUFTOOL_BYTE_ORDER(BlockIq4_XS, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(scales_h, 2),
                    GGUFTOOL_FIELD(scales_l, 1), GGUFTOOL_FIELD(qs, 1));

}  // namespace gguftool::formats
