// gguftool generate (gguftool/generate.hpp): every tiny decoder's package generates llama.cpp's
// greedy tokens, from ids and from text (encoded by the package's tokenizer.json as llama.cpp
// tokenizes it), stopping where llama.cpp's vocabulary says generation ends; sampling is
// deterministic for a seed; the command line streams text or prints one JSON object.
#include "gguftool/generate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "decoder_fixtures.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "process.hpp"
#include "tiny_decoder.hpp"

namespace gguftool {
namespace {

const std::vector<int32_t> kPrompt = {1, 17, 42, 300, 7, 99, 128, 5, 260, 33, 64, 200};
constexpr int kNew = 8;

std::shared_ptr<const reference::LlamaLib> llama() {
    std::string why;
    return reference::load_llama(&why);
}

// llama.cpp's greedy continuation of `prompt`: up to `n` tokens, ending at the first one its
// vocabulary ends generation at (llama_vocab_is_eog).
std::vector<int32_t> llama_greedy(const std::string &gguf, const std::vector<int32_t> &prompt,
                                  int n) {
    reference::LlamaModel::Options o;
    o.n_ctx = 256;
    reference::LlamaModel m(llama(), gguf, o);
    std::vector<int32_t> out, feed = prompt;
    int32_t pos = 0;
    while (int(out.size()) < n) {
        const std::vector<float> logits = m.decode(feed, pos);
        pos += int32_t(feed.size());
        const float *last = logits.data() + (feed.size() - 1) * size_t(m.n_vocab());
        out.push_back(int32_t(std::max_element(last, last + m.n_vocab()) - last));
        if (m.is_eog(out.back())) break;
        feed = {out.back()};
    }
    return out;
}

class Generate : public ::testing::TestWithParam<std::string> {};

TEST_P(Generate, FromIdsGivesLlamaCppsGreedyTokens) {
    ASSERT_TRUE(llama()) << "libllama is not available (npm ci)";
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    generate::Options o;
    o.ids = kPrompt;
    o.max_new = kNew;
    const generate::Result r = generate::generate(testkit::decoder_package(GetParam(), "F32"), o);
    EXPECT_EQ(r.prompt_ids, kPrompt);
    EXPECT_EQ(r.ids, llama_greedy(gguf, kPrompt, kNew));
    EXPECT_EQ(r.steps, int(r.ids.size()) - 1);
}

TEST_P(Generate, FromTextGivesLlamaCppsTokens) {
    ASSERT_TRUE(llama()) << "libllama is not available (npm ci)";
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    const std::string text = "the quick brown fox";
    reference::LlamaModel::Options vo;
    vo.vocab_only = true;
    const std::vector<int32_t> ids =
        reference::LlamaModel(llama(), gguf, vo).tokenize(text, true, false);
    generate::Options o;
    o.prompt = text;
    o.max_new = kNew;
    std::string streamed;
    o.on_text = [&](std::string_view s) { streamed += s; };
    const generate::Result r = generate::generate(testkit::decoder_package(GetParam(), "F32"), o);
    EXPECT_EQ(r.prompt_ids, ids);
    EXPECT_EQ(r.ids, llama_greedy(gguf, ids, kNew));
    EXPECT_EQ(streamed, r.text);
}

INSTANTIATE_TEST_SUITE_P(Tiny, Generate, ::testing::ValuesIn(testkit::tiny_decoder_names()),
                         testkit::DecoderParamName());

// The tiny granite's greedy run reaches <|endoftext|> (383, an end-of-generation token by
// llama.cpp's loader, not the EOS) after 5 tokens: generation stops there, though the budget
// allows more (the FromIds test shows llama.cpp stops there too).
TEST(GenerateStops, AtAnEndOfGenerationTokenThatIsNotTheEos) {
    generate::Options o;
    o.ids = kPrompt;
    o.max_new = 64;
    const generate::Result r = generate::generate(testkit::decoder_package("granite", "F32"), o);
    EXPECT_TRUE(r.stopped);
    ASSERT_FALSE(r.ids.empty());
    EXPECT_EQ(r.ids.back(), 383);
    EXPECT_LT(r.ids.size(), 64u);
}

TEST(GenerateSampling, GreedyIsTheFirstLargest) {
    const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 3.0f};
    std::mt19937_64 rng(1);
    EXPECT_EQ(generate::sample(logits.data(), 4, {}, rng), 1);
    // top-k 1 at any temperature, and a top-p below the largest's probability, are greedy too.
    EXPECT_EQ(generate::sample(logits.data(), 4, {.temperature = 5, .top_k = 1}, rng), 1);
    EXPECT_EQ(generate::sample(logits.data(), 4, {.temperature = 5, .top_p = 0.01f}, rng), 1);
}

TEST(GenerateSampling, DrawsFollowTheSoftmax) {
    // Logits log(1), log(2), log(3), log(4) at temperature 1: probabilities 0.1 .. 0.4.
    const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
    std::mt19937_64 rng(7);
    std::map<int32_t, int> seen;
    for (int i = 0; i < 40000; ++i)
        ++seen[generate::sample(logits.data(), 4, {.temperature = 1}, rng)];
    for (int32_t t = 0; t < 4; ++t) EXPECT_NEAR(seen[t] / 40000.0, 0.1 * (t + 1), 0.01) << t;
    // top-k 2 keeps 3 and 4 (3/7 and 4/7); top-p 0.5 keeps 4 and 3 (0.4 + 0.3 >= 0.5).
    seen.clear();
    for (int i = 0; i < 20000; ++i)
        ++seen[generate::sample(logits.data(), 4, {.temperature = 1, .top_k = 2}, rng)];
    EXPECT_EQ(seen[0] + seen[1], 0);
    EXPECT_NEAR(seen[3] / 20000.0, 4.0 / 7, 0.015);
    seen.clear();
    for (int i = 0; i < 20000; ++i)
        ++seen[generate::sample(logits.data(), 4, {.temperature = 1, .top_p = 0.5f}, rng)];
    EXPECT_EQ(seen[0] + seen[1], 0);
}

TEST(GenerateSampling, TheSameSeedGivesTheSameTokens) {
    const std::string package = testkit::decoder_package("qwen2", "F32");
    auto run = [&](uint64_t seed) {
        generate::Options o;
        o.ids = kPrompt;
        o.max_new = 12;
        o.sampling = {.temperature = 1.5f, .top_k = 40, .top_p = 0.95f, .seed = seed};
        return generate::generate(package, o).ids;
    };
    EXPECT_EQ(run(3), run(3));
    EXPECT_NE(run(3), run(4));
}

// ---------------------------------------------------------------------------------------------
// The command line.

TEST(GenerateCli, JsonHasTheIdsTextAndRates) {
    const std::string package = testkit::decoder_package("llama", "F32");
    const testkit::ProcessResult r = testkit::run(
        {GGUFTOOL_EXE, "generate", package, "--ids", "1,17,42,300", "-n", "5", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["prompt_ids"], nlohmann::json({1, 17, 42, 300}));
    EXPECT_LE(j["ids"].size(), 5u);
    EXPECT_TRUE(j["text"].is_string());
    EXPECT_GT(j["prompt_tokens_per_s"].get<double>(), 0);
    for (const char *k : {"stopped", "tokens_per_s"}) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(GenerateCli, StreamsTheTextAndSaysTheRates) {
    const std::string package = testkit::decoder_package("llama", "F32");
    const testkit::ProcessResult r =
        testkit::run({GGUFTOOL_EXE, "generate", package, "--prompt", "hello", "-n", "4"});
    ASSERT_EQ(r.status, 0) << r.err;
    generate::Options o;
    o.prompt = "hello";
    o.max_new = 4;
    EXPECT_EQ(r.out, generate::generate(package, o).text + "\n");
    EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << r.err;
}

TEST(GenerateCli, RefusesWhatItCannotDo) {
    const std::string package = testkit::decoder_package("llama", "F32");
    testkit::ProcessResult r = testkit::run({GGUFTOOL_EXE, "generate", package});
    EXPECT_EQ(r.status, 2) << "no prompt";
    r = testkit::run({GGUFTOOL_EXE, "generate", package, "--prompt", "x", "--chat"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("Jinja"), std::string::npos) << r.err;
    r = testkit::run({GGUFTOOL_EXE, "generate", "/nonexistent", "--ids", "1"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("/nonexistent"), std::string::npos) << r.err;
    r = testkit::run({GGUFTOOL_EXE, "generate", package, "--ids", "1,99999"});
    EXPECT_EQ(r.status, 1) << "an id outside the vocabulary";
}

}  // namespace
}  // namespace gguftool
