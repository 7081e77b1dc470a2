// llama.cpp's libllama as a run-time-loaded reference (llama_reference.hpp): loading and the ABI
// check, a tiny F32 llama's logits (the kit's tiny "llama" decoder, tiny_decoder.hpp: one batch
// against a prefix and single steps, and run twice), quantizing with llama_model_quantize, the
// tokenizer, and errors naming their file.
#include "gguftool/llama_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "gguf_test_support.hpp"
#include "gguftool/error.hpp"
#include "gguftool/gguf.hpp"
#include "tiny_decoder.hpp"

namespace gguftool {
namespace {

using reference::LlamaModel;

// libllama, or a failed test: the suite needs it (CI installs it with npm ci).
std::shared_ptr<const reference::LlamaLib> lib() {
    std::string why;
    auto l = reference::load_llama(&why);
    if (!l) {
        ADD_FAILURE() << "llama.cpp's libllama is not available (run npm ci): " << why;
        throw std::runtime_error("no libllama");
    }
    return l;
}

// The tiny model (the kit's "llama" variant, F32 so that llama.cpp computes in f32), written once
// per test program.
// Made on first use: the kit's table is itself initialized dynamically, in another file.
const testkit::TinyDecoder &tiny() {
    static const testkit::TinyDecoder t = testkit::tiny_decoder("llama");
    return t;
}

const std::string &tiny_model() {
    static const testkit::TempDir dir;  // removed at exit
    static const std::string path = [] {
        const std::string p = dir.file("tiny-llama-f32.gguf");
        testkit::write_tiny_decoder(tiny().name, p);
        return p;
    }();
    return path;
}

float max_abs_diff(const std::vector<float> &a, const std::vector<float> &b) {
    EXPECT_EQ(a.size(), b.size());
    float m = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

const std::vector<int32_t> kTokens = {1, 259, 261, 300, 42, 7, 318, 270};

TEST(LlamaReference, LoadsTheLibraryOnceWithTheExpectedAbi) {
    const auto l = lib();
    EXPECT_EQ(reference::load_llama(nullptr), l);  // once per process
    const std::string path = reference::llama_lib_path(*l);
    EXPECT_NE(path.find("libllama"), std::string::npos) << path;
    EXPECT_FALSE(reference::llama_lib_version(*l).empty());
    std::cout << "libllama: " << path << " (llama_version " << reference::llama_lib_version(*l)
              << ")\n";
}

TEST(LlamaReference, TinyModelShape) {
    LlamaModel m(lib(), tiny_model());
    // What the kit wrote, as llama.cpp's loader reads it.
    EXPECT_EQ(m.n_vocab(), int(tiny().n_vocab));
    EXPECT_EQ(m.n_layer(), int(tiny().n_layer));
    EXPECT_EQ(m.n_head(), int(tiny().n_head));
    EXPECT_EQ(m.n_head_kv(), int(tiny().n_head_kv));
    EXPECT_EQ(m.n_embd(), int(tiny().n_embd));
    EXPECT_EQ(m.n_swa(), 0);
    EXPECT_EQ(m.rope_type(), 0);  // LLAMA_ROPE_TYPE_NORM: llama rotates adjacent pairs
    EXPECT_EQ(m.bos(), 1);
    EXPECT_EQ(m.eos(), 2);
}

// llama.cpp's logits depend on how the tokens are batched: its CPU matrix product
// (ggml_compute_forward_mul_mat, ggml/src/ggml-cpu/ggml-cpu.c) splits and orders its sums by the
// shape of the batch, so one batch against prefix + single steps differs by 3e-7 .. 4e-5.
TEST(LlamaReference, OneBatchMatchesPrefixAndSingleSteps) {
    LlamaModel m(lib(), tiny_model(), {.n_ctx = 64, .n_seq = 1, .threads = 2});
    const int v = m.n_vocab();
    const std::vector<float> batch = m.decode(kTokens, 0);
    ASSERT_EQ(batch.size(), kTokens.size() * size_t(v));

    m.clear();
    std::vector<float> steps = m.decode(std::span(kTokens).first(5), 0);
    for (size_t i = 5; i < kTokens.size(); ++i) {
        const std::vector<float> row = m.decode(std::span(kTokens).subspan(i, 1), int32_t(i));
        steps.insert(steps.end(), row.begin(), row.end());
    }
    const float d = max_abs_diff(batch, steps);
    std::cout << "one batch against 5 + 1 + 1 + 1: max |d logit| " << d << "\n";
    EXPECT_LE(d, 1e-4f);

    // The logits are not trivial: spread over units, different at every position.
    const auto [lo, hi] = std::minmax_element(batch.begin(), batch.end());
    EXPECT_GT(*hi - *lo, 2.0f);
    for (float x : batch) ASSERT_TRUE(std::isfinite(x));
    for (size_t i = 1; i < kTokens.size(); ++i)
        EXPECT_FALSE(std::equal(batch.begin(), batch.begin() + v, batch.begin() + int64_t(i) * v));
}

TEST(LlamaReference, TheSameRunTwiceIsBitIdentical) {
    std::vector<float> first;
    {
        LlamaModel m(lib(), tiny_model(), {.n_ctx = 32, .n_seq = 1, .threads = 2});
        first = m.decode(kTokens, 0);
        m.clear();
        const std::vector<float> again = m.decode(kTokens, 0);
        EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * 4), 0);
    }
    LlamaModel m(lib(), tiny_model(), {.n_ctx = 32, .n_seq = 1, .threads = 2});
    const std::vector<float> second = m.decode(kTokens, 0);
    ASSERT_EQ(first.size(), second.size());
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * 4), 0);
}

TEST(LlamaReference, SequencesAreIndependent) {
    LlamaModel m(lib(), tiny_model(), {.n_ctx = 32, .n_seq = 2, .threads = 2});
    const std::vector<float> a = m.decode(kTokens, 0, 0);
    const std::vector<float> b =
        m.decode(kTokens, 0, 1);  // sequence 0 in the cache changes nothing
    EXPECT_LE(max_abs_diff(a, b), 1e-5f);
    EXPECT_THROW(m.decode(kTokens, 0, 2), Error);
}

TEST(LlamaReference, QuantizesToQ8_0AndLoadsTheResult) {
    const auto l = lib();
    testkit::TempDir dir;
    const std::string out = dir.file("tiny-q8_0.gguf");
    reference::quantize_model(l, tiny_model(), out, *reference::llama_ftype_from_name("Q8_0"), 2);

    const gguf::Model q = gguf::Model::open(out);
    const gguf::TensorInfo *t = q.find_tensor("blk.0.attn_q.weight");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->type, GgmlType::q8_0);
    EXPECT_EQ(q.find_tensor("blk.0.attn_norm.weight")->type, GgmlType::f32);  // 1-d stay f32

    LlamaModel f32(l, tiny_model(), {.n_ctx = 32, .n_seq = 1, .threads = 2});
    LlamaModel q8(l, out, {.n_ctx = 32, .n_seq = 1, .threads = 2});
    const std::vector<float> a = f32.decode(kTokens, 0), b = q8.decode(kTokens, 0);
    // Q8_0 weights and int8 activations (Q8_0's vec_dot_type in type_traits_cpu,
    // ggml/src/ggml-cpu/ggml-cpu.c): close (about 1e-2 relative), not equal.
    const float d = max_abs_diff(a, b);
    float scale = 0;
    for (float x : a) scale = std::max(scale, std::abs(x));
    std::cout << "Q8_0 against F32: max |d logit| " << d << ", max |logit| " << scale << "\n";
    EXPECT_GT(d, 0.0f);
    EXPECT_LT(d, 0.03f * scale);

    // No output left behind by a failing quantization, and the reason given.
    const std::string bad = dir.file("not-a-model.gguf");
    testkit::write_file(bad, std::vector<uint8_t>(100, 'x'));
    try {
        reference::quantize_model(l, bad, dir.file("never.gguf"), 7, 1);
        ADD_FAILURE() << "quantized a file that is not GGUF";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("llama.cpp: "), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                            std::filesystem::directory_iterator()),
              2);  // the Q8_0 model and the bad input
}

TEST(LlamaReference, TokenizeAndDetokenizeRoundTrip) {
    LlamaModel m(lib(), tiny_model());
    for (const std::string text : {"the model", "hello world!", "a tensor of quant blocks",
                                   "x = 42; y = {1, 2}", "gguf tool"}) {
        const std::vector<int32_t> ids = m.tokenize(text, false, false);
        ASSERT_FALSE(ids.empty()) << text;
        std::string back;
        for (int32_t id : ids) back += m.token_to_piece(id, false);
        // SentencePiece puts a space before the text ("▁the").
        EXPECT_EQ(back, " " + text) << text;

        const std::vector<int32_t> with_bos = m.tokenize(text, true, false);
        ASSERT_EQ(with_bos.size(), ids.size() + 1);
        EXPECT_EQ(with_bos[0], m.bos());
        EXPECT_TRUE(std::equal(ids.begin(), ids.end(), with_bos.begin() + 1));
    }
    // The kit's vocabulary (tiny_decoder.cpp): <unk> <s> </s>, the 256 byte tokens (3 + byte),
    // "▁" (259), "▁a".."▁z" (260..), "a".."z" (286..), "▁aa".."▁cs" (312..); the rest is bytes.
    // "▁ab" is reachable by merges ("▁a", then "▁ab"); "▁hi" is not, so "hi" stays "▁h" "i";
    // "H" is no piece, so "Hi" is "▁", the byte 'H' and "i".
    EXPECT_EQ(m.tokenize("ab", false, false), std::vector<int32_t>{312 + 1});  // "▁aa" + 1
    EXPECT_EQ(m.tokenize("hi", false, false),
              (std::vector<int32_t>{260 + 'h' - 'a', 286 + 'i' - 'a'}));
    EXPECT_EQ(m.tokenize("Hi", false, false),
              (std::vector<int32_t>{259, 3 + 'H', 286 + 'i' - 'a'}));
    EXPECT_EQ(m.token_to_piece(2, true), "</s>");
    EXPECT_EQ(m.token_to_piece(2, false), "");
    // A long text needs more room than the first guess.
    std::string long_text;
    for (int i = 0; i < 200; ++i) long_text += "\xE4\xB8\x96\xE7\x95\x8C";  // "世界", not a word
    EXPECT_EQ(m.tokenize(long_text, false, false).size(), 1 + 200 * 6u);    // "▁" and bytes
}

TEST(LlamaReference, AMissingFileIsAnErrorNamingIt) {
    const std::string path = "/nonexistent/gguftool/model.gguf";
    try {
        LlamaModel m(lib(), path);
        ADD_FAILURE() << "loaded a missing file";
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), path);
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_THROW(reference::quantize_model(lib(), path, "/tmp/never.gguf", 7), Error);
}

TEST(LlamaReference, AFileLlamaCppRejectsIsAnErrorWithItsReason) {
    testkit::TempDir dir;
    const std::string path = dir.file("garbage.gguf");
    testkit::write_file(path, std::vector<uint8_t>(64, 0x55));
    try {
        LlamaModel m(lib(), path);
        ADD_FAILURE() << "loaded garbage";
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), path);
        EXPECT_NE(std::string(e.what()).find("llama.cpp: "), std::string::npos) << e.what();
    }
}

TEST(LlamaReference, BadDecodesAreErrors) {
    LlamaModel m(lib(), tiny_model(), {.n_ctx = 16, .n_seq = 1, .threads = 1});
    const std::vector<int32_t> out_of_vocab = {1, int32_t(tiny().n_vocab)};
    EXPECT_THROW(m.decode(out_of_vocab, 0), Error);
    EXPECT_THROW(m.decode(std::span<const int32_t>(), 0), Error);
    EXPECT_THROW(m.decode(std::vector<int32_t>(17, 5), 0), Error);  // larger than the batch
    EXPECT_THROW(m.decode(kTokens, 12), Error);                     // past n_ctx
    m.decode(std::span(kTokens).first(4), 0);
    // Positions must continue the sequence in the cache: llama_decode refuses, and says why.
    try {
        m.decode(std::span(kTokens).subspan(4, 2), 7);
        ADD_FAILURE() << "decoded a gap in the positions";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("llama_decode returned"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("llama.cpp: "), std::string::npos) << e.what();
    }
}

TEST(LlamaReference, LoadsTheSampleModel) {
    // testdata/sample.gguf: two layers, nearly every matrix in another quantized type.
    LlamaModel m(lib(), testkit::kSample, {.n_ctx = 16, .n_seq = 1, .threads = 2});
    EXPECT_EQ(m.n_layer(), 2);
    const std::vector<int32_t> ids = m.tokenize("the model", true, false);
    const std::vector<float> logits = m.decode(ids, 0);
    ASSERT_EQ(logits.size(), ids.size() * size_t(m.n_vocab()));
    for (float x : logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(LlamaReference, FileTypeNames) {
    using reference::llama_ftype_from_name;
    EXPECT_EQ(llama_ftype_from_name("Q4_0"), 2);
    EXPECT_EQ(llama_ftype_from_name("Q8_0"), 7);
    EXPECT_EQ(llama_ftype_from_name("q8_0"), 7);
    EXPECT_EQ(llama_ftype_from_name("Q2_K"), 10);
    EXPECT_EQ(llama_ftype_from_name("Q3_K_M"), 12);
    EXPECT_EQ(llama_ftype_from_name("Q4_K_M"), 15);
    EXPECT_EQ(llama_ftype_from_name("Q4_K"), 15);
    EXPECT_EQ(llama_ftype_from_name("Q5_K_M"), 17);
    EXPECT_EQ(llama_ftype_from_name("Q6_K"), 18);
    EXPECT_EQ(llama_ftype_from_name("IQ4_XS"), 30);
    EXPECT_EQ(llama_ftype_from_name("F16"), 1);
    EXPECT_EQ(llama_ftype_from_name("BF16"), 32);
    EXPECT_EQ(llama_ftype_from_name("F32"), 0);
    EXPECT_EQ(llama_ftype_from_name("15"), 15);
    EXPECT_EQ(llama_ftype_from_name("4"), std::nullopt);  // removed (Q4_1_SOME_F16)
    EXPECT_EQ(llama_ftype_from_name("COPY"), std::nullopt);
    EXPECT_EQ(llama_ftype_from_name("Q9_0"), std::nullopt);
    EXPECT_EQ(llama_ftype_from_name(""), std::nullopt);
    EXPECT_EQ(reference::llama_ftype_name(15), "Q4_K_M");
    EXPECT_EQ(reference::llama_ftype_name(12), "Q3_K_M");
    EXPECT_EQ(reference::llama_ftype_name(4), "");
}

}  // namespace
}  // namespace gguftool
