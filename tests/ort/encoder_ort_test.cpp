// Encoder packages (to-onnx --graph encoder, lowered to opset 21, and --weights nbits) in
// transformers.js' feature-extraction pipeline on onnxruntime-node: a padded batch of three texts,
// pooled and normalised as the package's sentence-transformers files say, gives llama.cpp's
// pooled, L2-normalised embeddings (llama_get_embeddings_seq, common_embd_normalize's default),
// and the graph's sentence_embedding gives llama.cpp's pooled vectors; the texts tokenize as
// llama.cpp tokenizes them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "decoder_fixtures.hpp"
#include "gguftool/llama_reference.hpp"
#include "ort_support.hpp"
#include "tiny_encoder.hpp"

namespace gguftool::orttest {
namespace {

const std::string kTjsDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/ort/encoder_tjs.mjs";
const std::vector<std::string> kTexts = {
    "The quick brown fox jumps over the lazy dog.", "Hello world",
    "Embeddings for search and retrieval: one vector per text, 3 texts in a batch."};

double cosine(const std::vector<double> &a, const std::vector<float> &b) {
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += double(b[i]) * b[i];
    }
    return dot / std::sqrt(na * nb);
}

// The package of (variant, type) in transformers.js against llama.cpp: ids equal, every pipeline
// vector and sentence_embedding row at cosine >= `min_cosine` from llama.cpp's.
void expect_llama_embeddings(const std::string &variant, const std::string &type, bool nbits,
                             double min_cosine) {
    const std::string gguf = testkit::encoder_gguf(variant, type);
    const std::string package = testkit::encoder_package(variant, type, 21, nbits);
    const RunResult r = testkit::run({kNode, kTjsDriver, package, nlohmann::json(kTexts).dump()});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json got = nlohmann::json::parse(r.out);
    std::string why;
    reference::LlamaModel::Options o;
    o.embeddings = true;
    o.n_ctx = 128;
    reference::LlamaModel llama(reference::load_llama(&why), gguf, o);
    ASSERT_EQ(got["pipeline"].size(), kTexts.size());
    ASSERT_EQ(got["sentence"].size(), kTexts.size());
    double worst = 1;
    for (size_t i = 0; i < kTexts.size(); ++i) {
        SCOPED_TRACE(kTexts[i]);
        const std::vector<int32_t> ids = llama.tokenize(kTexts[i], true, false);
        EXPECT_EQ(got["ids"][i].get<std::vector<int32_t>>(), ids);
        llama.clear();
        llama.decode_embeddings(ids);
        const std::vector<float> pooled = llama.pooled();
        const double c = cosine(got["pipeline"][i].get<std::vector<double>>(), pooled);
        const double s = cosine(got["sentence"][i].get<std::vector<double>>(), pooled);
        EXPECT_GE(c, min_cosine);
        EXPECT_GE(s, min_cosine);
        worst = std::min({worst, c, s});
        double norm = 0;
        for (double v : got["pipeline"][i].get<std::vector<double>>()) norm += v * v;
        EXPECT_NEAR(norm, 1.0, 1e-5) << "normalised";
    }
    std::printf("%s %s%s: worst cosine %.8f\n", variant.c_str(), type.c_str(),
                nbits ? " nbits" : "", worst);
}

class EncoderTjs : public ::testing::TestWithParam<std::string> {};

TEST_P(EncoderTjs, FeatureExtractionGivesLlamaCppsEmbeddings) {
    SKIP_WITHOUT_ORT();
    std::string why;
    ASSERT_TRUE(reference::load_llama(&why)) << why;
    expect_llama_embeddings(GetParam(), "F32", false, 0.9999);
}

// Q4_K_M as MatMulNBits (int8 activations, as llama.cpp's): within the quantized weights' reach.
TEST_P(EncoderTjs, NbitsFeatureExtractionGivesLlamaCppsEmbeddings) {
    SKIP_WITHOUT_ORT();
    std::string why;
    ASSERT_TRUE(reference::load_llama(&why)) << why;
    expect_llama_embeddings(GetParam(), "Q4_K_M", true, 0.999);
}

INSTANTIATE_TEST_SUITE_P(Tiny, EncoderTjs, ::testing::ValuesIn(testkit::tiny_encoder_names()),
                         testkit::DecoderParamName());

}  // namespace
}  // namespace gguftool::orttest
