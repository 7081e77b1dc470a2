// The comparison itself: what counts as a mismatch, absolute differences, ULP distances, and the
// float16/bfloat16 conversions of the expected side against llama.cpp's own.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

using verify::compare_bits;
using verify::Diff;

Diff compare_f32(const std::vector<float> &a, const std::vector<float> &b) {
    return compare_bits(DataType::float32, a.data(), b.data(), a.size());
}

float from_bits(uint32_t b) {
    return std::bit_cast<float>(b);
}

TEST(VerifyCompare, IdenticalArraysMatchAndAnyNaNEqualsAnyNaN) {
    const std::vector<float> a = {1.5f, -0.0f, INFINITY, from_bits(0x7fc00001), 3e-45f};
    std::vector<float> b = a;
    b[3] = from_bits(0xffc12345);  // another NaN: sign and payload differ
    const Diff d = compare_f32(a, b);
    EXPECT_EQ(d.elements, 5u);
    EXPECT_EQ(d.mismatches, 0u);
    EXPECT_EQ(d.max_abs_diff, 0.0);
    EXPECT_EQ(d.max_ulp, 0u);
    EXPECT_FALSE(d.first_mismatch.has_value());
}

TEST(VerifyCompare, SignedZerosDifferByBitsButNotByValue) {
    const Diff d = compare_f32({1.0f, 0.0f}, {1.0f, -0.0f});
    EXPECT_EQ(d.mismatches, 1u);
    EXPECT_EQ(d.first_mismatch, 1u);
    EXPECT_EQ(d.max_abs_diff, 0.0);
    EXPECT_EQ(d.max_ulp, 0u);
}

TEST(VerifyCompare, UlpDistanceCountsRepresentableValuesBetween) {
    const float one = 1.0f, up = std::nextafter(one, 2.0f);
    const float up3 = std::nextafter(std::nextafter(up, 2.0f), 2.0f);
    const float tiny = std::numeric_limits<float>::denorm_min();
    EXPECT_EQ(compare_f32({one}, {up}).max_ulp, 1u);
    EXPECT_EQ(compare_f32({one}, {up}).max_abs_diff, double(up) - double(one));
    EXPECT_EQ(compare_f32({up3}, {one}).max_ulp, 3u);
    EXPECT_EQ(compare_f32({-one}, {-up}).max_ulp, 1u);
    // Across zero: -tiny, (-0 = +0), +tiny.
    EXPECT_EQ(compare_f32({tiny}, {-tiny}).max_ulp, 2u);
    // The largest float and infinity are neighbours; the difference is infinite.
    const Diff inf = compare_f32({FLT_MAX}, {INFINITY});
    EXPECT_EQ(inf.max_ulp, 1u);
    EXPECT_TRUE(std::isinf(inf.max_abs_diff));
    // The maximum is over all mismatches; the first mismatch is the first index.
    const Diff many = compare_f32({one, 2.0f, up3, 5.0f}, {one, 2.0f, one, 4.0f});
    EXPECT_EQ(many.mismatches, 2u);
    EXPECT_EQ(many.first_mismatch, 2u);
    EXPECT_EQ(many.max_abs_diff, 1.0);
    EXPECT_EQ(many.max_ulp,
              uint64_t(std::bit_cast<uint32_t>(5.0f) - std::bit_cast<uint32_t>(4.0f)));
}

TEST(VerifyCompare, NaNAgainstANumberHasNoDistance) {
    const Diff d = compare_f32({1.0f, NAN}, {1.0f, 1.0f});
    EXPECT_EQ(d.mismatches, 1u);
    EXPECT_TRUE(std::isnan(d.max_abs_diff));
    EXPECT_EQ(d.max_ulp, verify::kUlpNaN);
    // A later finite difference does not hide it.
    Diff joined = d;
    joined.append(compare_f32({2.0f}, {3.0f}));
    EXPECT_TRUE(std::isnan(joined.max_abs_diff));
    EXPECT_EQ(joined.max_ulp, verify::kUlpNaN);
}

TEST(VerifyCompare, AppendOffsetsTheFirstMismatch) {
    Diff d = compare_f32({1, 2, 3}, {1, 2, 3});
    d.append(compare_f32({4, 5}, {4, 6}));
    d.append(compare_f32({7}, {8}));
    EXPECT_EQ(d.elements, 6u);
    EXPECT_EQ(d.mismatches, 2u);
    EXPECT_EQ(d.first_mismatch, 4u);
    EXPECT_EQ(d.max_abs_diff, 1.0);
}

TEST(VerifyCompare, OtherElementTypes) {
    // float16: 1.0 = 0x3c00, next 0x3c01; NaN payloads equal.
    const std::vector<uint16_t> h1 = {0x3c00, 0x7e01, 0x0001}, h2 = {0x3c01, 0xfe00, 0x8001};
    const Diff h = compare_bits(DataType::float16, h1.data(), h2.data(), 3);
    EXPECT_EQ(h.mismatches, 2u);
    EXPECT_EQ(h.max_ulp, 2u);  // the smallest subnormals on both sides of zero
    EXPECT_EQ(h.max_abs_diff, std::ldexp(1.0, -10));
    // bfloat16: 1.0 = 0x3f80.
    const std::vector<uint16_t> b1 = {0x3f80}, b2 = {0x3f83};
    EXPECT_EQ(compare_bits(DataType::bfloat16, b1.data(), b2.data(), 1).max_ulp, 3u);
    // float64.
    const std::vector<double> d1 = {1.0, -0.0}, d2 = {std::nextafter(1.0, 0.0), 0.0};
    const Diff d = compare_bits(DataType::float64, d1.data(), d2.data(), 2);
    EXPECT_EQ(d.mismatches, 2u);
    EXPECT_EQ(d.max_ulp, 1u);
    // Integers: the difference of the values, also at the extremes.
    const std::vector<int64_t> i1 = {INT64_MIN, 5}, i2 = {INT64_MAX, 5};
    const Diff i = compare_bits(DataType::int64, i1.data(), i2.data(), 2);
    EXPECT_EQ(i.mismatches, 1u);
    EXPECT_EQ(i.max_ulp, UINT64_MAX);
    const std::vector<int8_t> s1 = {-128}, s2 = {127};
    EXPECT_EQ(compare_bits(DataType::int8, s1.data(), s2.data(), 1).max_ulp, 255u);
    EXPECT_THROW(compare_bits(DataType::bool_, s1.data(), s2.data(), 1), Error);
}

// The expected side's conversions agree with llama.cpp's own (ggml_fp16_to_fp32_row,
// ggml_fp32_to_fp16_row, ggml_bf16_to_fp32_row, ggml_fp32_to_bf16_row_ref).
template <class Fn>
Fn llama_fn(const char *name) {
    const Fn fn = reinterpret_cast<Fn>(dlsym(llama().handle, name));
    if (!fn) ADD_FAILURE() << "libggml-base.so lacks " << name;
    return fn;
}

TEST(VerifyCompare, HalfConversionsMatchLlama) {
    using ToF32 = void (*)(const uint16_t *, float *, int64_t);
    using FromF32 = void (*)(const float *, uint16_t *, int64_t);
    const auto fp16_to_f32 = llama_fn<ToF32>("ggml_fp16_to_fp32_row");
    const auto bf16_to_f32 = llama_fn<ToF32>("ggml_bf16_to_fp32_row");
    const auto f32_to_fp16 = llama_fn<FromF32>("ggml_fp32_to_fp16_row");
    const auto f32_to_bf16 = llama_fn<FromF32>("ggml_fp32_to_bf16_row_ref");
    ASSERT_TRUE(fp16_to_f32 && bf16_to_f32 && f32_to_fp16 && f32_to_bf16);

    // Every 16-bit pattern, widened.
    std::vector<uint16_t> all(65536);
    for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
    std::vector<float> theirs(65536);
    fp16_to_f32(all.data(), theirs.data(), 65536);
    for (uint32_t i = 0; i < 65536; ++i) {
        const float ours = verify::f16_to_f32(uint16_t(i));
        if (std::isnan(theirs[i])) {
            ASSERT_TRUE(std::isnan(ours)) << i;
        } else {
            ASSERT_EQ(std::bit_cast<uint32_t>(ours), std::bit_cast<uint32_t>(theirs[i])) << i;
        }
    }
    bf16_to_f32(all.data(), theirs.data(), 65536);
    for (uint32_t i = 0; i < 65536; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(verify::bf16_to_f32(uint16_t(i))),
                  std::bit_cast<uint32_t>(theirs[i]))
            << i;

    // Narrowing: random bit patterns, every value near a float16 boundary (ties, overflow,
    // subnormals) and around the bfloat16 ties.
    std::vector<float> in;
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) in.push_back(from_bits(rng()));
    for (uint32_t h = 0; h < 0x7c00; h += 7) {
        const uint32_t b = std::bit_cast<uint32_t>(verify::f16_to_f32(uint16_t(h)));
        for (int32_t d = -3; d <= 3; ++d) {
            in.push_back(from_bits(b + uint32_t(d)));
            in.push_back(from_bits((b | 0x80000000u) + uint32_t(d)));
            in.push_back(from_bits(b + 0x1000u + uint32_t(d)));  // half-way to the next one
        }
    }
    for (float f : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 0x1p-25f, 0x1.000002p-25f, 0x1p-24f,
                    0x1.8p-24f, 0x1p-14f, INFINITY, -INFINITY, 0.0f, -0.0f})
        in.push_back(f);
    std::vector<uint16_t> h16(in.size()), b16(in.size());
    f32_to_fp16(in.data(), h16.data(), int64_t(in.size()));
    f32_to_bf16(in.data(), b16.data(), int64_t(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
        const uint16_t h = verify::f32_to_f16(in[i]), b = verify::f32_to_bf16(in[i]);
        if (std::isnan(in[i])) {  // payloads may differ; both must be NaN
            EXPECT_GT(h & 0x7fff, 0x7c00) << std::hex << std::bit_cast<uint32_t>(in[i]);
            EXPECT_GT(b & 0x7fff, 0x7f80) << std::hex << std::bit_cast<uint32_t>(in[i]);
            continue;
        }
        ASSERT_EQ(h, h16[i]) << std::hex << std::bit_cast<uint32_t>(in[i]);
        ASSERT_EQ(b, b16[i]) << std::hex << std::bit_cast<uint32_t>(in[i]);
    }
}

}  // namespace
}  // namespace gguftool::verifytest
