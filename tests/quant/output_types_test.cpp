// FLOAT16, BFLOAT16 and DOUBLE outputs of every quantized format, on every target: llama.cpp's
// FLOAT decode converted by the tests' own reference rounding (reference_rounding.hpp).
#include "quant_test_util.hpp"
#include "reference_rounding.hpp"

namespace gguftool {
namespace {

using testutil::TypeTarget;

constexpr size_t kElements = 32768;

// Random blocks: NaN, infinite, subnormal and ordinary scales, every code; the decoded floats
// reach overflow, ties and subnormals of both 16-bit formats.
std::vector<uint8_t> test_input(GgmlType t) {
    return testutil::random_blocks(t, kElements, 5 + uint64_t(t));
}

template <class T>
std::vector<T> decode_as(GgmlType t, const std::vector<uint8_t> &in, DataType o) {
    const TypeTraits &tt = traits(t);
    const size_t elements = in.size() / tt.type_size * tt.block_size;
    std::vector<T> out(elements);
    quant::decode(t, in, elements, out.data(), o, 1);
    return out;
}

class OutputTypes : public testing::TestWithParam<TypeTarget> {
protected:
    void SetUp() override {
        const reference::Ggml *g = &testkit::llama();  // or a failed test
        in_ = test_input(GetParam().type);
        expected_ = testkit::llama_decode(*g, GetParam().type, in_);
        ASSERT_FALSE(expected_.empty());
    }

    // Narrow outputs: bits equal to the reference rounding, a NaN matching any NaN.
    void check_narrow(DataType o, const testref::NarrowReference &ref) {
        const auto [type, target] = GetParam();
        testutil::ForcedTarget forced(target);
        std::vector<uint16_t> got;
        ASSERT_NO_THROW(got = decode_as<uint16_t>(type, in_, o));
        size_t bad = 0;
        for (size_t i = 0; i < expected_.size(); ++i) {
            const uint16_t want = ref.from_float(expected_[i]);
            if (got[i] == want || (ref.is_nan(got[i]) && ref.is_nan(want))) continue;
            if (bad++ < 3)
                ADD_FAILURE() << type_name(type) << " on " << hwy::TargetName(target)
                              << ": element " << i << " float " << expected_[i] << " (0x"
                              << std::hex << testkit::float_bits(expected_[i])
                              << ") should become 0x" << want << ", got 0x" << got[i] << std::dec;
        }
        EXPECT_EQ(bad, 0u);
    }

    std::vector<uint8_t> in_;
    std::vector<float> expected_;
};

TEST_P(OutputTypes, Float16) {
    check_narrow(DataType::float16, testref::half_reference());
}

TEST_P(OutputTypes, BFloat16) {
    check_narrow(DataType::bfloat16, testref::bfloat16_reference());
}

TEST_P(OutputTypes, Double) {
    const auto [type, target] = GetParam();
    testutil::ForcedTarget forced(target);
    std::vector<double> got;
    ASSERT_NO_THROW(got = decode_as<double>(type, in_, DataType::float64));
    size_t bad = 0;
    for (size_t i = 0; i < expected_.size(); ++i) {
        const double want = static_cast<double>(expected_[i]);  // exact widening
        if (std::isnan(want) ? std::isnan(got[i]) : std::memcmp(&want, &got[i], 8) == 0) continue;
        if (bad++ < 3)
            ADD_FAILURE() << type_name(type) << " on " << hwy::TargetName(target) << ": element "
                          << i << " should be " << want << ", got " << got[i];
    }
    EXPECT_EQ(bad, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, OutputTypes,
                         testing::ValuesIn(testutil::quantized_types_by_target()),
                         testutil::type_target_name);

}  // namespace
}  // namespace gguftool
