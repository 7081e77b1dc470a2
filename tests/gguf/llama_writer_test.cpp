// Files written by llama.cpp's own writer (gguf_write_to_file): we read back what it wrote, and
// our writer produces the same bytes for the same content.
#include <gtest/gtest.h>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "llama_content.hpp"

namespace gguftool {
namespace {

using gguf::MetaValue;
using gguf::ValueType;
using testkit::content_tensors;
using testkit::kContentScores;
using testkit::kContentTokens;
using testkit::kContentTokenTypes;
using testkit::LlamaTensor;
using testkit::write_content_with_llama;

// The same content through our writer.
gguf::Writer our_writer(const std::vector<LlamaTensor> &specs) {
    gguf::Writer w;
    w.add("general.architecture", MetaValue::str("llama"));
    w.add("v.u8", MetaValue::u8(200));
    w.add("v.i8", MetaValue::i8(-100));
    w.add("v.u16", MetaValue::u16(60000));
    w.add("v.i16", MetaValue::i16(-20000));
    w.add("llama.context_length", MetaValue::u32(4096));
    w.add("v.i32", MetaValue::i32(-123456));
    w.add("llama.rope.freq_base", MetaValue::f32(10000.5f));
    w.add("v.bool", MetaValue::boolean(true));
    w.add("v.u64", MetaValue::u64(1ull << 50));
    w.add("v.i64", MetaValue::i64(-(1ll << 50)));
    w.add("v.f64", MetaValue::f64(-0.125));
    w.add("tokenizer.ggml.tokens", MetaValue::array_of(kContentTokens));
    w.add("tokenizer.ggml.scores", MetaValue::array_of(kContentScores));
    w.add("tokenizer.ggml.token_type", MetaValue::array_of(kContentTokenTypes));
    w.add("v.bools", MetaValue::array_of(std::vector<bool>{true, false, true}));
    w.add("v.empty", MetaValue::array_of(std::vector<uint16_t>{}));
    for (const LlamaTensor &s : specs) {
        std::vector<uint64_t> dims(s.ne.begin(), s.ne.end());
        w.add_tensor(s.name, s.type, dims, s.bytes);
    }
    return w;
}

TEST(LlamaWriter, WeReadWhatLlamaWrote) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    testkit::TempDir dir;
    const std::string path = dir.file("llama-written.gguf");
    const auto specs = content_tensors();
    write_content_with_llama(*g, path, specs);

    const auto f = gguf::File::open(path);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->alignment(), 32u);
    EXPECT_EQ(f->find("general.architecture")->value.as_string(), "llama");
    EXPECT_EQ(f->find("v.u8")->value.as_uint(), 200u);
    EXPECT_EQ(f->find("v.i8")->value.as_int(), -100);
    EXPECT_EQ(f->find("v.u16")->value.as_uint(), 60000u);
    EXPECT_EQ(f->find("v.i16")->value.as_int(), -20000);
    EXPECT_EQ(f->find("llama.context_length")->value.type(), ValueType::uint32);
    EXPECT_EQ(f->find("llama.context_length")->value.as_uint(), 4096u);
    EXPECT_EQ(f->find("v.i32")->value.as_int(), -123456);
    EXPECT_EQ(f->find("llama.rope.freq_base")->value.as_double(), 10000.5);
    EXPECT_TRUE(f->find("v.bool")->value.as_bool());
    EXPECT_EQ(f->find("v.u64")->value.as_uint(), 1ull << 50);
    EXPECT_EQ(f->find("v.i64")->value.as_int(), -(1ll << 50));
    EXPECT_EQ(f->find("v.f64")->value.as_double(), -0.125);
    const gguf::Value &tokens = f->find("tokenizer.ggml.tokens")->value;
    ASSERT_EQ(tokens.array_size(), kContentTokens.size());
    for (size_t i = 0; i < kContentTokens.size(); ++i)
        EXPECT_EQ(tokens.element(i).as_string(), kContentTokens[i]);
    const gguf::Value &scores = f->find("tokenizer.ggml.scores")->value;
    ASSERT_EQ(scores.array_type(), ValueType::float32);
    for (size_t i = 0; i < kContentScores.size(); ++i)
        EXPECT_EQ(scores.element(i).as_double(), static_cast<double>(kContentScores[i]));
    const gguf::Value &types = f->find("tokenizer.ggml.token_type")->value;
    for (size_t i = 0; i < kContentTokenTypes.size(); ++i)
        EXPECT_EQ(types.element(i).as_int(), kContentTokenTypes[i]);
    EXPECT_FALSE(f->find("v.bools")->value.element(1).as_bool());
    EXPECT_EQ(f->find("v.empty")->value.array_size(), 0u);

    ASSERT_EQ(f->tensors().size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        const gguf::TensorInfo &t = f->tensors()[i];
        EXPECT_EQ(t.name, specs[i].name);
        EXPECT_EQ(t.type, specs[i].type);
        EXPECT_EQ(t.n_dims, specs[i].ne.size());
        for (size_t d = 0; d < specs[i].ne.size(); ++d)
            EXPECT_EQ(t.ne[d], static_cast<uint64_t>(specs[i].ne[d]));
        ASSERT_EQ(t.bytes, specs[i].bytes.size());
        EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), specs[i].bytes.begin())) << t.name;
    }
    testkit::expect_same_as_llama(path, *f);
}

TEST(LlamaWriter, OurWriterWritesTheSameBytes) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    testkit::TempDir dir;
    const auto specs = content_tensors();
    write_content_with_llama(*g, dir.file("llama.gguf"), specs);
    const std::vector<uint8_t> theirs = testkit::read_file(dir.file("llama.gguf"));
    const std::vector<uint8_t> ours = our_writer(specs).to_bytes();
    ASSERT_EQ(ours.size(), theirs.size());
    EXPECT_TRUE(ours == theirs);
}

// ggml's writer lays data out with its context's alignment (32) even when general.alignment is
// set through gguf_set_val_u32: the file it writes is inconsistent and both readers reject it.
TEST(LlamaWriter, AlignmentKeyIgnoredByLlamaWriterGivesABrokenFile) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr);
    testkit::TempDir dir;
    const std::string path = dir.file("align64.gguf");
    write_content_with_llama(*g, path, content_tensors(), /*alignment_key=*/true);
    EXPECT_TRUE(testkit::llama_rejects(path));
    try {
        gguf::File::open(path);
        ADD_FAILURE() << "accepted a file whose offsets do not follow its general.alignment";
    } catch (const Error &e) {
        EXPECT_NE(e.problem().find("is not a multiple of the alignment 64"), std::string::npos)
            << e.what();
    }
}

// Metadata only (ggml's only_meta): the file ends after the padded tensor infos.
TEST(LlamaWriter, MetadataOnlyFile) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr);
    testkit::TempDir dir;
    const std::string path = dir.file("meta.gguf");
    reference::gguf_context *ctx = g->gguf_init_empty();
    g->gguf_set_val_str(ctx, "general.name", "no tensors");
    ASSERT_TRUE(g->gguf_write_to_file(ctx, path.c_str(), true));
    g->gguf_free(ctx);
    const auto f = gguf::File::open(path);
    EXPECT_EQ(f->find("general.name")->value.as_string(), "no tensors");
    EXPECT_TRUE(f->tensors().empty());
    testkit::expect_same_as_llama(path, *f);
}

}  // namespace
}  // namespace gguftool
