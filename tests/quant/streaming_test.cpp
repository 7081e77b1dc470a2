// Large FLOAT outputs (at least formats::kStreamMinBytes per decoder call) take the decoders'
// non-temporal store path; misaligned outputs take its scratch-buffer variant. Both must stay
// bit-identical to llama.cpp on every target.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "formats/formats.hpp"
#include "quant_test_util.hpp"

namespace gguftool::testutil {
namespace {

class Streaming : public testing::TestWithParam<TypeTarget> {};

TEST_P(Streaming, LargeOutputsMatchLlamaAlignedAndMisaligned) {
    const reference::Ggml *g = &testkit::llama();  // or a failed test
    const GgmlType t = GetParam().type;
    const TypeTraits &tt = traits(t);
    const size_t elements = formats::kStreamMinBytes / sizeof(float) + 4 * tt.block_size;
    const std::vector<uint8_t> in = random_blocks(t, elements, 77);
    const size_t n = in.size() / tt.type_size * tt.block_size;
    const std::vector<float> expected = testkit::llama_decode(*g, t, in);
    ForcedTarget forced(GetParam().target);
    // One thread, so the whole output goes to the decoder in one call.
    const size_t bytes = (n + 16) * sizeof(float);  // a multiple of 64 for every block size
    std::unique_ptr<float, decltype(&std::free)> out(
        static_cast<float *>(std::aligned_alloc(64, bytes)), &std::free);
    ASSERT_NE(out, nullptr);
    for (size_t shift : {0, 1}) {
        SCOPED_TRACE(shift ? "misaligned output" : "64-byte aligned output");
        float *dst = out.get() + shift;
        quant::decode_f32(t, in, n, dst, 1);
        EXPECT_TRUE(same_bits(expected, std::vector<float>(dst, dst + n), Nans::any));
    }
}

// One cheap and one codebook format per family is enough to cover the shared streaming code.
std::vector<TypeTarget> streaming_cases() {
    std::vector<TypeTarget> out;
    for (GgmlType t : {GgmlType::q4_0, GgmlType::q4_k, GgmlType::iq2_xxs, GgmlType::tq1_0,
                       GgmlType::mxfp4, GgmlType::q1_0})
        for (int64_t target : simd_targets()) out.push_back({t, target});
    return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, Streaming, testing::ValuesIn(streaming_cases()),
                         type_target_name);

}  // namespace
}  // namespace gguftool::testutil
