// The thread count never changes a byte: 1, 2, 3 and "all" threads give identical output, for
// every format and output type, on inputs large enough to be split (over 256 KiB of output).
#include <thread>

#include "quant_test_util.hpp"

namespace gguftool {
namespace {

constexpr DataType kOutputs[] = {DataType::float32, DataType::float16, DataType::bfloat16,
                                 DataType::float64};

std::vector<uint8_t> decode_bytes(GgmlType t, const std::vector<uint8_t> &in, size_t elements,
                                  DataType o, unsigned threads) {
    std::vector<uint8_t> out(elements * quant::output_size(o));
    quant::decode(t, in, elements, out.data(), o, threads);
    return out;
}

void check_thread_counts(GgmlType t, size_t elements) {
    const TypeTraits &tt = traits(t);
    const std::vector<uint8_t> in =
        testkit::random_bytes(elements / tt.block_size * tt.type_size, 31 + uint64_t(t));
    for (DataType o : kOutputs) {
        SCOPED_TRACE(std::string(tt.name) + ", output type " + std::to_string(int(o)));
        std::vector<uint8_t> one;
        ASSERT_NO_THROW(one = decode_bytes(t, in, elements, o, 1));
        for (unsigned threads : {2u, 3u, 0u}) {
            EXPECT_TRUE(one == decode_bytes(t, in, elements, o, threads))
                << threads << " threads differ";
        }
    }
}

class Threads : public testing::TestWithParam<GgmlType> {};

// 300 KiB of FLOAT output, an element count that splits unevenly over 2 and 3 threads.
TEST_P(Threads, SameBytesForAnyThreadCount) {
    const uint32_t block = traits(GetParam()).block_size;
    check_thread_counts(GetParam(), (300 * 1024 / 4 / 256 + 1) * 256 + block);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Threads, testing::ValuesIn(testkit::quantized_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });
INSTANTIATE_TEST_SUITE_P(PlainTypes, Threads, testing::ValuesIn(testkit::plain_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });

// Many callers at once share the pool: every result is still right.
TEST(ThreadsConcurrent, ParallelCallersGetTheirOwnResults) {
    const GgmlType t = GgmlType::q8_0;
    const size_t elements = 128 * 1024;
    const std::vector<uint8_t> in = testkit::random_bytes(elements / 32 * 34, 4);
    std::vector<float> serial;
    ASSERT_NO_THROW(serial = testutil::our_decode(t, in, 1));
    std::vector<std::vector<float>> results(4, std::vector<float>(elements));
    std::vector<std::thread> callers;
    for (auto &r : results)
        callers.emplace_back([&] { quant::decode_f32(t, in, elements, r.data(), 2); });
    for (auto &c : callers) c.join();
    for (const auto &r : results) EXPECT_TRUE(testkit::same_bits(serial, r, testkit::Nans::any));
}

}  // namespace
}  // namespace gguftool
