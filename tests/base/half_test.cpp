// gguftool/half.hpp against llama.cpp's row conversions (every 16-bit pattern widened; floats
// around every float16 step and bfloat16 tie narrowed), and the NaN and overflow rules.
#include "gguftool/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "gguf_test_support.hpp"

namespace gguftool {
namespace {

// Values any IEEE reading gives.
static_assert(fp16_to_f32(0x3c00) == 1.0f && fp16_to_f32(0xc000) == -2.0f);
static_assert(fp16_to_f32(0x0001) == 0x1p-24f && fp16_to_f32(0x7bff) == 65504.0f);
static_assert(f32_to_fp16(65504.0f) == 0x7bff && f32_to_fp16(65520.0f) == 0x7c00);
static_assert(f32_to_fp16(0x1p-25f) == 0 && f32_to_fp16(0x1.8p-24f) == 0x0002);  // ties to even
static_assert(bf16_to_f32(0x3f80) == 1.0f && f32_to_bf16(1.0f) == 0x3f80);
static_assert(f32_to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie: stays even
static_assert(f32_to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie: up to even
static_assert(f64_to_fp16(65519.99999) == 0x7bff && f64_to_fp16(-1e300) == 0xfc00);
static_assert(f64_to_bf16(1e300) == 0x7f80);
static_assert(i64_to_double_odd(int64_t(1) << 60 | 1) != double(int64_t(1) << 60));  // sticky bit

template <class Fn>
Fn llama_fn(const char *name) {
    const reference::Ggml *g = testkit::ggml();
    if (!g) return nullptr;
    return reinterpret_cast<Fn>(dlsym(g->handle, name));
}

using ToF32 = void (*)(const uint16_t *, float *, int64_t);
using FromF32 = void (*)(const float *, uint16_t *, int64_t);

TEST(Half, WideningMatchesLlamaForEveryPattern) {
    const auto fp16 = llama_fn<ToF32>("ggml_fp16_to_fp32_row");
    const auto bf16 = llama_fn<ToF32>("ggml_bf16_to_fp32_row");
    ASSERT_TRUE(fp16 && bf16) << "llama.cpp's libggml-base.so is needed (npm ci)";
    std::vector<uint16_t> all(65536);
    for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
    std::vector<float> theirs(65536);
    fp16(all.data(), theirs.data(), 65536);
    for (uint32_t i = 0; i < 65536; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(fp16_to_f32(uint16_t(i))),
                  std::bit_cast<uint32_t>(theirs[i]))
            << std::hex << i;
    bf16(all.data(), theirs.data(), 65536);
    for (uint32_t i = 0; i < 65536; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(bf16_to_f32(uint16_t(i))),
                  std::bit_cast<uint32_t>(theirs[i]))
            << std::hex << i;
}

TEST(Half, NarrowingMatchesLlamaAroundEveryStep) {
    const auto fp16 = llama_fn<FromF32>("ggml_fp32_to_fp16_row");
    const auto bf16 = llama_fn<FromF32>("ggml_fp32_to_bf16_row_ref");
    ASSERT_TRUE(fp16 && bf16) << "llama.cpp's libggml-base.so is needed (npm ci)";
    // Every float16 step (2^13 float ulps in the normal range) and bfloat16 half-step, +-1 ulp.
    std::vector<float> in;
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 0x1000)
        for (int d = -1; d <= 1; ++d) in.push_back(std::bit_cast<float>(uint32_t(b + d)));
    std::vector<uint16_t> h(in.size()), bf(in.size());
    fp16(in.data(), h.data(), int64_t(in.size()));
    bf16(in.data(), bf.data(), int64_t(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
        const uint32_t bits = std::bit_cast<uint32_t>(in[i]);
        ASSERT_EQ(f32_to_bf16(in[i]), bf[i]) << std::hex << bits;
        if (std::isnan(in[i])) {  // llama.cpp's fp16 NaN payloads depend on its build
            ASSERT_GT(h[i] & 0x7fff, 0x7c00) << std::hex << bits;
            continue;
        }
        ASSERT_EQ(f32_to_fp16(in[i]), h[i]) << std::hex << bits;
    }
}

TEST(Half, NanKeepsSignAndTopPayloadAndBecomesQuiet) {
    // A negative signalling NaN whose top ten payload bits are 0111111111: the quiet bit is set,
    // the sign and the nine payload bits below it are kept.
    const float snan = std::bit_cast<float>(0xffbfe000u);
    EXPECT_EQ(f32_to_fp16(snan), 0xffff);
    EXPECT_EQ(f32_to_bf16(snan), 0xffff);
    EXPECT_EQ(f64_to_fp16(std::bit_cast<double>(0xfff7fc0000000000ull)), 0xffff);
    EXPECT_EQ(f64_to_bf16(std::bit_cast<double>(0x7ff0000000000001ull)), 0x7fc0);
    // A signalling half widens to a quiet float with its payload.
    EXPECT_EQ(std::bit_cast<uint32_t>(fp16_to_f32(0x7c01)), 0x7fc02000u);
}

TEST(Half, OverflowGivesInfinity) {
    EXPECT_EQ(f32_to_fp16(INFINITY), 0x7c00);
    EXPECT_EQ(f32_to_fp16(-70000.0f), 0xfc00);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // FLT_MAX rounds up
    EXPECT_EQ(f64_to_fp16(1e10), 0x7c00);
}

}  // namespace
}  // namespace gguftool
