// GGUF blocks as onnxruntime's MatMulNBits operands (com.microsoft.MatMulNBits, onnxruntime's
// docs/ContribOperators.md): per weight row, B [k_blocks][block·bits/8] (bits 4: element 2i in
// the low nibble of byte i, 2i+1 in the high one; bits 8: one byte per element) and scales
// [k_blocks], codes stored symmetric so that MatMulNBits' default zero point (8 for 4 bits, 128
// for 8) applies: no zero-point input, which keeps onnxruntime on its packed integer kernels (a
// float zero point sends it to a path that decodes the whole matrix on every call).
//
// One row per format. Exact (the same single rounding as ggml's dequantizer): q4_0, q8_0, q5_0,
// q3_K (4 bits, block 16) and q6_K (8 bits, block 16), whose scale product d·sc is ggml's. The
// formats with a minimum — q4_1, q5_1, q2_K, q4_K, q5_K, w = s·q - m — store the centred code
// (q - c)·s and a float offset per block, c·s - m (c·s exact, one rounding): the graph adds
// sum(block's activations) · offset after the product. A sub-block whose scale is 0 is its offset.
#include <cstring>

#include "decoder.hpp"
#include "formats/blocks.hpp"
#include "gguftool/half.hpp"

namespace gguftool::decoder {
namespace {

using namespace formats;

// One row of `K` elements: `src` its GGUF blocks; writes k_blocks blobs, scales, offsets.
using RowFn = void (*)(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets);

// n 4-bit codes as MatMulNBits packs them.
void pack4(const uint8_t *codes, int n, uint8_t *out) {
    for (int i = 0; i < n / 2; ++i) out[i] = uint8_t(codes[2 * i] | (codes[2 * i + 1] << 4));
}

// The offset of w = s·q - m stored as (q - c)·s: c·s - m.
float offset(float s, float m, int c) {
    return float(c) * s - m;
}

void q4_0(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *) {
    const auto *blk = reinterpret_cast<const BlockQ4_0 *>(src);
    for (int64_t i = 0; i < K / 32; ++i, b += 16) {
        uint8_t c[32];
        for (int j = 0; j < 16; ++j) c[j] = blk[i].qs[j] & 15, c[j + 16] = blk[i].qs[j] >> 4;
        pack4(c, 32, b);  // ggml: (q - 8)·d
        scales[i] = fp16_to_f32(blk[i].d);
    }
}

void q4_1(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets) {
    const auto *blk = reinterpret_cast<const BlockQ4_1 *>(src);
    for (int64_t i = 0; i < K / 32; ++i, b += 16) {
        uint8_t c[32];
        for (int j = 0; j < 16; ++j) c[j] = blk[i].qs[j] & 15, c[j + 16] = blk[i].qs[j] >> 4;
        pack4(c, 32, b);
        scales[i] = fp16_to_f32(blk[i].d);  // ggml: q·d + m
        offsets[i] = offset(scales[i], -fp16_to_f32(blk[i].m), 8);
    }
}

void q8_0(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *) {
    const auto *blk = reinterpret_cast<const BlockQ8_0 *>(src);
    for (int64_t i = 0; i < K / 32; ++i, b += 32) {
        for (int j = 0; j < 32; ++j) b[j] = uint8_t(int(blk[i].qs[j]) + 128);
        scales[i] = fp16_to_f32(blk[i].d);
    }
}

// q5_0/q5_1's five-bit codes, stored as q + 128 - 16.
void codes5(const uint8_t *qs, const uint8_t *qh_bytes, uint8_t *c) {
    uint32_t qh;
    std::memcpy(&qh, qh_bytes, 4);
    for (int j = 0; j < 16; ++j) {
        c[j] = uint8_t(112 + ((qs[j] & 15) | (((qh >> j) & 1) << 4)));
        c[j + 16] = uint8_t(112 + ((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)));
    }
}

void q5_0(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *) {
    const auto *blk = reinterpret_cast<const BlockQ5_0 *>(src);
    for (int64_t i = 0; i < K / 32; ++i, b += 32) {
        codes5(blk[i].qs, blk[i].qh, b);  // ggml: (q - 16)·d
        scales[i] = fp16_to_f32(blk[i].d);
    }
}

void q5_1(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets) {
    const auto *blk = reinterpret_cast<const BlockQ5_1 *>(src);
    for (int64_t i = 0; i < K / 32; ++i, b += 32) {
        codes5(blk[i].qs, blk[i].qh, b);
        scales[i] = fp16_to_f32(blk[i].d);  // ggml: q·d + m
        offsets[i] = offset(scales[i], -fp16_to_f32(blk[i].m), 16);
    }
}

// q2_K: 16 blocks of 16, w = d·(sc & 15)·q - dmin·(sc >> 4), q in 0..3 stored as q + 8 - 2.
void q2_k(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets) {
    const auto *blk = reinterpret_cast<const BlockQ2_K *>(src);
    for (int64_t i = 0; i < K / 256; ++i) {
        const float d = fp16_to_f32(blk[i].d), dmin = fp16_to_f32(blk[i].dmin);
        for (int is = 0; is < 16; ++is, b += 8) {  // ggml's order: 128 at a time, shift by 2
            const uint8_t *q = blk[i].qs + 32 * (is / 8) + 16 * (is % 2);
            const int shift = 2 * ((is % 8) / 2);
            uint8_t c[16];
            for (int l = 0; l < 16; ++l) c[l] = uint8_t(((q[l] >> shift) & 3) + 6);
            pack4(c, 16, b);
            const uint8_t sc = blk[i].scales[is];
            scales[16 * i + is] = d * float(sc & 0xF);
            offsets[16 * i + is] = offset(scales[16 * i + is], dmin * float(sc >> 4), 2);
        }
    }
}

// q3_K: 16 blocks of 16, w = d·(sc - 32)·q, q in -4..3 stored as q + 8.
void q3_k(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *) {
    const auto *blk = reinterpret_cast<const BlockQ3_K *>(src);
    for (int64_t i = 0; i < K / 256; ++i) {
        const float d = fp16_to_f32(blk[i].d);
        const uint8_t *sc = blk[i].scales;  // 16 six-bit scales: low 4 bits, then high 2
        for (int is = 0; is < 16; ++is, b += 8) {
            const int low = is < 8 ? sc[is] & 15 : sc[is - 8] >> 4;
            const int high = (sc[8 + is % 4] >> (2 * (is / 4))) & 3;
            const uint8_t *q = blk[i].qs + 32 * (is / 8) + 16 * (is % 2);
            const uint8_t *hm = blk[i].hmask + 16 * (is % 2);
            const int shift = 2 * ((is % 8) / 2), bit = 1 << (is / 2);
            uint8_t c[16];
            for (int l = 0; l < 16; ++l)
                c[l] = uint8_t(((q[l] >> shift) & 3) + ((hm[l] & bit) ? 8 : 4));
            pack4(c, 16, b);
            scales[16 * i + is] = d * float((low | (high << 4)) - 32);
        }
    }
}

// ggml's get_scale_min_k4.
void scale_min_k4(int j, const uint8_t *q, uint8_t &d, uint8_t &m) {
    if (j < 4) {
        d = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

void q4_k(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets) {
    const auto *blk = reinterpret_cast<const BlockQ4_K *>(src);
    for (int64_t i = 0; i < K / 256; ++i) {
        const float d = fp16_to_f32(blk[i].d), dmin = fp16_to_f32(blk[i].dmin);
        for (int c = 0; c < 4; ++c) {  // 64 elements: low nibbles, then high nibbles
            const uint8_t *q = blk[i].qs + 32 * c;
            for (int half = 0; half < 2; ++half, b += 16, ++scales, ++offsets) {
                uint8_t sc, m, codes[32];
                scale_min_k4(2 * c + half, blk[i].scales, sc, m);
                for (int l = 0; l < 32; ++l) codes[l] = half ? q[l] >> 4 : q[l] & 15;
                pack4(codes, 32, b);
                *scales = d * float(sc);  // ggml: d1·q - m1
                *offsets = offset(*scales, dmin * float(m), 8);
            }
        }
    }
}

void q5_k(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *offsets) {
    const auto *blk = reinterpret_cast<const BlockQ5_K *>(src);
    for (int64_t i = 0; i < K / 256; ++i) {
        const float d = fp16_to_f32(blk[i].d), dmin = fp16_to_f32(blk[i].dmin);
        for (int c = 0; c < 4; ++c) {
            const uint8_t *q = blk[i].qs + 32 * c;
            for (int half = 0; half < 2; ++half, b += 32, ++scales, ++offsets) {
                uint8_t sc, m;
                scale_min_k4(2 * c + half, blk[i].scales, sc, m);
                const int bit = 2 * c + half;  // ggml: u1, u2 shift by 2 per 64
                for (int l = 0; l < 32; ++l)
                    b[l] = uint8_t(112 + ((half ? q[l] >> 4 : q[l] & 15) |
                                          (((blk[i].qh[l] >> bit) & 1) << 4)));
                *scales = d * float(sc);
                *offsets = offset(*scales, dmin * float(m), 16);
            }
        }
    }
}

void q6_k(const uint8_t *src, int64_t K, uint8_t *b, float *scales, float *) {
    const auto *blk = reinterpret_cast<const BlockQ6_K *>(src);
    for (int64_t i = 0; i < K / 256; ++i) {
        const float d = fp16_to_f32(blk[i].d);
        for (int n = 0; n < 2; ++n) {  // 128 elements
            const uint8_t *ql = blk[i].ql + 64 * n, *qh = blk[i].qh + 32 * n;
            uint8_t *out = b + 128 * n;
            for (int l = 0; l < 32; ++l) {  // code - 32 + 128
                out[l] = uint8_t(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) + 96);
                out[l + 32] = uint8_t(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) + 96);
                out[l + 64] = uint8_t(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) + 96);
                out[l + 96] = uint8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) + 96);
            }
        }
        for (int s = 0; s < 16; ++s) scales[s] = d * float(blk[i].scales[s]);  // ggml: d * sc * q
        b += 256;
        scales += 16;
    }
}

struct NbitsRow {
    GgmlType type;
    int bits, block;
    bool offsets;
    RowFn row;
};

constexpr NbitsRow kRows[] = {
    {GgmlType::q4_0, 4, 32, false, q4_0}, {GgmlType::q4_1, 4, 32, true, q4_1},
    {GgmlType::q8_0, 8, 32, false, q8_0}, {GgmlType::q5_0, 8, 32, false, q5_0},
    {GgmlType::q5_1, 8, 32, true, q5_1},  {GgmlType::q2_k, 4, 16, true, q2_k},
    {GgmlType::q3_k, 4, 16, false, q3_k}, {GgmlType::q4_k, 4, 32, true, q4_k},
    {GgmlType::q5_k, 8, 32, true, q5_k},  {GgmlType::q6_k, 8, 16, false, q6_k},
};

}  // namespace

std::optional<NbitsForm> nbits_form(GgmlType type) {
    for (const NbitsRow &r : kRows)
        if (r.type == type) return NbitsForm{r.bits, r.block, r.offsets};
    return std::nullopt;
}

void nbits_rows(GgmlType type, const uint8_t *src, int64_t rows, int64_t K, uint8_t *b,
                float *scales, float *offsets) {
    for (const NbitsRow &r : kRows) {
        if (r.type != type) continue;
        const size_t in_row = size_t(K / traits(type).block_size * traits(type).type_size);
        const int64_t k_blocks = K / r.block;
        const size_t blob = size_t(r.block * r.bits / 8);
        for (int64_t i = 0; i < rows; ++i)
            r.row(src + size_t(i) * in_row, K, b + size_t(i) * size_t(k_blocks) * blob,
                  scales + i * k_blocks, offsets ? offsets + i * k_blocks : nullptr);
        return;
    }
}

}  // namespace gguftool::decoder
