// --weights nbits' repacking (decoder_export.hpp: nbits_form, nbits_rows) against llama.cpp's own
// decoding (the test kit's format cases: blocks quantized by llama.cpp, and random bytes, which
// hold every code and subnormal, zero, NaN and Inf scales). Every quantized format has a form. The
// formats without a minimum reproduce llama.cpp's values exactly through MatMulNBits' formula
// (code - zero_point) · scale with the default zero point; those with a float minimum,
// (code - zero_point) · scale + offset, within the bound measured here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "format_cases.hpp"
#include "ggml_data.hpp"
#include "gguftool/decoder_export.hpp"

namespace gguftool {
namespace {

// Over the blocks of `type`'s cases whose values are all finite (llama.cpp-quantized ones, or the
// random-byte ones): the values compared, those not bit-identical to llama.cpp's, those not equal
// (+0 and -0 alike), and the worst |ours - llama.cpp| relative to the largest |value| of its block.
struct Worst {
    uint64_t compared = 0, differing = 0, unequal = 0;
    double relative = 0;
};

Worst check(GgmlType type, bool random) {
    const decoder::NbitsForm form = *decoder::nbits_form(type);
    const std::string kind = random ? "_random" : "_llama";
    Worst w;
    for (const testkit::FormatCase &c : testkit::format_cases()) {
        if (c.type != type || c.want.empty() || !c.name.ends_with(kind)) continue;
        const int64_t rows = c.shape[0], K = c.shape[1], blocks = K / form.block;
        const int64_t blob = form.block * form.bits / 8;
        std::vector<uint8_t> b(size_t(rows * blocks * blob));
        std::vector<float> s(size_t(rows * blocks)), z(size_t(rows * blocks));
        decoder::nbits_rows(type, c.bytes.data(), rows, K, b.data(), s.data(),
                            form.offsets ? z.data() : nullptr);
        for (int64_t i = 0; i < rows * blocks; ++i) {
            const float *want = c.want.data() + i * form.block;
            double big = 0;
            bool finite = true;
            for (int64_t j = 0; j < form.block; ++j) {
                finite = finite && std::isfinite(want[j]);
                big = std::max(big, std::fabs(double(want[j])));
            }
            if (!finite) continue;
            const uint8_t *q = b.data() + i * blob;
            for (int64_t j = 0; j < form.block; ++j) {
                const int code = form.bits == 8 ? q[j] : (q[j / 2] >> ((j & 1) * 4)) & 15;
                // MatMulNBits: (code - zero_point) · scale, in float; + the offset.
                float ours = float(code - (1 << (form.bits - 1))) * s[size_t(i)];
                if (form.offsets) ours += z[size_t(i)];
                ++w.compared;
                w.differing += std::memcmp(&ours, &want[j], 4) != 0;
                w.unequal += ours != want[j];
                if (big > 0)
                    w.relative = std::max(w.relative, std::fabs(double(ours) - want[j]) / big);
            }
        }
    }
    return w;
}

TEST(DecoderNbits, EveryQuantizedFormatHasAForm) {
    for (GgmlType t : testkit::quantized_types()) {
        const std::optional<decoder::NbitsForm> f = decoder::nbits_form(t);
        ASSERT_TRUE(f) << type_name(t);
        EXPECT_TRUE(f->bits == 4 || f->bits == 8) << type_name(t);
        EXPECT_TRUE(f->block == 16 || f->block == 32) << type_name(t);
        EXPECT_EQ(traits(t).block_size % uint32_t(f->block), 0u) << type_name(t);
    }
    for (GgmlType t : testkit::plain_types()) EXPECT_FALSE(decoder::nbits_form(t)) << type_name(t);
}

// Exact: every value equal to llama.cpp's, bit for bit on llama.cpp's blocks; on random bytes a
// block whose scale is 0 may give +0 where llama.cpp's sign flip gives -0.
TEST(DecoderNbits, FormatsWithoutAMinimumAreExact) {
    for (GgmlType t : testkit::quantized_types()) {
        if (decoder::nbits_form(t)->offsets) continue;
        const Worst llama = check(t, false), random = check(t, true);
        EXPECT_GT(llama.compared + random.compared, 0u) << type_name(t);
        EXPECT_EQ(llama.differing, 0u)
            << type_name(t) << ": " << llama.differing << " of " << llama.compared;
        EXPECT_EQ(random.unequal, 0u)
            << type_name(t) << ": " << random.unequal << " of " << random.compared;
    }
}

TEST(DecoderNbits, MinimumFormatsStayWithinTheirBound) {
    // Measured: the offset c·s - m rounds once, the sum once more; the error stays within a few
    // float ulps of the block's largest value.
    for (GgmlType t :
         {GgmlType::q4_1, GgmlType::q5_1, GgmlType::q2_k, GgmlType::q4_k, GgmlType::q5_k}) {
        EXPECT_TRUE(decoder::nbits_form(t)->offsets) << type_name(t);
        for (bool random : {false, true}) {
            const Worst w = check(t, random);
            EXPECT_GT(w.compared, 0u) << type_name(t);
            EXPECT_LE(w.relative, 4.8e-7) << type_name(t) << (random ? " random" : "");
        }
    }
}

// The table of the man page's --weights nbits paragraph: per format its bits per weight in the
// GGUF and as MatMulNBits operands (codes, a float scale per block, a float offset per block for
// a format with a minimum), and how far from llama.cpp's values.
TEST(DecoderNbits, Table) {
    std::printf("%-8s %6s %6s %5s %6s  %-28s %-28s\n", "format", "GGUF", "nbits", "bits", "block",
                "llama.cpp's blocks", "random bytes");
    for (GgmlType t : testkit::quantized_types()) {
        const decoder::NbitsForm f = *decoder::nbits_form(t);
        const double gguf = 8.0 * traits(t).type_size / traits(t).block_size;
        const double nbits = f.bits + 32.0 * (f.offsets ? 2 : 1) / f.block;
        const Worst a = check(t, false), b = check(t, true);
        auto cell = [](const Worst &w) {
            char s[64];
            std::snprintf(s, sizeof s, "%llu/%llu differ, %.2g", (unsigned long long)w.differing,
                          (unsigned long long)w.compared, w.relative);
            return std::string(s);
        };
        std::printf("%-8s %6.4g %6.4g %5d %6d  %-28s %-28s\n", type_name(t), gguf, nbits, f.bits,
                    f.block, cell(a).c_str(), cell(b).c_str());
    }
}

}  // namespace
}  // namespace gguftool
