// Length and type errors: thrown as gguftool::Error with a clear message, before any input byte
// is read (the input here sits on a page that may not be read at all).
#include <sys/mman.h>

#include "gguftool/error.hpp"
#include "quant_test_util.hpp"

namespace gguftool {
namespace {

// Memory that faults when touched: a decode that reads it crashes the test.
class UnreadableBytes {
public:
    explicit UnreadableBytes(size_t n) : size_(n) {
        p_ = mmap(nullptr, n + 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    ~UnreadableBytes() { munmap(p_, size_ + 1); }
    std::span<const uint8_t> span(size_t n) const { return {static_cast<const uint8_t *>(p_), n}; }

private:
    void *p_;
    size_t size_;
};

// Runs decode and returns the Error's message, or "" when nothing was thrown.
std::string error_of(GgmlType t, std::span<const uint8_t> in, uint64_t elements,
                     DataType o = DataType::float32) {
    std::vector<uint8_t> out(1 << 16);
    try {
        quant::decode(t, in, elements, out.data(), o, 1);
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

class LengthErrors : public testing::TestWithParam<GgmlType> {};

TEST_P(LengthErrors, WrongByteCountThrowsBeforeReading) {
    const GgmlType t = GetParam();
    const TypeTraits &tt = traits(t);
    const UnreadableBytes mem(4 * tt.type_size + 1);
    const uint64_t elements = 4 * tt.block_size;
    for (size_t bytes : {size_t(4 * tt.type_size - 1), size_t(4 * tt.type_size + 1), size_t(0)}) {
        const std::string msg = error_of(t, mem.span(bytes), elements);
        EXPECT_NE(msg.find(tt.name), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(bytes) + " bytes"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(4 * tt.type_size)), std::string::npos) << msg;
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, LengthErrors, testing::ValuesIn(testkit::quantized_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });
INSTANTIATE_TEST_SUITE_P(PlainTypes, LengthErrors, testing::ValuesIn(testkit::plain_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });

// Plain types have block size 1: no partial blocks.
class PartialBlocks : public testing::TestWithParam<GgmlType> {};

TEST_P(PartialBlocks, Throw) {
    const GgmlType t = GetParam();
    const TypeTraits &tt = traits(t);
    const UnreadableBytes mem(2 * tt.type_size);
    const std::string msg = error_of(t, mem.span(2 * tt.type_size), 2 * tt.block_size - 1);
    EXPECT_NE(msg.find("whole number of " + std::to_string(tt.block_size) + "-element blocks"),
              std::string::npos)
        << msg;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, PartialBlocks, testing::ValuesIn(testkit::quantized_types()),
                         [](const auto &info) { return std::string(type_name(info.param)); });

TEST(DecodeErrors, RemovedTypesThrow) {
    const UnreadableBytes mem(64);
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
        const std::string msg = error_of(static_cast<GgmlType>(id), mem.span(18), 32);
        EXPECT_NE(msg.find("removed"), std::string::npos) << "id " << id << ": " << msg;
        EXPECT_NE(msg.find(type_traits(id)->name), std::string::npos) << msg;
    }
}

TEST(DecodeErrors, UnknownTypeThrows) {
    const UnreadableBytes mem(64);
    for (uint32_t id : {43u, 1000u}) {
        const std::string msg = error_of(static_cast<GgmlType>(id), mem.span(18), 32);
        EXPECT_NE(msg.find("unknown ggml type id " + std::to_string(id)), std::string::npos) << msg;
    }
}

TEST(DecodeErrors, UnknownOutputTypeThrows) {
    const UnreadableBytes mem(18);
    const std::string msg = error_of(GgmlType::q4_0, mem.span(18), 32, static_cast<DataType>(3));
    EXPECT_NE(msg.find("unsupported output type 3"), std::string::npos) << msg;
}

TEST(DecodeErrors, NullOutputThrows) {
    const std::vector<uint8_t> in(18);
    EXPECT_THROW(quant::decode(GgmlType::q4_0, in, 32, nullptr, DataType::float32), Error);
}

TEST(DecodeErrors, EmptyTensorIsFine) {
    EXPECT_NO_THROW(quant::decode(GgmlType::q2_k, {}, 0, nullptr, DataType::float32));
    EXPECT_NO_THROW(quant::decode(GgmlType::f32, {}, 0, nullptr, DataType::float16));
}

TEST(DecodeErrors, OverflowingElementCountThrows) {
    const UnreadableBytes mem(64);
    const std::string msg = error_of(GgmlType::q8_0, mem.span(34), uint64_t(1) << 63);
    EXPECT_NE(msg.find("too many"), std::string::npos) << msg;
}

}  // namespace
}  // namespace gguftool
