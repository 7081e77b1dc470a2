// Decoder packages (to-onnx --graph decoder --opset 21) in onnxruntime-node and transformers.js:
// prefill and single steps through the KV cache agree with our executor (1e-5 relative; 1e-4 where
// the graph rounds to fp16: same_math_bound) and with llama.cpp (the verify tolerance); batch 2
// with left padding gives each row its own logits; transformers.js' greedy generate gives
// llama.cpp's greedy tokens, in node and in chromium.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "decoder_fixtures.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/decoder_verify.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/runtime.hpp"
#include "llama_ref.hpp"
#include "onnx_builder.hpp"
#include "ort_support.hpp"
#include "tiny_decoder.hpp"

namespace gguftool::orttest {
namespace {

namespace fs = std::filesystem;
using runtime::Shape;
using runtime::Tensor;

const std::string kDecoderDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/ort/decoder_ort.mjs";
const std::string kTjsDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/ort/decoder_tjs.mjs";
const std::string kBrowserDriver =
    std::string(GGUFTOOL_SOURCE_DIR) + "/tests/ort/decoder_browser.mjs";
const std::vector<int32_t> kPrompt = {1, 17, 42, 300, 7, 99, 128, 5, 260, 33, 64, 200};
constexpr int kOrtOpset = 21;

std::shared_ptr<const reference::LlamaLib> llama_lib() {
    std::string why;
    return reference::load_llama(&why);
}

// As elsewhere in the suite, a missing llama.cpp is a failure, not a skip.
#define SKIP_WITHOUT_LLAMA() ASSERT_TRUE(llama_lib()) << "libllama is not available (npm ci)"

using Step = testkit::DecoderStep;

// llama.cpp's logits of the prompt and of `steps` greedy steps, and the tokens it chose.
using Reference = testkit::LlamaGreedy;
Reference llama_reference(const std::string &gguf, int steps) {
    return testkit::llama_greedy(gguf, kPrompt, steps);
}

std::vector<Step> single_plan(const Reference &ref, int steps) {
    return testkit::single_prompt_plan(
        kPrompt, std::vector<int32_t>(ref.chosen.begin(), ref.chosen.begin() + steps));
}

// Logits per step from onnxruntime-node.
std::vector<std::vector<float>> run_in_ort(const std::string &package, const decoder::Hparams &h,
                                           const std::vector<Step> &plan, const TempDir &tmp) {
    nlohmann::json j;
    j["layers"] = h.n_layer;
    j["kv_heads"] = h.n_head_kv;
    j["head_dim"] = h.head_dim;
    for (const Step &s : plan)
        j["steps"].push_back(
            {{"input_ids", s.ids}, {"attention_mask", s.mask}, {"position_ids", s.positions}});
    const std::string plan_path = tmp.file("plan.json");
    std::ofstream(plan_path) << j.dump();
    const RunResult r = testkit::run(
        {kNode, kDecoderDriver, package + "/onnx/model.onnx", plan_path, tmp.file("out")});
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::vector<float>> out;
    for (size_t s = 0; s < plan.size(); ++s) {
        std::ifstream f(tmp.file("out") + "/logits_" + std::to_string(s) + ".f32",
                        std::ios::binary);
        const std::string bytes{std::istreambuf_iterator<char>(f), {}};
        std::vector<float> v(bytes.size() / 4);
        std::memcpy(v.data(), bytes.data(), v.size() * 4);
        out.push_back(std::move(v));
    }
    return out;
}

// max |a - b| / max(1, max |b|).
double relative_gap(const float *a, const float *b, size_t n) {
    double worst = 0, scale = 1;
    for (size_t i = 0; i < n; ++i) {
        worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return worst / scale;
}

// The root mean square of Δ over every logit of every row, relative to the mean spread of `ref`'s
// rows.
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

// max over rows of max|Δ| / the row's spread in `ref`.
double spread_gap(const std::vector<float> &ours, const std::vector<float> &ref, int64_t V) {
    double worst = 0;
    for (size_t r = 0; r * V < ref.size(); ++r) {
        const float *e = ref.data() + r * V, *o = ours.data() + r * V;
        const auto [lo, hi] = std::minmax_element(e, e + V);
        double m = 0;
        for (int64_t i = 0; i < V; ++i) m = std::max(m, std::fabs(double(o[i]) - double(e[i])));
        worst = std::max(worst, m / std::max(1e-30, double(*hi - *lo)));
    }
    return worst;
}

// The package's end-of-generation ids: generation_config.json's eos_token_id (one id or a list),
// where transformers.js' generate stops (the export lists llama.cpp's llama_vocab_is_eog set).
std::vector<int64_t> end_of_generation(const std::string &package) {
    std::ifstream in(std::filesystem::path(package) / "generation_config.json");
    const nlohmann::json eos = nlohmann::json::parse(in).at("eos_token_id");
    return eos.is_array() ? eos.get<std::vector<int64_t>>()
                          : std::vector<int64_t>{eos.get<int64_t>()};
}

bool ends_generation(const std::vector<int64_t> &eog, int64_t t) {
    return std::find(eog.begin(), eog.end(), t) != eog.end();
}

// The greedy continuation of kPrompt by `package` in the executor: `n` tokens, up to and including
// the first end-of-generation token.
std::vector<int32_t> executor_greedy(const std::string &package, const decoder::Hparams &h, int n) {
    const std::vector<int64_t> eog = end_of_generation(package);
    std::vector<int32_t> chosen;
    while (int(chosen.size()) < n && (chosen.empty() || !ends_generation(eog, chosen.back()))) {
        const auto logits =
            testkit::run_decoder_plan(package, h, testkit::single_prompt_plan(kPrompt, chosen));
        const float *last = logits.back().data() + logits.back().size() - size_t(h.n_vocab);
        chosen.push_back(int32_t(std::max_element(last, last + h.n_vocab) - last));
    }
    return chosen;
}

// The ids transformers.js' greedy generate of `n` tokens must give for `package`: kPrompt, then
// llama.cpp's greedy tokens on `gguf` or, with `executor`, the executor's on the package
// (quantized weights can make a near tie of llama.cpp's (int8 activations) go the other way, which
// verify accepts and this could not); up to and including the first end-of-generation token, where
// llama.cpp stops too (granite's <|endoftext|>, not its EOS).
std::vector<int64_t> greedy_want(const std::string &gguf, const std::string &package, bool executor,
                                 int n) {
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    const std::vector<int64_t> eog = end_of_generation(package);
    std::vector<int64_t> want(kPrompt.begin(), kPrompt.end());
    for (int32_t t :
         executor ? executor_greedy(package, h, n) : llama_reference(gguf, n - 1).chosen) {
        want.push_back(t);
        if (ends_generation(eog, t)) break;
    }
    return want;
}

std::string prompt_ids() {
    std::string ids;
    for (int32_t t : kPrompt) {
        if (!ids.empty()) ids += ',';
        ids += std::to_string(t);
    }
    return ids;
}

constexpr int kNew = 8;

// transformers.js loads `package` offline in node and generates greedy_want's tokens.
void expect_transformers_js_greedy(const std::string &gguf, const std::string &package,
                                   bool executor = false) {
    const std::vector<int64_t> want = greedy_want(gguf, package, executor, kNew);
    const RunResult r =
        testkit::run({kNode, kTjsDriver, package, prompt_ids(), std::to_string(kNew)});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<int64_t> got = nlohmann::json::parse(r.out).get<std::vector<int64_t>>();
    if (got.size() > want.size()) got.resize(want.size());
    EXPECT_EQ(got, want) << r.out;
}

// The package of `variant` in `type` (lowered; `nbits`: --weights nbits, onnxruntime's own
// MatMulNBits, the embedding gathered and decoded by standard operators) run in onnxruntime for the
// prompt and `steps` single steps: within same_math_bound (relative) of the executor and within
// verify's tolerance of llama.cpp.
void expect_steps_agree(const std::string &variant, const std::string &type, bool nbits,
                        int steps) {
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const std::string package = testkit::decoder_package(variant, type, kOrtOpset, nbits);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    const Reference ref = llama_reference(gguf, steps);
    const std::vector<Step> plan = single_plan(ref, steps);
    TempDir tmp;
    const auto ort = run_in_ort(package, h, plan, tmp);
    const auto ours = testkit::run_decoder_plan(package, h, plan);
    const double tolerance = verify::decoder_tolerance(gguf).relative;
    const double same_math = testkit::same_math_bound(package);
    ASSERT_EQ(ort.size(), plan.size());
    for (size_t s = 0; s < plan.size(); ++s) {
        ASSERT_EQ(ort[s].size(), ref.logits[s].size()) << "step " << s;
        ASSERT_EQ(ours[s].size(), ref.logits[s].size()) << "step " << s;
        EXPECT_LE(relative_gap(ort[s].data(), ours[s].data(), ours[s].size()), same_math)
            << "step " << s << ": onnxruntime against the executor";
        EXPECT_LE(spread_gap(ort[s], ref.logits[s], h.n_vocab), tolerance)
            << "step " << s << ": onnxruntime against llama.cpp";
    }
}

class DecoderOrt : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(DecoderOrt, StepsAgreeWithExecutorAndLlamaCpp) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    expect_steps_agree(std::get<0>(GetParam()), std::get<1>(GetParam()), false, 4);
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderOrt,
                         ::testing::Combine(::testing::ValuesIn(testkit::tiny_decoder_names()),
                                            ::testing::Values("F32", "Q4_K_M")),
                         testkit::DecoderParamName());

class DecoderOrtNbits : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(DecoderOrtNbits, StepsAgreeWithExecutorAndLlamaCpp) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    expect_steps_agree(std::get<0>(GetParam()), std::get<1>(GetParam()), true, 2);
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderOrtNbits,
                         ::testing::Combine(::testing::Values("llama", "qwen2", "gemma2", "phi3"),
                                            ::testing::Values("Q4_0", "Q4_1", "Q8_0", "Q2_K",
                                                              "Q3_K_M", "Q4_K_M", "Q5_K_M",
                                                              "Q6_K")),
                         testkit::DecoderParamName());

// gpt-oss as released (MXFP4 experts, Q8_0 elsewhere), every weight kept quantized.
INSTANTIATE_TEST_SUITE_P(Released, DecoderOrtNbits,
                         ::testing::Combine(::testing::Values("gpt-oss"),
                                            ::testing::Values("MXFP4_MOE")),
                         testkit::DecoderParamName());

// The architectures added as rows (smollm3, olmo2, granite, the mixtures of experts) in a format
// of each kind: exact 4 bits, 4 bits with offsets, 8 bits block 16.
INSTANTIATE_TEST_SUITE_P(TinyRows, DecoderOrtNbits,
                         ::testing::Combine(::testing::Values("smollm3", "olmo2", "granite",
                                                              "mixtral", "qwen2moe", "qwen3moe",
                                                              "gpt-oss"),
                                            ::testing::Values("Q4_0", "Q4_K_M", "Q6_K")),
                         testkit::DecoderParamName());

// Every format has a MatMulNBits form: files of the IQ, ternary and fp4 formats (IQ2_XXS with a
// random importance matrix, MXFP4_MOE --pure: every weight mxfp4) exported with --weights nbits
// keep every weight quantized in onnxruntime: the export reports no DequantizePacked, the graph
// holds no weight's GGUF bytes (what a lowered DequantizePacked would decode) and no
// DequantizePacked node; onnxruntime's steps agree with the executor and llama.cpp, and verify
// passes on the executor.
class DecoderOrtNbitsQuantized
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(DecoderOrtNbitsQuantized, NoWeightIsDecodedToFloat) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const gguf::Model model = gguf::Model::open(gguf);
    TempDir tmp;
    decoder::Options o;
    o.weights = decoder::Weights::nbits;
    const decoder::Result r = decoder::export_decoder(model, tmp.file("package"), o);
    EXPECT_EQ(r.packed, 0u);
    std::set<std::string> types;
    for (const auto &[form, count] : r.forms) {
        EXPECT_EQ(form.find("DequantizePacked"), std::string::npos) << form << ": " << count;
        types.insert(form.substr(0, form.find(' ')));
    }
    const onnx::ModelProto m = testkit::load_model(r.model_path);
    std::set<std::string> initializers;
    for (const onnx::TensorProto &t : m.graph().initializer()) initializers.insert(t.name());
    for (const onnx::NodeProto &n : m.graph().node()) EXPECT_NE(n.op_type(), "DequantizePacked");
    size_t quantized = 0;
    for (const gguf::TensorInfo &t : model.tensors()) {
        if (!traits(t.type).quantized) continue;
        ++quantized;
        EXPECT_FALSE(initializers.count(std::string(t.name))) << t.name << " kept its GGUF bytes";
        EXPECT_TRUE(initializers.count(std::string(t.name) + ":nbits")) << t.name;
    }
    EXPECT_GT(quantized, 0u);
    // The file holds the type the test is about.
    const std::string want = type == "IQ2_XXS"          ? "iq2_xxs"
                             : type == "IQ4_XS"         ? "iq4_xs"
                             : type == "TQ2_0"          ? "tq2_0"
                             : type == "MXFP4_MOE-pure" ? "mxfp4"
                                                        : "";
    EXPECT_TRUE(types.count(want)) << type << " has no " << want << " weight";

    const std::string package = testkit::decoder_package(variant, type, kOrtOpset, true);
    verify::DecoderVerifyOptions v;
    v.ids = kPrompt;
    v.steps = 2;
    const verify::DecoderReport report = verify::verify_decoder(gguf, package, v);
    EXPECT_TRUE(report.pass) << "verify on the executor";
    expect_steps_agree(variant, type, true, 2);
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderOrtNbitsQuantized,
                         ::testing::Combine(::testing::Values("llama", "qwen2", "gemma2"),
                                            ::testing::Values("IQ4_XS", "IQ2_XXS", "TQ2_0",
                                                              "MXFP4_MOE-pure")),
                         testkit::DecoderParamName());

// --weights nbits --accuracy-level 4: onnxruntime quantizes the activations to int8 per block of
// the weight's (32 or 16), as llama.cpp does for its dot products (Q8_0: blocks of 32 for q4_0
// and q8_0; Q8_K: blocks of 256 for the K formats). Its logits may be no farther from the exact
// decoder (the packed export of the same file: every weight decoded exactly, float math) than
// llama.cpp's own, measured as the RMS of Δ over the vocabulary, relative to the spread. With the
// K formats it is closer at every step (ratio at most 0.88 measured); with q4_0 and q8_0 both
// quantize the same 32-blocks the same way but for rounding (llama.cpp's block scale is fp16),
// so the two distances are the same in distribution (up to 1.19 measured per step): there, within
// 1.25× per step.
class DecoderOrtNbitsInt8 : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
};

TEST_P(DecoderOrtNbitsInt8, NoFartherFromTheExactDecoderThanLlamaCpp) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const std::string package = testkit::decoder_package(variant, type, kOrtOpset, true, 4);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    constexpr int kSteps = 2;
    const Reference ref = llama_reference(gguf, kSteps);
    const std::vector<Step> plan = single_plan(ref, kSteps);
    TempDir tmp;
    const auto ort = run_in_ort(package, h, plan, tmp);
    const auto exact = testkit::run_decoder_plan(testkit::decoder_package(variant, type), h, plan);
    const double factor = type == "Q4_0" || type == "Q8_0" ? 1.25 : 1.0;
    ASSERT_EQ(ort.size(), plan.size());
    for (size_t s = 0; s < plan.size(); ++s) {
        const double ours = rms_gap(ort[s], exact[s], h.n_vocab),
                     llama = rms_gap(ref.logits[s], exact[s], h.n_vocab);
        EXPECT_LE(ours, factor * llama)
            << "step " << s << ": onnxruntime (int8 activations) " << ours << ", llama.cpp "
            << llama << " of the spread from the exact decoder";
    }
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderOrtNbitsInt8,
                         ::testing::Combine(::testing::Values("llama", "qwen2", "gemma2", "phi3"),
                                            ::testing::Values("Q4_0", "Q8_0", "Q2_K", "Q4_K_M",
                                                              "Q5_K_M", "Q6_K")),
                         testkit::DecoderParamName());

// transformers.js loads nbits packages (MatMulNBits, the gathered embedding) and generates
// greedily: Q4_0's gives llama.cpp's tokens; Q4_K_M's (with the block offsets; llama.cpp has a
// near tie at the 6th token, which verify shows) the executor's.
TEST(DecoderOrtNbitsModel, TransformersJsGeneratesGreedily) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    for (const char *type : {"Q4_0", "Q4_K_M"}) {
        SCOPED_TRACE(type);
        const std::string gguf = testkit::decoder_gguf("llama", type);
        expect_transformers_js_greedy(gguf,
                                      testkit::decoder_package("llama", type, kOrtOpset, true),
                                      std::string_view(type) == "Q4_K_M");
    }
}

// chromium, from GGUFTOOL_CHROMIUM or the PATH; "" when there is none.
std::string chromium() {
    if (const char *c = std::getenv("GGUFTOOL_CHROMIUM")) return c;
    const char *path = std::getenv("PATH");
    for (std::string_view rest = path ? path : ""; !rest.empty();) {
        const size_t colon = rest.find(':');
        const fs::path exe = fs::path(rest.substr(0, colon)) / "chromium";
        if (::access(exe.c_str(), X_OK) == 0) return exe.string();
        rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
    }
    return "";
}

// transformers.js' browser build (dist/transformers.min.js with the onnxruntime-web it bundles,
// whose wasm build has MatMulNBits but no GatherBlockQuantized) in headless chromium, everything
// served from localhost (tests/ort/decoder_browser.mjs): an F32 package and nbits packages (Q4_0;
// Q4_K_M, with the block offsets) load and generate greedily what greedy_want says.
TEST(DecoderBrowser, TransformersJsGeneratesGreedilyInChromium) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    const std::string browser = chromium();
    if (browser.empty())
        GTEST_SKIP() << "no chromium (GGUFTOOL_CHROMIUM or the PATH; setup.sh --test-deps installs "
                        "Debian's)";
    struct Case {
        const char *variant, *type;
        bool nbits, executor;
    };
    // Dense, and a mixture of experts (TopK, Loop, NonZero, ScatterND and MatMulNBits on gathered
    // expert operands in onnxruntime-web).
    const Case cases[] = {{"llama", "F32", false, false},
                          {"llama", "Q4_0", true, false},
                          {"llama", "Q4_K_M", true, true},
                          {"qwen3moe", "Q4_K_M", true, true}};
    std::vector<std::string> argv = {kNode, kBrowserDriver, browser, prompt_ids(),
                                     std::to_string(kNew)};
    for (const Case &c : cases)
        argv.push_back(testkit::decoder_package(c.variant, c.type, kOrtOpset, c.nbits));
    const RunResult r = testkit::run(argv);
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream lines(r.out);
    for (size_t i = 0; i < std::size(cases); ++i) {
        SCOPED_TRACE(std::string(cases[i].variant) + " " + cases[i].type);
        std::string line;
        ASSERT_TRUE(std::getline(lines, line)) << r.out;
        const std::vector<int64_t> want =
            greedy_want(testkit::decoder_gguf(cases[i].variant, cases[i].type), argv[5 + i],
                        cases[i].executor, kNew);
        std::vector<int64_t> got = nlohmann::json::parse(line).get<std::vector<int64_t>>();
        if (got.size() > want.size()) got.resize(want.size());
        EXPECT_EQ(got, want) << line;
    }
}

class DecoderOrtModel : public ::testing::TestWithParam<std::string> {};

// Batch 2, the second prompt 5 tokens shorter and padded on the left, prefill and one step:
// each row's logits are those of batch 1 (onnxruntime), and the executor's agree.
TEST_P(DecoderOrtModel, BatchWithLeftPaddingGivesEachRowItsOwnLogits) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    const std::string package = testkit::decoder_package(GetParam(), "F32", kOrtOpset);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    const int64_t n = int64_t(kPrompt.size()), pad = 5, V = h.n_vocab;
    const std::vector<int32_t> shorter(kPrompt.begin() + pad, kPrompt.end());
    const std::vector<Step> batch = testkit::left_padded_plan(kPrompt, pad, 3);
    TempDir t1, t2, t3;
    const auto a = run_in_ort(package, h, testkit::single_prompt_plan(kPrompt, {3}), t1);
    const auto b = run_in_ort(package, h, testkit::single_prompt_plan(shorter, {3}), t2);
    const auto both = run_in_ort(package, h, batch, t3);
    ASSERT_EQ(both.size(), 2u);
    const double bound = testkit::same_math_bound(package);
    EXPECT_LE(relative_gap(both[0].data(), a[0].data(), size_t(n * V)), bound);
    EXPECT_LE(relative_gap(both[0].data() + (n + pad) * V, b[0].data(), size_t((n - pad) * V)),
              bound);
    EXPECT_LE(relative_gap(both[1].data(), a[1].data(), size_t(V)), bound);
    EXPECT_LE(relative_gap(both[1].data() + V, b[1].data(), size_t(V)), bound);
    const auto ours = testkit::run_decoder_plan(package, h, batch);
    for (size_t s = 0; s < 2; ++s)
        EXPECT_LE(relative_gap(both[s].data(), ours[s].data(), ours[s].size()), bound) << s;
}

// transformers.js loads the package offline and its greedy generate gives llama.cpp's greedy
// tokens (compared up to and including the first end-of-sequence token).
TEST_P(DecoderOrtModel, TransformersJsGeneratesLlamaCppsTokens) {
    SKIP_WITHOUT_ORT();
    SKIP_WITHOUT_LLAMA();
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    const std::string package = testkit::decoder_package(GetParam(), "F32", kOrtOpset);
    expect_transformers_js_greedy(gguf, package);
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderOrtModel, ::testing::ValuesIn(testkit::tiny_decoder_names()),
                         testkit::DecoderParamName());

}  // namespace
}  // namespace gguftool::orttest
