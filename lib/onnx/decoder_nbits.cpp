// GGUF blocks as onnxruntime's MatMulNBits operands (com.microsoft.MatMulNBits, onnxruntime's
// docs/ContribOperators.md): per weight row, B [k_blocks][block·bits/8] (bits 4: element 2i in
// the low nibble of byte i, 2i+1 in the high one; bits 8: one byte per element) and scales
// [k_blocks], codes stored symmetric so that MatMulNBits' default zero point (8 for 4 bits, 128
// for 8) applies: no zero-point input, which keeps onnxruntime on its packed integer kernels (a
// float zero point sends it to a path that decodes the whole matrix on every call).
//
// Every format's values are integers times a unit per sub-block (ggml-quants.c's
// dequantize_row_*): the row of a format gives only that unit (and, for a format with a minimum,
// the minimum) of each sub-block of one GGUF block; the codes come from the format's own exact
// decoder (quant::decode, which is llama.cpp's dequantization bit for bit) divided by the unit.
//   - Without a minimum, w = code · unit with ggml's one rounding: the code is w / unit, and that
//     code · unit must give w back exactly, which is checked (an error otherwise). The unit is the
//     product ggml rounds last: d·sc (q6_K), d·(sc − 32) (q3_K), d·(ls − 32) (iq4_xs), the iq2/iq3
//     block scales, which the signed grid bytes multiply, and for iq1_s/iq1_m dl/8, the codes being
//     8·g ± 1 (ggml's dl·(g ± 1/8)); mxfp4/nvfp4's codes are the doubled e2m1 values (integers)
//     and the unit the halved power-of-two or fp8 scale, as ggml's tables have them.
//   - With a minimum, w = s·q − m (q4_1, q5_1, q2_K, q4_K, q5_K): the centred code q − c and
//     a float offset per block, c·s − m (c·s exact, one rounding); the graph adds sum(block's
//     activations) · offset after the product. A sub-block whose scale is 0 is its offset.
// A unit that is 0, infinite or NaN (random bytes) gives code 0: its block decodes to 0 or NaN; a
// value that overflowed to ±inf (mxfp4's largest scales) gets the code of its sign that overflows.
// The MatMulNBits block is the sub-block the unit belongs to (16 or 32; formats with one scale per
// larger block use 32), its bits 4 where the codes fit (−8..7), else 8.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "decoder.hpp"
#include "formats/blocks.hpp"
#include "gguftool/error.hpp"
#include "gguftool/half.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::decoder {
namespace {

using namespace formats;

// The unit (and minimum, for a format with one) of each of the n sub-blocks of one GGUF block.
using UnitsFn = void (*)(const uint8_t *blk, int n, float *unit, float *min);

template <class B>
const B &as(const uint8_t *p) {
    return *reinterpret_cast<const B *>(p);
}

float f16(uint16_t h) {
    return fp16_to_f32(h);
}

// Formats with one f16 scale `d` for the whole block.
template <class B>
void d_units(const uint8_t *p, int n, float *unit, float *) {
    for (int i = 0; i < n; ++i) unit[i] = f16(as<B>(p).d);
}

// q4_1, q5_1: w = q·d + m.
template <class B>
void dm_units(const uint8_t *p, int, float *unit, float *min) {
    unit[0] = f16(as<B>(p).d);
    min[0] = -f16(as<B>(p).m);
}

void q2_k_units(const uint8_t *p, int, float *unit, float *min) {
    const auto &b = as<BlockQ2_K>(p);
    for (int i = 0; i < 16; ++i) {
        unit[i] = f16(b.d) * float(b.scales[i] & 15);
        min[i] = f16(b.dmin) * float(b.scales[i] >> 4);
    }
}

void q3_k_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockQ3_K>(p);
    for (int i = 0; i < 16; ++i) {  // six-bit scales: low 4 bits, then the high 2
        const int low = i < 8 ? b.scales[i] & 15 : b.scales[i - 8] >> 4;
        const int high = (b.scales[8 + i % 4] >> (2 * (i / 4))) & 3;
        unit[i] = f16(b.d) * float((low | (high << 4)) - 32);
    }
}

// q4_K, q5_K: ggml's get_scale_min_k4.
template <class B>
void k4_units(const uint8_t *p, int, float *unit, float *min) {
    const auto &b = as<B>(p);
    const uint8_t *q = b.scales;
    for (int j = 0; j < 8; ++j) {
        const int sc = j < 4 ? q[j] & 63 : (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        const int m = j < 4 ? q[j + 4] & 63 : (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
        unit[j] = f16(b.d) * float(sc);
        min[j] = f16(b.dmin) * float(m);
    }
}

void q8_k_units(const uint8_t *p, int n, float *unit, float *) {
    for (int i = 0; i < n; ++i) unit[i] = as<BlockQ8_K>(p).d;  // a float32 d
}

void q6_k_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockQ6_K>(p);
    for (int i = 0; i < 16; ++i) unit[i] = f16(b.d) * float(b.scales[i]);
}

// iq2_xxs, iq3_xxs: the 4-bit scale s at the top of each sub-block's u32, d·(0.5 + s)·k.
void iq2_xxs_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq2_XXS>(p);
    for (int i = 0; i < 8; ++i) unit[i] = f16(b.d) * (0.5f + float(b.qs[8 * i + 7] >> 4)) * 0.25f;
}

void iq3_xxs_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq3_XXS>(p);
    for (int i = 0; i < 8; ++i) unit[i] = f16(b.d) * (0.5f + float(b.aux[4 * i + 3] >> 4)) * 0.5f;
}

// iq2_xs, iq2_s: two 4-bit scales per 32, d·(0.5 + s)·0.25.
template <class B>
void iq2_pair_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<B>(p);
    for (int i = 0; i < 16; ++i)
        unit[i] = f16(b.d) * (0.5f + float((b.scales[i / 2] >> (4 * (i % 2))) & 15)) * 0.25f;
}

void iq3_s_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq3_S>(p);
    for (int i = 0; i < 8; ++i)
        unit[i] = f16(b.d) * float(1 + 2 * ((b.scales[i / 2] >> (4 * (i % 2))) & 15));
}

// iq1_s, iq1_m: w = dl·(g ± 1/8) = (8g ± 1)·(dl/8).
void iq1_s_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq1_S>(p);
    for (int i = 0; i < 8; ++i) unit[i] = f16(b.d) * float(2 * ((b.qh[i] >> 12) & 7) + 1) * 0.125f;
}

void iq1_m_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq1_M>(p);
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = uint16_t(b.scales[2 * i] | (b.scales[2 * i + 1] << 8));
    const float d = f16(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                                 (sc[3] & 0xF000)));
    for (int i = 0; i < 16; ++i)  // sub-blocks of 16: 3-bit scales, two per 6 bits
        unit[i] = d * float(2 * ((sc[i / 4] >> (3 * (i % 4))) & 7) + 1) * 0.125f;
}

void iq4_xs_units(const uint8_t *p, int, float *unit, float *) {
    const auto &b = as<BlockIq4_XS>(p);
    for (int i = 0; i < 8; ++i) {
        const int ls =
            ((b.scales_l[i / 2] >> (4 * (i % 2))) & 15) | (((b.scales_h >> (2 * i)) & 3) << 4);
        unit[i] = f16(b.d) * float(ls - 32);
    }
}

void mxfp4_units(const uint8_t *p, int, float *unit, float *) {
    unit[0] = e8m0_to_f32_half(as<BlockMxfp4>(p).e);
}

void nvfp4_units(const uint8_t *p, int, float *unit, float *) {
    for (int i = 0; i < 4; ++i) unit[i] = kUe4m3Half[as<BlockNvfp4>(p).d[i]];
}

struct NbitsRow {
    GgmlType type;
    int bits, block;  // MatMulNBits' bits and block_size: the sub-block of one unit
    UnitsFn units;
    int center = 0;  // a format with a minimum: the code q is stored as q - center, plus the offset
};

// clang-format off
constexpr NbitsRow kRows[] = {
    {GgmlType::q4_0,    4, 32, d_units<BlockQ4_0>},
    {GgmlType::q4_1,    4, 32, dm_units<BlockQ4_1>, 8},
    {GgmlType::q5_0,    8, 32, d_units<BlockQ5_0>},
    {GgmlType::q5_1,    8, 32, dm_units<BlockQ5_1>, 16},
    {GgmlType::q8_0,    8, 32, d_units<BlockQ8_0>},
    {GgmlType::q8_1,    8, 32, d_units<BlockQ8_1>},
    {GgmlType::q1_0,    4, 32, d_units<BlockQ1_0>},
    {GgmlType::q2_0,    4, 32, d_units<BlockQ2_0>},
    {GgmlType::q2_k,    4, 16, q2_k_units, 2},
    {GgmlType::q3_k,    4, 16, q3_k_units},
    {GgmlType::q4_k,    4, 32, k4_units<BlockQ4_K>, 8},
    {GgmlType::q5_k,    8, 32, k4_units<BlockQ5_K>, 16},
    {GgmlType::q6_k,    8, 16, q6_k_units},
    {GgmlType::q8_k,    8, 32, q8_k_units},
    {GgmlType::iq2_xxs, 8, 32, iq2_xxs_units},
    {GgmlType::iq2_xs,  8, 16, iq2_pair_units<BlockIq2_XS>},
    {GgmlType::iq2_s,   8, 16, iq2_pair_units<BlockIq2_S>},
    {GgmlType::iq3_xxs, 8, 32, iq3_xxs_units},
    {GgmlType::iq3_s,   8, 32, iq3_s_units},
    {GgmlType::iq1_s,   8, 32, iq1_s_units},
    {GgmlType::iq1_m,   8, 16, iq1_m_units},
    {GgmlType::iq4_nl,  8, 32, d_units<BlockIq4_NL>},
    {GgmlType::iq4_xs,  8, 32, iq4_xs_units},
    {GgmlType::tq1_0,   4, 32, d_units<BlockTq1_0>},
    {GgmlType::tq2_0,   4, 32, d_units<BlockTq2_0>},
    {GgmlType::mxfp4,   8, 32, mxfp4_units},
    {GgmlType::nvfp4,   8, 16, nvfp4_units},
};
// clang-format on

const NbitsRow *find_row(GgmlType type) {
    for (const NbitsRow &r : kRows)
        if (r.type == type) return &r;
    return nullptr;
}

}  // namespace

std::optional<NbitsForm> nbits_form(GgmlType type) {
    if (const NbitsRow *r = find_row(type)) return NbitsForm{r->bits, r->block, r->center != 0};
    return std::nullopt;
}

void nbits_rows(GgmlType type, const uint8_t *src, int64_t rows, int64_t K, uint8_t *b,
                float *scales, float *offsets) {
    const NbitsRow *r = find_row(type);
    if (!r) throw Error(fmt::format("{}: no MatMulNBits form", type_name(type)));
    const TypeTraits &tt = traits(type);
    const int64_t per_block = int64_t(tt.block_size) / r->block;  // sub-blocks per GGUF block
    const int zp = 1 << (r->bits - 1);
    const size_t in_row = size_t(K / tt.block_size * tt.type_size);
    std::vector<float> w(static_cast<size_t>(K)), unit(static_cast<size_t>(per_block)),
        mins(static_cast<size_t>(per_block));
    std::vector<uint8_t> codes(static_cast<size_t>(r->block));
    for (int64_t row = 0; row < rows; ++row, src += in_row) {
        quant::decode_f32(type, {src, in_row}, uint64_t(K), w.data(), 1);
        for (int64_t g = 0; g < K / int64_t(tt.block_size); ++g) {
            r->units(src + size_t(g) * tt.type_size, int(per_block), unit.data(), mins.data());
            for (int64_t s = 0; s < per_block; ++s, ++scales) {
                const float u = unit[size_t(s)], m = r->center ? mins[size_t(s)] : 0.0f;
                const float *v = w.data() + (g * per_block + s) * r->block;
                const bool usable = std::isfinite(u) && u != 0.0f;
                for (int j = 0; j < r->block; ++j) {
                    // The nearest code (a value that overflowed: the largest of its sign).
                    const float t = usable ? std::clamp((v[j] + m) / u, -1e4f, 1e4f) : 0.0f;
                    const int q = std::isnan(t)
                                      ? 0
                                      : std::clamp(int(std::nearbyint(t)) - r->center, -zp, zp - 1);
                    // Without a minimum the code gives ggml's value back exactly.
                    if (!r->center && usable && float(q) * u != v[j])
                        throw Error(fmt::format(
                            "{} block {} element {}: {} is not a {}-bit code times {} (internal)",
                            type_name(type), row * (K / int64_t(tt.block_size)) + g,
                            s * r->block + j, v[j], r->bits, u));
                    codes[size_t(j)] = uint8_t(q + zp);
                }
                if (r->bits == 8) {
                    std::copy(codes.begin(), codes.end(), b);
                } else {
                    for (int j = 0; j < r->block / 2; ++j)
                        b[j] = uint8_t(codes[size_t(2 * j)] | (codes[size_t(2 * j + 1)] << 4));
                }
                b += r->block * r->bits / 8;
                *scales = u;
                if (offsets) *offsets++ = float(r->center) * u - m;
            }
        }
    }
}

}  // namespace gguftool::decoder
