// Every quantized format, on every SIMD target and the portable one: our FLOAT decode must equal
// llama.cpp's dequantize_row_<type> bit for bit (NaN matching NaN), on data made by llama.cpp's
// quantizers from several distributions and on random bytes.
#include "quant_test_util.hpp"

namespace gguftool {
namespace {

using testkit::Distribution;
using testutil::TypeTarget;

constexpr size_t kElements = 16384;  // 64 blocks of 256, 512 of 32
constexpr size_t kPerRow = 1024;     // a multiple of every block size
constexpr size_t kRandomElements = 65536;

// llama.cpp's quantization of one distribution. An importance matrix where llama.cpp requires
// one, and for the mixed data on every type (it takes the quantizers down their weighted paths).
testkit::Quantized quantize(const reference::Ggml &g, GgmlType t, Distribution d) {
    const uint64_t seed = 1000 * uint64_t(t) + uint64_t(d);
    const std::vector<float> values = testkit::make_values(d, kElements, seed);
    const bool needs = g.quantize_requires_imatrix && g.quantize_requires_imatrix(int(t));
    const std::vector<float> imatrix = needs || d == Distribution::mixed
                                           ? testkit::make_imatrix(kPerRow, seed + 1)
                                           : std::vector<float>{};
    return testkit::quantize_with_llama(g, t, values, kPerRow, imatrix);
}

// One test per format, looping over the targets inside: building the IQ quantizers' grids takes
// llama.cpp seconds per type and per process (ctest runs every test in its own process).
class LlamaQuantizer : public testing::TestWithParam<GgmlType> {};

TEST_P(LlamaQuantizer, EveryTargetMatches) {
    const GgmlType type = GetParam();
    const reference::Ggml *g = &testkit::llama();  // or a failed test
    for (Distribution d : testkit::kDistributions) {
        const testkit::Quantized q = quantize(*g, type, d);
        if (q.bytes.empty()) {
            // llama.cpp itself cannot quantize some extreme inputs (its grid searches abort); the
            // ordinary distribution must always work.
            ASSERT_NE(d, Distribution::normal) << q.failure;
            std::printf("note: %s, %s data: %s; case not run\n", type_name(type),
                        testkit::distribution_name(d), q.failure.c_str());
            continue;
        }
        const std::vector<float> expected = testkit::llama_decode(*g, type, q.bytes);
        for (int64_t target : testutil::simd_targets()) {
            SCOPED_TRACE(std::string(type_name(type)) + ", " + testkit::distribution_name(d) +
                         " data, target " + hwy::TargetName(target));
            testutil::ForcedTarget forced(target);
            EXPECT_TRUE(testkit::same_bits(expected, testutil::our_decode(type, q.bytes),
                                           testkit::Nans::any));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, LlamaQuantizer, testing::ValuesIn(testkit::quantized_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });

// Random bytes: one test per (format, target).
class LlamaMatch : public testing::TestWithParam<TypeTarget> {};

TEST_P(LlamaMatch, RandomBytes) {
    const auto [type, target] = GetParam();
    const reference::Ggml *g = &testkit::llama();  // or a failed test
    SCOPED_TRACE(std::string(type_name(type)) + ", random bytes, target " +
                 hwy::TargetName(target));
    const std::vector<uint8_t> in =
        testutil::random_blocks(type, kRandomElements, 77 + uint64_t(type));
    const std::vector<float> expected = testkit::llama_decode(*g, type, in);
    testutil::ForcedTarget forced(target);
    EXPECT_TRUE(testkit::same_bits(expected, testutil::our_decode(type, in), testkit::Nans::any));
}

// A block count that is not a multiple of any vector width or unroll factor, so tails are hit.
TEST_P(LlamaMatch, OddBlockCounts) {
    const auto [type, target] = GetParam();
    const reference::Ggml *g = &testkit::llama();  // or a failed test
    const TypeTraits &tt = traits(type);
    for (size_t blocks : {1, 3, 7, 13}) {
        SCOPED_TRACE(std::string(type_name(type)) + ", " + std::to_string(blocks) +
                     " random blocks, target " + hwy::TargetName(target));
        const std::vector<uint8_t> in = testkit::random_bytes(blocks * tt.type_size, blocks);
        const std::vector<float> expected = testkit::llama_decode(*g, type, in);
        testutil::ForcedTarget forced(target);
        EXPECT_TRUE(
            testkit::same_bits(expected, testutil::our_decode(type, in), testkit::Nans::any));
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, LlamaMatch,
                         testing::ValuesIn(testutil::quantized_types_by_target()),
                         testutil::type_target_name);

// The test list covers the whole table: its quantized types are exactly llama.cpp's block formats
// (more than one element per block) among the ids the table knows.
TEST(QuantFormats, TableHasEveryBlockFormat) {
    auto g = reference::ggml();
    ASSERT_NE(g, nullptr);
    std::vector<GgmlType> llama_blocks;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (!kTypeTable[id].removed && g->blck_size(int(id)) > 1)
            llama_blocks.push_back(static_cast<GgmlType>(id));
    EXPECT_EQ(testkit::quantized_types(), llama_blocks);
    EXPECT_FALSE(llama_blocks.empty());
}

}  // namespace
}  // namespace gguftool
