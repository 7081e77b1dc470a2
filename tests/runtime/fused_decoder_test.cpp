// Fused weight products in whole decoders (the tiny models of tests/support/tiny_decoder.hpp,
// quantized by llama.cpp, dense and mixtures of experts): fused with float products, a prefill
// and steps through the KV cache give the unfused graph's logits bit for bit; fused with int8
// activations, they are as far from those exact logits as llama.cpp's own are (the RMS of the
// difference over the vocabulary, relative to the logits' spread, per step: tests/ort's
// DecoderOrtNbitsInt8 measures onnxruntime's int8 kernels the same way).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "decoder_fixtures.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/runtime.hpp"
#include "llama_ref.hpp"

namespace gguftool {
namespace {

using runtime::WeightProducts;

const std::vector<int32_t> kPrompt = {1, 17, 42, 300, 7, 99, 128, 5, 260, 33, 64, 200};
constexpr int kSteps = 3;

std::shared_ptr<const reference::LlamaLib> llama_lib() {
    static const std::shared_ptr<const reference::LlamaLib> lib = [] {
        std::string why;
        return reference::load_llama(&why);
    }();
    return lib;
}

// llama.cpp's logits of the prompt and kSteps greedy steps, and the tokens it chose.
testkit::LlamaGreedy llama_reference(const std::string &gguf) {
    return testkit::llama_greedy(gguf, kPrompt, kSteps);
}

// RMS of ours - ref over the rows of V logits, relative to the mean spread of ref's rows.
double rms_gap(const std::vector<float> &ours, const std::vector<float> &ref, int64_t V) {
    double sq = 0, spread = 0;
    size_t rows = 0;
    for (size_t r = 0; r * V < ref.size(); ++r, ++rows) {
        const float *e = ref.data() + r * V, *o = ours.data() + r * V;
        const auto [lo, hi] = std::minmax_element(e, e + V);
        spread += double(*hi - *lo);
        for (int64_t i = 0; i < V; ++i) sq += (double(o[i]) - e[i]) * (double(o[i]) - e[i]);
    }
    return std::sqrt(sq / double(ref.size())) / std::max(1e-30, spread / double(rows));
}

class FusedDecoder : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(FusedDecoder, FloatIsTheUnfusedGraphAndInt8NoFartherThanLlamaCpp) {
    ASSERT_TRUE(llama_lib()) << "libllama is not available (npm ci)";
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const std::string package = testkit::decoder_package(variant, type);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    const testkit::LlamaGreedy ref = llama_reference(gguf);
    const std::vector<testkit::DecoderStep> plan = testkit::single_prompt_plan(
        kPrompt, std::vector<int32_t>(ref.chosen.begin(), ref.chosen.begin() + kSteps));
    const auto unfused = testkit::run_decoder_plan(package, h, plan, WeightProducts::unfused);
    const auto exact = testkit::run_decoder_plan(package, h, plan, WeightProducts::fused_float);
    const auto int8 = testkit::run_decoder_plan(package, h, plan, WeightProducts::fused);
    ASSERT_EQ(unfused.size(), plan.size());
    double ours_sum = 0, llama_sum = 0;
    for (size_t s = 0; s < plan.size(); ++s) {
        SCOPED_TRACE(fmt::format("step {}", s));
        ASSERT_EQ(exact[s].size(), unfused[s].size());
        EXPECT_EQ(std::memcmp(exact[s].data(), unfused[s].data(), exact[s].size() * 4), 0)
            << "fused float products are not the unfused graph's";
        const double ours = rms_gap(int8[s], unfused[s], h.n_vocab),
                     llama = rms_gap(ref.logits[s], unfused[s], h.n_vocab);
        // Both quantize the activations the same way (the prompt's 12 rows too), so each step's
        // gap is llama.cpp's up to which codes a rounding tie flips (measured over these 168
        // steps: median 1.00x, at most 1.13x llama.cpp's; over each model's steps at most 1.04x).
        EXPECT_LE(ours, 1.25 * llama) << "int8 activations " << ours << ", llama.cpp " << llama
                                      << " of the spread from the exact decoder";
        ours_sum += ours, llama_sum += llama;
        std::printf("%s %s step %zu: int8 %.3g, llama.cpp %.3g of the spread\n", variant.c_str(),
                    type.c_str(), s, ours, llama);
    }
    EXPECT_LE(ours_sum, 1.1 * llama_sum) << "over the steps";
}

INSTANTIATE_TEST_SUITE_P(Tiny, FusedDecoder,
                         ::testing::Combine(::testing::Values("llama", "qwen2", "gemma2", "phi3",
                                                              "mixtral", "qwen3moe"),
                                            ::testing::Values("Q4_0", "Q8_0", "Q4_K_M", "Q6_K",
                                                              "IQ4_XS", "Q2_K", "Q5_K_M")),
                         testkit::DecoderParamName());

// Prompts long enough that the products (weights and attention) are above OpenBLAS's small-matrix
// line, and one where attention's products of one query head are below it and those of a KV
// head's query heads together above: fused with float products, still the unfused logits.
TEST(FusedDecoderLoop, LongPromptsGiveTheUnfusedLogits) {
    ASSERT_TRUE(llama_lib()) << "libllama is not available (npm ci)";
    const std::string gguf = testkit::decoder_gguf("llama", "Q4_K_M");
    const std::string package = testkit::decoder_package("llama", "Q4_K_M");
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    for (int n : {100, 200}) {
        std::vector<int32_t> prompt;
        for (int i = 0; i < n; ++i) prompt.push_back((i * 37) % 380 + 3);
        const auto plan = testkit::single_prompt_plan(prompt, {7, 11});
        const auto unfused = testkit::run_decoder_plan(package, h, plan, WeightProducts::unfused);
        const auto exact = testkit::run_decoder_plan(package, h, plan, WeightProducts::fused_float);
        for (size_t s = 0; s < plan.size(); ++s)
            EXPECT_EQ(std::memcmp(exact[s].data(), unfused[s].data(), exact[s].size() * 4), 0)
                << n << " tokens, step " << s;
    }
}

// A generation loop on Session::run_step, each present.* carried to the next step's
// past_key_values.* (its KV cache appended in place), gives the logits of run() feeding the
// downloaded presents back, bit for bit, in both fused modes; the carried cache is the present
// run() hands out.
TEST(FusedDecoderLoop, RunStepCarriesTheCacheAsRunFeedsItBack) {
    ASSERT_TRUE(llama_lib()) << "libllama is not available (npm ci)";
    for (const char *variant : {"llama", "qwen3moe"}) {
        SCOPED_TRACE(variant);
        const std::string gguf = testkit::decoder_gguf(variant, "Q4_K_M");
        const std::string package = testkit::decoder_package(variant, "Q4_K_M");
        const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
        const std::vector<testkit::DecoderStep> plan =
            testkit::single_prompt_plan(kPrompt, {5, 9, 300, 2, 77});
        for (WeightProducts mode : {WeightProducts::fused_float, WeightProducts::fused}) {
            // Per step the logits, and in the end the layer 0 keys; `step`: run_step, else run().
            struct Run {
                std::vector<std::vector<float>> logits;
                runtime::Tensor keys;
            };
            auto loop = [&](bool step) {
                runtime::Session session(runtime::Model::load(package + "/onnx/model.onnx"),
                                         runtime::RunOptions{.weight_products = mode});
                runtime::Session::Carry carry;
                runtime::Inputs in;
                for (int64_t il = 0; il < h.n_layer; ++il)
                    for (const char *kv : {"key", "value"}) {
                        const std::string past = fmt::format("past_key_values.{}.{}", il, kv);
                        carry.emplace_back(fmt::format("present.{}.{}", il, kv), past);
                        in[past] = runtime::Tensor::zeros(
                            DataType::float32, runtime::Shape{1, h.n_head_kv, 0, h.head_dim});
                    }
                Run r;
                for (size_t s = 0; s < plan.size(); ++s) {
                    const int64_t n = int64_t(plan[s].ids[0].size());
                    in["input_ids"] =
                        runtime::Tensor::from_values(DataType::int64, {1, n}, plan[s].ids[0]);
                    in["attention_mask"] = runtime::Tensor::from_values(
                        DataType::int64, {1, int64_t(plan[s].mask[0].size())}, plan[s].mask[0]);
                    in["position_ids"] =
                        runtime::Tensor::from_values(DataType::int64, {1, n}, plan[s].positions[0]);
                    if (step) {
                        const runtime::NamedTensors out = session.run_step(in, carry);
                        if (s == 0)  // the carried values bind from now on
                            for (const auto &[present, past] : carry) in.erase(past);
                        EXPECT_EQ(out.size(), 1u);
                        r.logits.push_back(out.at(0).second.to_vector<float>());
                        continue;
                    }
                    for (auto &[name, t] : session.run(in)) {
                        if (name == "logits")
                            r.logits.push_back(t.to_vector<float>());
                        else
                            in["past_key_values." + name.substr(8)] = t;
                    }
                }
                r.keys = step ? session.carried("present.0.key") : in.at("past_key_values.0.key");
                if (step) {
                    EXPECT_FALSE(session.carried("logits").defined());
                }
                return r;
            };
            const Run fed = loop(false), carried = loop(true);
            ASSERT_EQ(carried.logits.size(), fed.logits.size());
            for (size_t s = 0; s < fed.logits.size(); ++s) {
                ASSERT_EQ(carried.logits[s].size(), fed.logits[s].size());
                EXPECT_EQ(std::memcmp(carried.logits[s].data(), fed.logits[s].data(),
                                      fed.logits[s].size() * 4),
                          0)
                    << "step " << s;
            }
            // The keys, kept transposed for attention, come out as the graph gives them.
            ASSERT_TRUE(carried.keys.defined());
            EXPECT_EQ(carried.keys.shape(), fed.keys.shape());
            EXPECT_EQ(std::memcmp(carried.keys.data(), fed.keys.data(), fed.keys.nbytes()), 0);
        }
    }
}

}  // namespace
}  // namespace gguftool
