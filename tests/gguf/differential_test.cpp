// Differential test against llama.cpp's reader: thousands of corrupted variants of a valid file
// are opened by both. Where they disagree, the file must fall under one of the documented
// differences (docs/VALIDATION.md): anything else is a bug on one side.
#include <gtest/gtest.h>

#include <set>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::MetaValue;
using gguf::ValueType;

std::vector<uint8_t> sample() {
    gguf::Writer w;
    w.add("general.architecture", MetaValue::str("llama"));
    w.add("general.alignment", MetaValue::u32(32));
    w.add("llama.block_count", MetaValue::u32(2));
    w.add("flag", MetaValue::boolean(true));
    w.add("tokenizer.ggml.tokens", MetaValue::array_of(std::vector<std::string>{"<s>", "ab", ""}));
    w.add("tokenizer.ggml.scores", MetaValue::array_of(std::vector<float>{0, -1, -2}));
    w.add("big", MetaValue::u64(1ull << 40));
    w.add_tensor("token_embd.weight", GgmlType::q8_0, {32, 2}, testkit::filler(68, 1));
    w.add_tensor("norm", GgmlType::f32, {3}, testkit::filler(12, 2));
    w.add_tensor("out", GgmlType::f16, {4, 2}, testkit::filler(16, 3));
    return w.to_bytes();
}

// Files we accept and ggml rejects, by design: nested arrays, tensor data not laid out as the
// running sum of padded sizes (any aligned, non-overlapping order), 64-byte tensor names, and
// tensor names that differ only after a NUL byte (ggml keeps names as C strings).
std::string why_we_accept(const gguf::File &f) {
    for (const auto &e : f.metadata())
        if (e.value.type() == ValueType::array && e.value.array_type() == ValueType::array)
            return "nested array";
    std::set<std::string_view> c_names;
    for (const auto &t : f.tensors())
        if (!c_names.insert(testkit::up_to_nul(t.name)).second) return "names equal up to a NUL";
    uint64_t expected = 0;
    for (const auto &t : f.tensors()) {
        if (t.name.size() == 64) return "64-byte tensor name";
        if (t.offset != expected) return "tensor data not in ggml's order";
        expected += (t.bytes + f.alignment() - 1) / f.alignment() * f.alignment();
    }
    return "";
}

// Files we reject and ggml (metadata only) accepts, by design: tensor data past the end of the
// file (ggml does not look at the data section), element counts that ggml's int64 product wraps.
bool expected_llama_accepts(const Error &e) {
    return e.problem().find("extend past the end of the file") != std::string::npos ||
           e.problem().find("overflows int64") != std::string::npos;
}

TEST(Differential, CorruptedFilesAgreeWithLlama) {
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    const std::vector<uint8_t> good = sample();
    testkit::TempDir dir;
    const std::string path = dir.file("corrupt.gguf");
    testkit::write_file(path, good);
    uint32_t x = 987654321;
    const auto next = [&] {
        x = x * 1103515245u + 12345;
        return x >> 8;
    };
    int both_accept = 0, both_reject = 0, only_we_accept = 0, only_llama_accepts = 0;
    // Fewer rounds under a sanitizer: fuzz/gguf_reader mutates files under it far longer.
    const int rounds = GGUFTOOL_TEST_SANITIZED ? 400 : 4000;
    for (int round = 0; round < rounds; ++round) {
        std::vector<std::pair<size_t, uint8_t>> flipped;
        const int flips = 1 + static_cast<int>(next() % 2);
        for (int i = 0; i < flips; ++i) {
            const size_t at = next() % good.size();
            const auto b = static_cast<uint8_t>(next() % 3 == 0 ? good[at] ^ 1 : next());
            testkit::patch_file(path, at, &b, 1);
            flipped.emplace_back(at, b);
        }
        const bool llama_ok = !testkit::llama_rejects(path);
        try {
            const auto f = gguf::File::open(path);
            if (llama_ok) {
                ++both_accept;
                testkit::expect_same_as_llama(path, *f);
            } else {
                ++only_we_accept;
                EXPECT_NE(why_we_accept(*f), "") << "round " << round << ": llama.cpp rejects";
            }
        } catch (const Error &e) {
            if (llama_ok) {
                ++only_llama_accepts;
                EXPECT_TRUE(expected_llama_accepts(e)) << "round " << round << ": " << e.what();
            } else {
                ++both_reject;
            }
        }
        for (const auto &[at, b] : flipped) testkit::patch_file(path, at, &good[at], 1);
        if (::testing::Test::HasFailure()) break;  // one report is enough
    }
    RecordProperty("both_accept", both_accept);
    RecordProperty("both_reject", both_reject);
    std::printf("both accept %d, both reject %d, only we accept %d, only llama.cpp accepts %d\n",
                both_accept, both_reject, only_we_accept, only_llama_accepts);
    EXPECT_GT(both_accept, 0);
    EXPECT_GT(both_reject, 0);
}

}  // namespace
}  // namespace gguftool
