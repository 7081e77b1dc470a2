// Truncating a valid file anywhere before the end of its last tensor's data must give an error,
// never a crash; corrupting bytes must give a valid file or an error.
#include <gtest/gtest.h>

#include <algorithm>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::ByteOrder;
using gguf::MetaValue;
using gguf::ValueType;

std::vector<uint8_t> sample(ByteOrder order, bool nested) {
    gguf::Writer w(3, order);
    w.add("general.architecture", MetaValue::str("llama"));
    w.add("llama.block_count", MetaValue::u32(2));
    w.add("tokenizer.ggml.tokens", MetaValue::array_of(std::vector<std::string>{"<s>", "a", ""}));
    w.add("tokenizer.ggml.scores", MetaValue::array_of(std::vector<float>{0, -1, -2}));
    if (nested)
        w.add("nested", MetaValue::array(ValueType::array,
                                         {MetaValue::array_of(std::vector<std::string>{"x"})}));
    w.add("general.alignment", MetaValue::u32(16));
    w.add_tensor("a", GgmlType::q4_0, {32, 2}, testkit::filler(36, 1));
    w.add_tensor("empty", GgmlType::f32, {0}, {});
    w.add_tensor("b", GgmlType::f16, {5}, testkit::filler(10, 2));
    return w.to_bytes();
}

uint64_t end_of_data(const gguf::File &f) {
    uint64_t end = f.data_offset();
    for (const auto &t : f.tensors()) end = std::max(end, t.file_offset + t.bytes);
    return end;
}

void sweep(const std::vector<uint8_t> &bytes, bool check_llama) {
    testkit::TempDir dir;
    const std::string full = dir.file("full.gguf");
    testkit::write_file(full, bytes);
    const auto f = gguf::File::open(full);
    const uint64_t end = end_of_data(*f);
    ASSERT_LT(end, bytes.size() + 1);
    if (check_llama) {
        ASSERT_NE(testkit::ggml(), nullptr);
    }

    // Cutting only the padding after the last tensor leaves a valid file.
    const std::string cut = dir.file("cut.gguf");
    testkit::write_file(cut, bytes);
    for (uint64_t n = bytes.size(); n-- > end;) {
        testkit::resize_file(cut, n);
        EXPECT_NO_THROW(gguf::File::open(cut)) << n;
    }
    for (uint64_t n = end; n-- > 0;) {
        testkit::resize_file(cut, n);
        try {
            gguf::File::open(cut);
            ADD_FAILURE() << "accepted the file cut to " << n << " of " << bytes.size() << " bytes";
        } catch (const Error &e) {
            EXPECT_EQ(e.where(), cut);
            EXPECT_TRUE(e.offset().has_value());
            EXPECT_LE(*e.offset(), n) << e.what();
        }
        // ggml (metadata only) does not look at the tensor data, so it rejects cuts before the
        // data section only.
        if (check_llama && n < f->data_offset()) {
            EXPECT_TRUE(testkit::llama_rejects(cut)) << "llama.cpp accepts a cut at " << n;
        }
    }
}

TEST(Truncation, EveryByteLittleEndian) {
    sweep(sample(ByteOrder::little, false), true);
}
TEST(Truncation, EveryByteBigEndianWithNestedArrays) {
    sweep(sample(ByteOrder::big, true), false);
}

// Random byte corruption: every outcome must be a valid file or a gguftool::Error.
TEST(Truncation, CorruptedBytesGiveErrorsNotCrashes) {
    const std::vector<uint8_t> good = sample(ByteOrder::little, true);
    testkit::TempDir dir;
    const std::string path = dir.file("corrupt.gguf");
    testkit::write_file(path, good);
    uint32_t x = 12345;
    const auto next = [&] {
        x = x * 1103515245u + 12345;
        return x >> 8;
    };
    int errors = 0;
    // Fewer rounds under a sanitizer: fuzz/gguf_reader mutates files under it far longer.
    const int rounds = GGUFTOOL_TEST_SANITIZED ? 300 : 3000;
    for (int round = 0; round < rounds; ++round) {
        std::vector<size_t> flipped;
        const int flips = 1 + static_cast<int>(next() % 3);
        for (int i = 0; i < flips; ++i) {
            const size_t at = next() % good.size();
            const auto b = static_cast<uint8_t>(next() % 4 == 0 ? 0xff : next());
            testkit::patch_file(path, at, &b, 1);
            flipped.push_back(at);
        }
        try {
            const auto f = gguf::File::open(path);
            for (const auto &e : f->metadata()) {  // walk every array
                if (e.value.type() == ValueType::array)
                    e.value.for_each_element([](const gguf::Value &) {});
            }
        } catch (const Error &) {
            ++errors;
        }
        for (const size_t at : flipped) testkit::patch_file(path, at, &good[at], 1);
    }
    EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace gguftool
