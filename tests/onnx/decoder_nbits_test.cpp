// --weights nbits' repacking (decoder_export.hpp: nbits_form, nbits_rows) against llama.cpp's own
// decoding of llama.cpp-quantized blocks (the test kit's format cases): the formats without a
// minimum reproduce llama.cpp bit for bit through MatMulNBits' formula (code - zero_point) · scale
// with the default zero point; those with a float minimum, (code - zero_point) · scale + offset,
// within the bound measured here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "format_cases.hpp"
#include "gguftool/decoder_export.hpp"

namespace gguftool {
namespace {

// The worst |ours - llama.cpp|, relative to the largest |value| of its block, over every case of
// `type` whose values are finite (the random-byte cases hold NaN and Inf scales).
struct Worst {
    double relative = 0;
    uint64_t compared = 0, differing = 0;
};

Worst check(GgmlType type) {
    const decoder::NbitsForm form = *decoder::nbits_form(type);
    Worst w;
    for (const testkit::FormatCase &c : testkit::format_cases()) {
        if (c.type != type || c.shape.size() != 2 || c.want.empty()) continue;
        bool finite = true;
        for (float v : c.want) finite = finite && std::isfinite(v);
        if (!finite) continue;
        const int64_t rows = c.shape[0], K = c.shape[1], blocks = K / form.block;
        const int64_t blob = form.block * form.bits / 8;
        std::vector<uint8_t> b(size_t(rows * blocks * blob));
        std::vector<float> s(size_t(rows * blocks)), z(size_t(rows * blocks));
        decoder::nbits_rows(type, c.bytes.data(), rows, K, b.data(), s.data(),
                            form.offsets ? z.data() : nullptr);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t kb = 0; kb < blocks; ++kb) {
                const int64_t i = r * blocks + kb;
                double big = 0;
                for (int64_t j = 0; j < form.block; ++j)
                    big = std::max(big,
                                   std::fabs(double(c.want[size_t(r * K + kb * form.block + j)])));
                for (int64_t j = 0; j < form.block; ++j) {
                    const uint8_t *q = b.data() + i * blob;
                    const int code = form.bits == 8 ? q[j] : (q[j / 2] >> ((j & 1) * 4)) & 15;
                    // MatMulNBits: (code - zero_point) · scale, in float; + the offset.
                    float ours = float(code - (1 << (form.bits - 1))) * s[size_t(i)];
                    if (form.offsets) ours += z[size_t(i)];
                    const float want = c.want[size_t(r * K + kb * form.block + j)];
                    ++w.compared;
                    if (std::memcmp(&ours, &want, 4) != 0) ++w.differing;
                    if (big > 0)
                        w.relative = std::max(w.relative, std::fabs(double(ours) - want) / big);
                }
            }
    }
    return w;
}

TEST(DecoderNbits, FormatsWithoutAMinimumAreBitExact) {
    for (GgmlType t :
         {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q5_0, GgmlType::q3_k, GgmlType::q6_k}) {
        EXPECT_FALSE(decoder::nbits_form(t)->offsets) << type_name(t);
        const Worst w = check(t);
        EXPECT_GT(w.compared, 0u) << type_name(t);
        EXPECT_EQ(w.differing, 0u) << type_name(t) << ": " << w.differing << " of " << w.compared;
    }
}

TEST(DecoderNbits, MinimumFormatsStayWithinTheirBound) {
    // Measured: the offset c·s - m rounds once, the sum once more; the error stays within a few
    // float ulps of the block's largest value.
    for (GgmlType t :
         {GgmlType::q4_1, GgmlType::q5_1, GgmlType::q2_k, GgmlType::q4_k, GgmlType::q5_k}) {
        EXPECT_TRUE(decoder::nbits_form(t)->offsets) << type_name(t);
        const Worst w = check(t);
        EXPECT_GT(w.compared, 0u) << type_name(t);
        EXPECT_LE(w.relative, 4.8e-7) << type_name(t);
        std::printf(
            "%s: %llu of %llu values differ from llama.cpp's, worst %.3g of the block's "
            "largest |value|\n",
            type_name(t), (unsigned long long)w.differing, (unsigned long long)w.compared,
            w.relative);
    }
}

TEST(DecoderNbits, FormatsWithoutAMappingHaveNone) {
    for (GgmlType t : {GgmlType::iq4_xs, GgmlType::iq2_xxs, GgmlType::tq1_0, GgmlType::mxfp4,
                       GgmlType::iq4_nl, GgmlType::iq3_s, GgmlType::q8_k, GgmlType::f16})
        EXPECT_FALSE(decoder::nbits_form(t)) << type_name(t);
}

}  // namespace
}  // namespace gguftool
