// The decoder export (to-onnx --graph decoder) run by the executor against llama.cpp itself
// (libllama): every tiny architecture variant in F32 and quantized by llama.cpp's own quantizer,
// packed (opset 29) and lowered; batches with left padding; what must be refused; and that the
// tolerance rejects wrong exports.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "decoder_fixtures.hpp"
#include "gguf_rewrite.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/decoder_verify.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/runtime.hpp"
#include "process.hpp"
#include "tiny_decoder.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using runtime::Shape;
using runtime::Tensor;
using testkit::edit_key;
using testkit::rename_arch;
using testkit::rewrite;

// A prompt longer than the sliding windows of the variants that have one.
const std::vector<int32_t> kPrompt = {1, 17, 42, 300, 7, 99, 128, 5, 260, 33, 64, 200};

bool have_llama() {
    std::string why;
    return reference::load_llama(&why) != nullptr;
}

// As elsewhere in the suite, a missing llama.cpp is a failure, not a skip.
#define REQUIRE_LLAMA() ASSERT_TRUE(have_llama()) << "libllama is not available (npm ci)"

verify::DecoderReport verify_package(const std::string &gguf, const std::string &dir,
                                     int steps = 4) {
    verify::DecoderVerifyOptions o;
    o.ids = kPrompt;
    o.steps = steps;
    return verify::verify_decoder(gguf, dir, o);
}

std::string describe(const verify::DecoderReport &r) {
    std::string s = "tolerance " + r.tolerance.weights + ":";
    for (const verify::DecoderStep &st : r.steps)
        s += " [step " + std::to_string(st.index) + " rel " + std::to_string(st.relative) + " kl " +
             std::to_string(st.kl) + " top1 " + std::to_string(st.top1_agree) + "/" +
             std::to_string(st.positions) + (st.pass ? "" : " FAIL") + "]";
    return s;
}

double worst_relative(const verify::DecoderReport &r) {
    double w = 0;
    for (const verify::DecoderStep &s : r.steps) w = std::max(w, s.relative);
    return w;
}

class Decoder : public ::testing::TestWithParam<std::string> {};

TEST_P(Decoder, F32AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    const verify::DecoderReport r =
        verify_package(gguf, testkit::decoder_package(GetParam(), "F32"));
    EXPECT_TRUE(r.pass) << describe(r);
    ASSERT_EQ(r.steps.size(), 5u);
    EXPECT_EQ(r.steps[0].positions, int(kPrompt.size()));
    RecordProperty("max_relative", std::to_string(worst_relative(r)));
    std::printf("%s F32: %s\n", GetParam().c_str(), describe(r).c_str());
}

TEST_P(Decoder, LoweredF32AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const std::string gguf = testkit::decoder_gguf(GetParam(), "F32");
    const verify::DecoderReport r =
        verify_package(gguf, testkit::decoder_package(GetParam(), "F32", 21), 2);
    EXPECT_TRUE(r.pass) << describe(r);
}

// Batch 2, the second prompt shorter and padded on the left: each row's logits are those of the
// prompt alone (batch 1), prefill and one step through the cache.
TEST_P(Decoder, BatchWithLeftPaddingGivesEachRowItsOwnLogits) {
    REQUIRE_LLAMA();
    const std::string dir = testkit::decoder_package(GetParam(), "F32");
    const decoder::Hparams h =
        decoder::read_hparams(gguf::Model::open(testkit::decoder_gguf(GetParam(), "F32")));
    const int64_t n = int64_t(kPrompt.size()), pad = 5, V = h.n_vocab;
    const std::vector<int32_t> shorter(kPrompt.begin() + pad, kPrompt.end());
    // Each prompt alone, prefill then token 3; and both in one batch, the shorter padded.
    const auto a = testkit::run_decoder_plan(dir, h, testkit::single_prompt_plan(kPrompt, {3}));
    const auto b = testkit::run_decoder_plan(dir, h, testkit::single_prompt_plan(shorter, {3}));
    const auto c = testkit::run_decoder_plan(dir, h, testkit::left_padded_plan(kPrompt, pad, 3));
    const std::vector<float> &a0 = a[0], &a1 = a[1], &b0 = b[0], &b1 = b[1], &c0 = c[0], &c1 = c[1];

    const double bound = testkit::same_math_bound(dir);
    auto close = [bound](const float *x, const float *y, int64_t count) {
        double worst = 0, spread = 0;
        for (int64_t i = 0; i < count; ++i) {
            worst = std::max(worst, std::fabs(double(x[i]) - double(y[i])));
            spread = std::max(spread, std::fabs(double(y[i])));
        }
        return worst <= bound * std::max(1.0, spread);
    };
    // Row 0: every position; row 1: its real positions.
    EXPECT_TRUE(close(c0.data(), a0.data(), n * V));
    EXPECT_TRUE(close(c0.data() + (n + pad) * V, b0.data(), (n - pad) * V));
    EXPECT_TRUE(close(c1.data(), a1.data(), V));
    EXPECT_TRUE(close(c1.data() + V, b1.data(), V));
    for (float v : c0) ASSERT_TRUE(std::isfinite(v)) << "padding rows must stay finite";
}

INSTANTIATE_TEST_SUITE_P(Tiny, Decoder, ::testing::ValuesIn(testkit::tiny_decoder_names()),
                         testkit::DecoderParamName());

// Quantized by llama.cpp: the weights keep their bytes (DequantizePacked), llama.cpp quantizes its
// activations, so the tolerance of quantized weights applies.
class DecoderQuantized : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(DecoderQuantized, AgreesWithLlamaCpp) {
    REQUIRE_LLAMA();
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const verify::DecoderReport r = verify_package(gguf, testkit::decoder_package(variant, type));
    EXPECT_TRUE(r.pass) << describe(r);
    std::printf("%s %s: %s\n", variant.c_str(), type.c_str(), describe(r).c_str());
}

INSTANTIATE_TEST_SUITE_P(Tiny, DecoderQuantized,
                         ::testing::Combine(::testing::ValuesIn(testkit::tiny_decoder_names()),
                                            ::testing::Values("Q4_0", "Q8_0", "Q4_K_M", "Q6_K",
                                                              "IQ4_XS")),
                         testkit::DecoderParamName());

// gpt-oss as released: the experts MXFP4, the rest Q8_0 (llama.cpp's MXFP4_MOE file type).
INSTANTIATE_TEST_SUITE_P(Released, DecoderQuantized,
                         ::testing::Combine(::testing::Values("gpt-oss"),
                                            ::testing::Values("MXFP4_MOE")),
                         testkit::DecoderParamName());

// --weights nbits (MatMulNBits, GatherBlockQuantized) in the executor: within 2e-3 of the logits'
// spread from the exact (packed) export of the same file, and verify passes.
class DecoderNbits : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(DecoderNbits, AgreesWithTheExactExportAndLlamaCpp) {
    REQUIRE_LLAMA();
    const auto &[variant, type] = GetParam();
    const std::string gguf = testkit::decoder_gguf(variant, type);
    const std::string nbits = testkit::decoder_package(variant, type, 21, true);
    const verify::DecoderReport r = verify_package(gguf, nbits, 2);
    EXPECT_TRUE(r.pass) << describe(r);
    const std::string exact = testkit::decoder_package(variant, type);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf));
    auto logits = [&](const std::string &dir) {
        return testkit::run_decoder_plan(dir, h, testkit::single_prompt_plan(kPrompt, {}))[0];
    };
    const std::vector<float> a = logits(nbits), b = logits(exact);
    ASSERT_EQ(a.size(), b.size());
    const int64_t V = h.n_vocab;
    for (size_t row = 0; row * V < b.size(); ++row) {
        const auto [lo, hi] = std::minmax_element(b.begin() + row * V, b.begin() + (row + 1) * V);
        double worst = 0;
        for (int64_t i = 0; i < V; ++i)
            worst = std::max(worst, std::fabs(double(a[row * V + i]) - b[row * V + i]));
        EXPECT_LE(worst, 2e-3 * (*hi - *lo)) << "row " << row;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, DecoderNbits,
    ::testing::Combine(::testing::Values("llama", "qwen2", "gemma2", "gemma3", "phi3"),
                       ::testing::Values("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K_M",
                                         "Q4_K_M", "Q5_K_M", "Q6_K")),
    testkit::DecoderParamName());

// The other tiny models (tied head and biases, rope_freqs, YaRN, q/k norms, gemma's embedding
// scale, smollm3's unrotated layers, olmo2's norms, granite's multipliers, the mixtures of
// experts) in three formats: 4 bits
// exact, 4 bits with offsets (a tied head sharing the embedding's bytes and offsets), 8 bits
// block 16.
INSTANTIATE_TEST_SUITE_P(
    TinyOthers, DecoderNbits,
    ::testing::Combine(::testing::Values("llama-tied-bias", "llama3", "mistral3", "qwen3", "gemma",
                                         "smollm3", "olmo2", "granite", "mixtral", "qwen2moe",
                                         "qwen3moe", "gpt-oss"),
                       ::testing::Values("Q4_0", "Q4_K_M", "Q6_K")),
    testkit::DecoderParamName());

// ---------------------------------------------------------------------------------------------
// The architecture table is the one list: every row has a tiny model (and so every test above),
// and the man page and --help name exactly the table's rows.

TEST(ArchitectureTable, EveryRowHasATinyModel) {
    std::set<std::string> tiny;
    for (const std::string &name : testkit::tiny_decoder_names())
        tiny.insert(testkit::tiny_decoder(name).arch);
    for (std::string_view arch : decoder::architectures())
        EXPECT_TRUE(tiny.count(std::string(arch)))
            << arch << " has no variant in tests/support/tiny_decoder.cpp";
}

// The words of the .BR line after the line ending in `label` in man/gguftool-to-onnx.1.
std::vector<std::string> man_list(const std::string &label) {
    std::ifstream in(std::string(GGUFTOOL_SOURCE_DIR) + "/man/gguftool-to-onnx.1");
    std::string line, list;
    while (std::getline(in, line))
        if (line.ends_with(label) && std::getline(in, list)) break;
    EXPECT_TRUE(list.starts_with(".BR ")) << "no .BR line after \"" << label << "\"";
    // .BR a ", " b " and " c ,  — the words outside the quotes, in order.
    std::vector<std::string> listed;
    bool quoted = false;
    std::string word;
    for (char c : list.substr(std::min<size_t>(4, list.size())) + " ") {
        if (c == '\\') continue;  // roff's \- is a plain hyphen
        if (c == '"') quoted = !quoted;
        if (quoted || c == '"' || c == ',') continue;
        if (c == ' ') {
            if (!word.empty()) listed.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    return listed;
}

TEST(ArchitectureTable, TheManPageListsEveryRow) {
    std::vector<std::string> decoders, encoders;
    for (std::string_view arch : decoder::architectures()) decoders.emplace_back(arch);
    for (std::string_view arch : decoder::architectures(decoder::Graph::encoder))
        if (std::find(decoders.begin(), decoders.end(), arch) == decoders.end())
            encoders.emplace_back(arch);
    EXPECT_EQ(man_list(" Architectures:"), decoders);
    EXPECT_EQ(man_list("Encoder architectures:"), encoders);
}

TEST(ArchitectureTable, HelpListsEveryRow) {
    const testkit::ProcessResult r = testkit::run({GGUFTOOL_EXE, "to-onnx", "--help"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string flat;  // CLI11 wraps the description: compare with the whitespace folded
    for (char c : r.out)
        if (!std::isspace(static_cast<unsigned char>(c)) || (!flat.empty() && flat.back() != ' '))
            flat += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
    const std::vector<std::string_view> archs = decoder::architectures();
    EXPECT_NE(flat.find(fmt::format("({})", fmt::join(archs, ", "))), std::string::npos) << r.out;
    std::vector<std::string_view> encoders;
    for (std::string_view arch : decoder::architectures(decoder::Graph::encoder))
        if (std::find(archs.begin(), archs.end(), arch) == archs.end()) encoders.push_back(arch);
    EXPECT_NE(flat.find(fmt::format("(those and {})", fmt::join(encoders, ", "))),
              std::string::npos)
        << r.out;
}

// ---------------------------------------------------------------------------------------------
// The tolerance rejects wrong exports.

gguf::MetaValue u32(uint32_t v) {
    return gguf::MetaValue::u32(v);
}

class DecoderRejects : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(have_llama()) << "libllama is not available (npm ci)";
        dir_ = fs::temp_directory_path() / ("gguftool-decoder-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // The F32 package of `exported` (a fresh one per call) verified against llama.cpp running
    // `reference`, prefill and one step.
    verify::DecoderReport verify_export_of(const std::string &exported,
                                           const std::string &reference) {
        const fs::path pkg = dir_ / ("pkg" + std::to_string(packages_++));
        decoder::export_decoder(gguf::Model::open(exported), pkg.string(), {});
        const verify::DecoderReport r = verify_package(reference, pkg.string(), 1);
        std::printf("%s against %s: %s\n", fs::path(exported).filename().c_str(),
                    fs::path(reference).filename().c_str(), describe(r).c_str());
        return r;
    }
    fs::path dir_;
    int packages_ = 0;
};

TEST_F(DecoderRejects, AnotherModelsExport) {
    // Same shapes, other weights: runs, and disagrees.
    const verify::DecoderReport r = verify_package(testkit::decoder_gguf("llama", "F32"),
                                                   testkit::decoder_package("llama3", "F32"), 1);
    EXPECT_FALSE(r.pass) << describe(r);
}

TEST_F(DecoderRejects, OneFlippedScaleByte) {
    const std::string gguf = testkit::decoder_gguf("llama", "Q8_0");
    const std::string bad = (dir_ / "flipped.gguf").string();
    rewrite(
        gguf, bad, [](gguf::Header &, std::vector<gguf::TensorData> &data, const gguf::File &f) {
            for (size_t i = 0; i < f.tensors().size(); ++i) {
                const gguf::TensorInfo &t = f.tensors()[i];
                if (t.name != "blk.0.attn_q.weight") continue;
                ASSERT_EQ(t.type, GgmlType::q8_0);
                auto bytes = std::make_shared<std::vector<uint8_t>>(t.data.begin(), t.data.end());
                (*bytes)[1] ^= 0x40;  // block 0's scale (f16 d): its exponent's top bit
                data[i] = gguf::TensorData::produced(bytes->size(), [bytes](gguf::ByteSink &s) {
                    s.write(bytes->data(), bytes->size());
                });
            }
        });
    EXPECT_FALSE(verify_export_of(bad, gguf).pass);
}

TEST_F(DecoderRejects, TheRopeTypeSwapped) {
    // The llama model's keys under arch qwen2 (same tensors, NEOX rope instead of NORM).
    const std::string gguf = testkit::decoder_gguf("llama", "F32");
    const std::string swapped = (dir_ / "neox.gguf").string();
    rename_arch(gguf, swapped, "llama", "qwen2");
    EXPECT_FALSE(verify_export_of(swapped, gguf).pass);
}

// Each quirk of the three architectures added as rows shows in the tiny model's logits: an export
// that ignores it is rejected.
TEST_F(DecoderRejects, SmolLM3RotatingEveryLayer) {
    // Under arch llama every layer rotates, layer 3 included.
    const std::string gguf = testkit::decoder_gguf("smollm3", "F32");
    const std::string as_llama = (dir_ / "llama.gguf").string();
    rename_arch(gguf, as_llama, "smollm3", "llama");
    EXPECT_FALSE(verify_export_of(as_llama, gguf).pass);
}

TEST_F(DecoderRejects, Olmo2WithoutItsSlidingWindow) {
    // Layer 0 then attends to every key and rotates with YaRN, as the global layer does.
    const std::string gguf = testkit::decoder_gguf("olmo2", "F32");
    const std::string global = (dir_ / "global.gguf").string();
    edit_key(gguf, global, "olmo2.attention.sliding_window");
    EXPECT_FALSE(verify_export_of(global, gguf).pass);
}

TEST_F(DecoderRejects, GraniteWithoutEachMultiplier) {
    const std::string gguf = testkit::decoder_gguf("granite", "F32");
    for (const char *key :
         {"granite.embedding_scale", "granite.attention.scale", "granite.residual_scale"}) {
        SCOPED_TRACE(key);
        const std::string without = (dir_ / (std::string(key) + ".gguf")).string();
        edit_key(gguf, without, key);
        EXPECT_FALSE(verify_export_of(without, gguf).pass);
    }
}

// granite.rope.scaling.finetuned = false switches RoPE off in every layer, in llama.cpp and here.
TEST_F(DecoderRejects, GraniteWithRopeSwitchedOffAgreesAndDiffers) {
    const std::string gguf = testkit::decoder_gguf("granite", "F32");
    const std::string off = (dir_ / "off.gguf").string();
    edit_key(gguf, off, "granite.rope.scaling.finetuned", gguf::MetaValue::boolean(false));
    EXPECT_TRUE(verify_export_of(off, off).pass);
    EXPECT_FALSE(verify_export_of(off, gguf).pass);
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 1 naming what is wrong, nothing written.

class DecoderBadInput : public DecoderRejects {
protected:
    void expect_refused(const std::string &gguf, const std::string &needle) {
        const fs::path out = dir_ / "out";
        const testkit::ProcessResult r =
            testkit::run({GGUFTOOL_EXE, "to-onnx", gguf, out.string(), "--graph", "decoder"});
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
        for (const auto &e : fs::directory_iterator(dir_))
            EXPECT_EQ(e.path().filename().string().find(".out"), std::string::npos)
                << "left behind: " << e.path();
    }
};

TEST_F(DecoderBadInput, AMissingTensor) {
    const std::string bad = (dir_ / "missing.gguf").string();
    testkit::drop_tensor(testkit::decoder_gguf("llama", "F32"), bad, "blk.1.attn_k.weight");
    expect_refused(bad, "blk.1.attn_k.weight: missing");
}

TEST_F(DecoderBadInput, AWrongShape) {
    const std::string bad = (dir_ / "shape.gguf").string();
    rewrite(testkit::decoder_gguf("qwen2", "F32"), bad,
            [](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
                for (gguf::TensorHeader &t : h.tensors)
                    if (t.name == "blk.0.ffn_down.weight") std::swap(t.dims[0], t.dims[1]);
            });
    expect_refused(bad, "blk.0.ffn_down.weight: shape");
}

TEST_F(DecoderBadInput, AHeadCountThatDoesNotDivide) {
    const std::string bad = (dir_ / "heads.gguf").string();
    rewrite(testkit::decoder_gguf("llama", "F32"), bad,
            [](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
                for (gguf::MetadataItem &m : h.metadata)
                    if (m.key == "llama.attention.head_count_kv") m.value = u32(3);
            });
    expect_refused(bad, "llama.attention.head_count_kv");
}

TEST_F(DecoderBadInput, AnUnknownRopeScalingType) {
    const std::string bad = (dir_ / "rope.gguf").string();
    rewrite(testkit::decoder_gguf("llama", "F32"), bad,
            [](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
                h.metadata.push_back({"llama.rope.scaling.type", gguf::MetaValue::str("dynamic")});
            });
    expect_refused(bad, "rope.scaling.type");
}

// Mixtures of experts: the counts, the gating function and the expert tensors' shapes.
TEST_F(DecoderBadInput, AnExpertCountOfZero) {
    const std::string bad = (dir_ / "experts0.gguf").string();
    edit_key(testkit::decoder_gguf("qwen3moe", "F32"), bad, "qwen3moe.expert_count", u32(0));
    expect_refused(bad, "qwen3moe.expert_count");
}

TEST_F(DecoderBadInput, MoreExpertsUsedThanExist) {
    const std::string bad = (dir_ / "used.gguf").string();
    edit_key(testkit::decoder_gguf("qwen2moe", "F32"), bad, "qwen2moe.expert_used_count", u32(9));
    expect_refused(bad, "qwen2moe.expert_used_count");
}

TEST_F(DecoderBadInput, AnotherGatingFunction) {
    const std::string bad = (dir_ / "gating.gguf").string();
    edit_key(testkit::decoder_gguf("qwen3moe", "F32"), bad, "qwen3moe.expert_gating_func",
             u32(2));  // sigmoid
    expect_refused(bad, "qwen3moe.expert_gating_func");
}

TEST_F(DecoderBadInput, AnExpertTensorOfTheWrongShape) {
    const std::string bad = (dir_ / "expert_shape.gguf").string();
    rewrite(testkit::decoder_gguf("gpt-oss", "F32"), bad,
            [](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
                for (gguf::TensorHeader &t : h.tensors)
                    if (t.name == "blk.1.ffn_gate_exps.weight") std::swap(t.dims[1], t.dims[2]);
            });
    expect_refused(bad, "blk.1.ffn_gate_exps.weight: shape");
}

TEST_F(DecoderBadInput, AnArchitectureNotExported) {
    const std::string bad = (dir_ / "arch.gguf").string();
    rewrite(testkit::decoder_gguf("llama", "F32"), bad,
            [](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
                for (gguf::MetadataItem &m : h.metadata)
                    if (m.key == "general.architecture") m.value = gguf::MetaValue::str("bert");
            });
    expect_refused(bad, "architecture bert");
}

}  // namespace
}  // namespace gguftool
