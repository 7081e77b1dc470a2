// The encoder export (to-onnx --graph encoder) run by the executor against llama.cpp's embeddings
// (libllama): every tiny encoder (bert, nomic-bert, jina-bert-v2, gemma-embedding, qwen3) in F32
// and quantized by llama.cpp, packed and lowered, per token and pooled, in a padded batch; what
// must be refused; and that the tolerance rejects wrong exports.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "decoder_fixtures.hpp"
#include "gguf_rewrite.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/encoder_verify.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/runtime.hpp"
#include "process.hpp"
#include "tiny_encoder.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using runtime::Shape;
using runtime::Tensor;

const char *const kText = "The quick brown fox jumps over the lazy dog, twice: 1, 2.";

bool have_llama() {
    std::string why;
    return reference::load_llama(&why) != nullptr;
}
#define REQUIRE_LLAMA() ASSERT_TRUE(have_llama()) << "libllama is not available (npm ci)"

verify::EncoderReport verify_package(const std::string &gguf, const std::string &dir) {
    verify::EncoderVerifyOptions o;
    o.prompt = kText;
    return verify::verify_encoder(gguf, dir, o);
}

std::string describe(const verify::EncoderReport &r) {
    auto d = [](const verify::EncoderDiff &x) {
        return fmt::format("rel {:.3g} cos {:.8f}{}", x.relative, x.min_cosine,
                           x.pass ? "" : " FAIL");
    };
    std::string s = fmt::format("{} tokens, tolerance {}: per token [{}]", r.tokens.size(),
                                r.tolerance.weights, d(r.tokens_diff));
    if (r.pooled_diff.vectors) s += fmt::format(" pooled {} [{}]", r.pooling, d(r.pooled_diff));
    return s;
}

class Encoder : public ::testing::TestWithParam<std::string> {};

TEST_P(Encoder, F32AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const verify::EncoderReport r = verify_package(testkit::encoder_gguf(GetParam(), "F32"),
                                                   testkit::encoder_package(GetParam(), "F32"));
    EXPECT_TRUE(r.pass) << describe(r);
    EXPECT_EQ(r.pooling, testkit::tiny_encoder(GetParam()).pooling);
    EXPECT_EQ(r.pooled_diff.vectors, 2);
    EXPECT_GE(r.tokens.size(), 10u);
    std::printf("%s F32: %s\n", GetParam().c_str(), describe(r).c_str());
}

TEST_P(Encoder, LoweredF32AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const verify::EncoderReport r = verify_package(testkit::encoder_gguf(GetParam(), "F32"),
                                                   testkit::encoder_package(GetParam(), "F32", 21));
    EXPECT_TRUE(r.pass) << describe(r);
}

// The package's files: config.json's class, sentence-transformers' pooling as the GGUF's
// pooling_type says, left padding for last-token pooling, no generation_config.json.
TEST_P(Encoder, PackageSaysHowToPool) {
    const testkit::TinyEncoder e = testkit::tiny_encoder(GetParam());
    const fs::path dir = testkit::encoder_package(GetParam(), "F32");
    auto read = [&](const fs::path &p) {
        std::ifstream in(dir / p);
        EXPECT_TRUE(in) << p;
        return nlohmann::json::parse(in, nullptr, false);
    };
    EXPECT_FALSE(fs::exists(dir / "generation_config.json"));
    EXPECT_EQ(read("config.json")["use_cache"], false);
    const nlohmann::json pooling = read("1_Pooling/config.json");
    EXPECT_EQ(pooling["pooling_mode_mean_tokens"], e.pooling == "mean");
    EXPECT_EQ(pooling["pooling_mode_cls_token"], e.pooling == "cls");
    EXPECT_EQ(pooling["pooling_mode_lasttoken"], e.pooling == "last");
    EXPECT_TRUE(fs::is_directory(dir / "2_Normalize"));
    const nlohmann::json modules = read("modules.json");
    ASSERT_EQ(modules.size(), 3u);
    EXPECT_EQ(modules[2]["type"], "sentence_transformers.models.Normalize");
    const nlohmann::json tok = read("tokenizer_config.json");
    EXPECT_EQ(tok.value("padding_side", "right"), e.pooling == "last" ? "left" : "right");
}

INSTANTIATE_TEST_SUITE_P(Tiny, Encoder, ::testing::ValuesIn(testkit::tiny_encoder_names()),
                         testkit::DecoderParamName());

// Every encoder-only row of the architecture table has a tiny model.
TEST(ArchitectureTable, EveryEncoderRowHasATinyModel) {
    std::set<std::string> tiny;
    for (const std::string &name : testkit::tiny_encoder_names())
        tiny.insert(testkit::tiny_encoder(name).arch);
    const std::vector<std::string_view> decoders = decoder::architectures();
    for (std::string_view arch : decoder::architectures(decoder::Graph::encoder)) {
        if (std::find(decoders.begin(), decoders.end(), arch) != decoders.end()) continue;
        EXPECT_TRUE(tiny.count(std::string(arch)))
            << arch << " has no variant in tests/support/tiny_encoder.cpp";
    }
}

// llama.cpp's vectors of `tokens` from `gguf`: per token (pooling none), [n][E].
std::vector<float> llama_vectors(const std::string &gguf, const std::vector<int32_t> &tokens) {
    std::string why;
    reference::LlamaModel::Options o;
    o.embeddings = true;
    o.pooling = 0;
    o.n_ctx = 128;
    reference::LlamaModel m(reference::load_llama(&why), gguf, o);
    return m.decode_embeddings(tokens);
}

// The executor's last_hidden_state of one unpadded sequence, [n][E].
std::vector<float> package_vectors(const std::string &dir, const std::vector<int32_t> &tokens) {
    runtime::Model model = runtime::Model::load(dir + "/onnx/model.onnx");
    const int64_t n = int64_t(tokens.size());
    runtime::Inputs in;
    in["input_ids"] = Tensor::from_values(DataType::int64, Shape{1, n},
                                          std::vector<int64_t>(tokens.begin(), tokens.end()));
    in["attention_mask"] =
        Tensor::from_values(DataType::int64, Shape{1, n}, std::vector<int64_t>(size_t(n), 1));
    for (const runtime::ValueInfo &v : model.inputs())
        if (v.name == "token_type_ids")
            in[v.name] = Tensor::from_values(DataType::int64, Shape{1, n},
                                             std::vector<int64_t>(size_t(n), 0));
    runtime::Session session(std::move(model));
    for (auto &[name, t] : session.run(in))
        if (name == "last_hidden_state") return t.to_vector<float>();
    return {};
}

// max |a - b| over the spread of b.
double relative(const std::vector<float> &a, const std::vector<float> &b) {
    double worst = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < b.size(); ++i) {
        worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
        lo = std::min(lo, double(b[i]));
        hi = std::max(hi, double(b[i]));
    }
    return worst / (hi - lo);
}

// Quantized by llama.cpp: verify passes, and the export is no farther from llama.cpp's output on
// the same weights decoded to F32 than llama.cpp's own quantized output is (llama.cpp quantizes
// its activations, the export does not).
class EncoderQuantized : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EncoderQuantized, AgreesWithLlamaCppAndIsNoFartherFromTheDecodedWeights) {
    REQUIRE_LLAMA();
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::encoder_gguf(variant, type);
    const std::string dir = testkit::encoder_package(variant, type);
    const verify::EncoderReport r = verify_package(gguf, dir);
    EXPECT_TRUE(r.pass) << describe(r);
    const std::string decoded = testkit::encoder_gguf(variant, type + "-dequantized");
    const std::vector<float> exact = llama_vectors(decoded, r.tokens);
    const double ours = relative(package_vectors(dir, r.tokens), exact);
    const double llama = relative(llama_vectors(gguf, r.tokens), exact);
    EXPECT_LE(ours, llama) << "ours " << ours << ", llama.cpp's " << llama;
    std::printf("%s %s: %s; from the decoded weights: ours %.3g, llama.cpp %.3g\n", variant.c_str(),
                type.c_str(), describe(r).c_str(), ours, llama);
}

INSTANTIATE_TEST_SUITE_P(Tiny, EncoderQuantized,
                         ::testing::Combine(::testing::ValuesIn(testkit::tiny_encoder_names()),
                                            ::testing::Values("F16", "Q8_0", "Q4_K_M")),
                         testkit::DecoderParamName());

// --weights nbits (MatMulNBits) in the executor: verify passes.
class EncoderNbits : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EncoderNbits, AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const auto &[variant, type] = GetParam();
    const verify::EncoderReport r = verify_package(
        testkit::encoder_gguf(variant, type), testkit::encoder_package(variant, type, 21, true));
    EXPECT_TRUE(r.pass) << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Tiny, EncoderNbits,
                         ::testing::Combine(::testing::ValuesIn(testkit::tiny_encoder_names()),
                                            ::testing::Values("Q4_K_M")),
                         testkit::DecoderParamName());

// ---------------------------------------------------------------------------------------------
// The tolerance rejects wrong exports; bad input is refused.

class EncoderRejects : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(have_llama()) << "libllama is not available (npm ci)";
        dir_ = fs::temp_directory_path() / ("gguftool-encoder-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // The F32 package of `exported` verified against llama.cpp running `reference`.
    verify::EncoderReport verify_export_of(const std::string &exported,
                                           const std::string &reference) {
        const fs::path pkg = dir_ / ("pkg" + std::to_string(packages_++));
        decoder::Options o;
        o.graph = decoder::Graph::encoder;
        decoder::export_decoder(gguf::Model::open(exported), pkg.string(), o);
        const verify::EncoderReport r = verify_package(reference, pkg.string());
        std::printf("%s against %s: %s\n", fs::path(exported).filename().c_str(),
                    fs::path(reference).filename().c_str(), describe(r).c_str());
        return r;
    }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    fs::path dir_;
    int packages_ = 0;
};

// Each quirk shows: an export that ignores it is rejected.
TEST_F(EncoderRejects, BertMadeCausal) {
    const std::string gguf = testkit::encoder_gguf("bert", "F32");
    testkit::edit_key(gguf, path("causal.gguf"), "bert.attention.causal",
                      gguf::MetaValue::boolean(true));
    EXPECT_FALSE(verify_export_of(path("causal.gguf"), gguf).pass);
}

TEST_F(EncoderRejects, AnotherPooling) {
    const std::string gguf = testkit::encoder_gguf("bert", "F32");
    testkit::edit_key(gguf, path("mean.gguf"), "bert.pooling_type", gguf::MetaValue::u32(1));
    const verify::EncoderReport r = verify_export_of(path("mean.gguf"), gguf);
    EXPECT_FALSE(r.pass);
    EXPECT_TRUE(r.tokens_diff.pass) << "only the pooling differs";
}

TEST_F(EncoderRejects, GemmaEmbeddingWithoutItsWindow) {
    const std::string gguf = testkit::encoder_gguf("gemma-embedding", "F32");
    testkit::edit_key(gguf, path("wide.gguf"), "gemma-embedding.attention.sliding_window",
                      gguf::MetaValue::u32(1000));
    EXPECT_FALSE(verify_export_of(path("wide.gguf"), gguf).pass);
}

TEST_F(EncoderRejects, NomicBertExportedAsJina) {
    // The same tensors under jina-bert-v2: ALiBi instead of the rotation, GELU instead of SiLU.
    const std::string gguf = testkit::encoder_gguf("nomic-bert", "F32");
    testkit::rename_arch(gguf, path("jina.gguf"), "nomic-bert", "jina-bert-v2");
    EXPECT_FALSE(verify_export_of(path("jina.gguf"), gguf).pass);
}

class EncoderBadInput : public EncoderRejects {
protected:
    void expect_refused(const std::string &gguf, const std::string &graph,
                        const std::string &needle) {
        const fs::path out = dir_ / "out";
        const testkit::ProcessResult r =
            testkit::run({GGUFTOOL_EXE, "to-onnx", gguf, out.string(), "--graph", graph});
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
        for (const auto &e : fs::directory_iterator(dir_))
            EXPECT_EQ(e.path().filename().string().find(".out"), std::string::npos)
                << "left behind: " << e.path();
    }
};

TEST_F(EncoderBadInput, AnEncoderAsADecoder) {
    expect_refused(testkit::encoder_gguf("bert", "F32"), "decoder",
                   "architecture bert cannot be exported as a decoder");
}

TEST_F(EncoderBadInput, RankPooling) {
    testkit::edit_key(testkit::encoder_gguf("bert", "F32"), path("rank.gguf"), "bert.pooling_type",
                      gguf::MetaValue::u32(4));
    expect_refused(path("rank.gguf"), "encoder", "key bert.pooling_type: rank pooling");
}

TEST_F(EncoderBadInput, NoTokenTypeCount) {
    testkit::edit_key(testkit::encoder_gguf("bert", "F32"), path("types.gguf"),
                      "tokenizer.ggml.token_type_count");
    expect_refused(path("types.gguf"), "encoder", "key tokenizer.ggml.token_type_count: missing");
}

TEST_F(EncoderBadInput, NoPositionEmbeddings) {
    testkit::drop_tensor(testkit::encoder_gguf("bert", "F32"), path("pos.gguf"),
                         "position_embd.weight");
    expect_refused(path("pos.gguf"), "encoder", "tensor position_embd.weight: missing");
}

TEST_F(EncoderBadInput, ALayerNormWithoutItsBias) {
    testkit::drop_tensor(testkit::encoder_gguf("bert", "F32"), path("ln.gguf"),
                         "blk.1.layer_output_norm.bias");
    expect_refused(path("ln.gguf"), "encoder", "tensor blk.1.layer_output_norm.bias: missing");
}

TEST_F(EncoderBadInput, GemmaEmbeddingWithoutItsWindow) {
    testkit::edit_key(testkit::encoder_gguf("gemma-embedding", "F32"), path("nowindow.gguf"),
                      "gemma-embedding.attention.sliding_window");
    expect_refused(path("nowindow.gguf"), "encoder",
                   "key gemma-embedding.attention.sliding_window: missing");
}

TEST_F(EncoderBadInput, Dense3WithoutDense2) {
    testkit::drop_tensor(testkit::encoder_gguf("gemma-embedding", "F32"), path("dense.gguf"),
                         "dense_2.weight");
    expect_refused(path("dense.gguf"), "encoder", "tensor dense_3.weight: without dense_2.weight");
}

}  // namespace
}  // namespace gguftool
