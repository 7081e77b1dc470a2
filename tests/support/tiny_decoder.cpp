#include "tiny_decoder.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "floats.hpp"
#include "gguftool/gguf_writer.hpp"
#include "random.hpp"
#include "sample_model.hpp"

namespace gguftool::testkit {

namespace {

using gguf::MetaValue;

constexpr uint32_t kEmbd = 256;
constexpr uint32_t kHeads = 4;
constexpr uint32_t kHeadsKv = 2;
constexpr uint32_t kFf = 512;
constexpr uint32_t kVocab = 384;

// Standard deviations of the random weights. Q and K a little larger than the other projections
// so that attention is far from uniform (a wrong mask or rotation shows in the logits).
constexpr double kStdQk = 0.08;
constexpr double kStdProj = 0.05;
constexpr double kStdOutput = 0.1;
constexpr double kStdBias = 0.1;
constexpr double kStdNorm = 0.1;  // norm weights: 1 + kStdNorm * noise
// Routers: logits spread over several units, so that no two experts' scores come within the
// rounding of quantized activations of each other (llama.cpp and the export choose alike).
constexpr double kStdRouter = 0.5;

// Per-pair rope factors: none, llama3's rope_freqs, or phi3's rope_factors_long/short.
enum class RopeFactors { none, freqs, long_short };

// One variant. Zero (or nullptr, or nullopt) means "key or tensor not written".
struct Variant {
    const char *name;
    const char *arch;
    const char *features;
    uint32_t layers = 2;
    uint32_t head_dim = 64;
    bool write_head_dim = false;  // attention.key_length and value_length
    uint32_t n_rot = 0;           // rope.dimension_count; 0: head_dim
    uint32_t context_length = 256;
    float eps = 1e-6f;
    double embd_std = 1.0;
    bool tied = false;
    bool output_bias = false;
    bool qkv_bias = false;
    bool attn_out_bias = false;
    bool ffn_bias = false;
    bool fused_qkv = false;
    bool fused_up = false;  // ffn_up holds gate and up rows, no ffn_gate
    bool qk_norm = false;
    bool qk_norm_whole = false;  // q/k norms over the whole projection (olmo2), not each head
    bool pre_norms = true;       // attn_norm and ffn_norm
    bool post_norms = false;     // post_attention_norm and post_ffw_norm
    float freq_base = 10000.0f;
    float freq_base_swa = 0;
    const char *scaling_type = nullptr;
    float scaling_factor = 0;
    uint32_t orig_ctx = 0;
    float rope_attn_factor = 0;
    float yarn_beta_fast = 0;
    float yarn_beta_slow = 0;
    float yarn_log_mul = 0;
    RopeFactors rope_factors = RopeFactors::none;
    float temperature_scale = 0;
    std::optional<uint32_t> sliding_window = std::nullopt;
    uint32_t swa_pattern = 0;
    bool swa_pattern_array = false;  // the pattern as one bool per layer (il % period < period - 1)
    // granite's multipliers (0: key not written)
    float embedding_scale = 0;
    float attention_scale = 0;
    float residual_scale = 0;
    float logit_scale = 0;
    // Mixture of experts (0 experts: a dense FFN)
    uint32_t experts = 0, experts_used = 0;
    uint32_t expert_ff = 0;      // expert_feed_forward_length (0: not written; the experts are kFf)
    uint32_t shared_ff = 0;      // qwen2moe's shared expert (expert_shared_feed_forward_length)
    bool expert_biases = false;  // router and expert biases (gpt-oss)
    bool attn_sinks = false;
    const char *ffn_norm = "ffn_norm.weight";
    // The weights' seed. The mixtures of experts take 2: with 1, a token's second and third router
    // scores come within the rounding of llama.cpp's quantized activations of each other in
    // qwen3moe Q4_0 and gpt-oss Q8_0 and IQ4_XS, and llama.cpp picks the other expert there
    // (verify then sees that token's logits off by 8% of the spread): a valid choice either way,
    // which no tolerance on the logits can tell from a wrong export.
    uint32_t seed = 1;
    float attn_softcap = 0;
    float final_softcap = 0;
};

// Tied heads: the logits are the embeddings' dot products with the final hidden state, in which
// the input token's own embedding would dominate (its logit the largest at every position) if
// the embeddings were as large as the layers' outputs; at 0.1 the layers decide the ranking and
// the logits still spread over about 10.
constexpr double kTiedEmbdStd = 0.1;
// Gemma-family models scale the input embeddings by sqrt(n_embd) (= 16): their embeddings are
// that much smaller, so the residual stream and the tied head stay in range. (With gemma's and
// gemma2's tied heads the input token's own logit is still the largest at every position: the
// layers move the other logits.)
constexpr double kGemmaEmbdStd = 1.0 / 16;
// Phi3's LongRoPE: context 8192 over an original 4096, so llama.cpp picks the short factors for
// any context up to 4096 and multiplies cos/sin by sqrt(1 + ln(8192/4096) / ln(4096)).
const float kPhi3AttnFactor = float(std::sqrt(1.0 + std::log(2.0) / std::log(4096.0)));

const Variant kVariants[] = {
    {.name = "llama", .arch = "llama", .features = "untied head, norm rope", .eps = 1e-5f},
    {.name = "llama-tied-bias",
     .arch = "llama",
     .features = "tied head, q/k/v/output and ffn biases, linear rope scaling x2",
     .eps = 1e-5f,
     .embd_std = kTiedEmbdStd,
     .tied = true,
     .qkv_bias = true,
     .attn_out_bias = true,
     .ffn_bias = true,
     .scaling_type = "linear",
     .scaling_factor = 2.0f},
    {.name = "llama3",
     .arch = "llama",
     .features = "untied head, rope_freqs (random factors in [1, 8]), freq_base 5e5",
     .eps = 1e-5f,
     .freq_base = 500000.0f,
     .rope_factors = RopeFactors::freqs},
    // YaRN over an original context of 8 (so the attention temperature, floor(p / 8), changes
    // at position 8) with betas that put the ramp at pairs 5..17 of 32.
    {.name = "mistral3",
     .arch = "mistral3",
     .features = "yarn x4 (orig ctx 8, beta 0.1/0.001, log mul 0.5), attention temperature 0.5",
     .eps = 1e-5f,
     .freq_base = 1000000.0f,
     .scaling_type = "yarn",
     .scaling_factor = 4.0f,
     .orig_ctx = 8,
     .yarn_beta_fast = 0.1f,
     .yarn_beta_slow = 0.001f,
     .yarn_log_mul = 0.5f,
     .temperature_scale = 0.5f},
    {.name = "qwen2",
     .arch = "qwen2",
     .features = "q/k/v biases, output bias, tied head, neox rope",
     .embd_std = kTiedEmbdStd,
     .tied = true,
     .output_bias = true,
     .qkv_bias = true,
     .freq_base = 1000000.0f},
    {.name = "qwen3",
     .arch = "qwen3",
     .features = "q/k norms, head size 128 (H*D = 512 != n_embd), untied, neox rope",
     .head_dim = 128,
     .write_head_dim = true,
     .qk_norm = true,
     .freq_base = 1000000.0f},
    {.name = "gemma",
     .arch = "gemma",
     .features = "tied head, embeddings x sqrt(n_embd), gelu, neox rope",
     .write_head_dim = true,
     .embd_std = kGemmaEmbdStd,
     .tied = true},
    // Layer 0 local (window 4), layer 1 global (the default pattern 2).
    {.name = "gemma2",
     .arch = "gemma2",
     .features = "post norms, attention soft-cap 2, final soft-cap 3, sliding window 4 "
                 "(layer 0 local, freq_base_swa 1000), tied head",
     .write_head_dim = true,
     .embd_std = kGemmaEmbdStd,
     .tied = true,
     .post_norms = true,
     .freq_base_swa = 1000.0f,
     .sliding_window = 4,
     .attn_softcap = 2.0f,
     .final_softcap = 3.0f},
    // Pattern 3: layers 0 and 1 local (freq_base_swa, no scaling), layer 2 global (freq_base
    // 1e6, linear scaling x8).
    {.name = "gemma3",
     .arch = "gemma3",
     .features = "q/k norms, post norms, sliding window 4 pattern 3 (layers 0-1 local), "
                 "freq_base 1e6 + linear x8 global, freq_base_swa 1e4 local, final soft-cap 4, "
                 "untied",
     .layers = 3,
     .write_head_dim = true,
     .embd_std = kGemmaEmbdStd,
     .qk_norm = true,
     .post_norms = true,
     .freq_base = 1000000.0f,
     .freq_base_swa = 10000.0f,
     .scaling_type = "linear",
     .scaling_factor = 8.0f,
     .sliding_window = 4,
     .swa_pattern = 3,
     .final_softcap = 4.0f},
    {.name = "phi3",
     .arch = "phi3",
     .features = "fused qkv, fused gate|up, partial rotary 32 of 64, rope_factors_long/short "
                 "(orig ctx 4096 of 8192: short used), rope attn_factor, untied",
     .n_rot = 32,
     .context_length = 8192,
     .eps = 1e-5f,
     .fused_qkv = true,
     .fused_up = true,
     .orig_ctx = 4096,
     .rope_attn_factor = kPhi3AttnFactor,
     .rope_factors = RopeFactors::long_short,
     .sliding_window = 0},
    // Layers 0-2 rotate, layer 3 does not ((il + 1) % 4 == 0).
    {.name = "smollm3",
     .arch = "smollm3",
     .features = "no RoPE on every 4th layer (4 layers: layer 3 unrotated), tied head, norm rope",
     .layers = 4,
     .embd_std = kTiedEmbdStd,
     .tied = true,
     .freq_base = 2000000.0f},
    // OLMo 3's layout (arch olmo2 with a sliding window): no pre-norms, post norms, q/k norms over
    // the whole projection, YaRN x4 over an original context of 8 on the global layer 1, the local
    // layer 0 (window 4, pattern as a bool array) rotating without scaling.
    {.name = "olmo2",
     .arch = "olmo2",
     .features = "no pre-norms, post norms, q/k norms over the whole projection, untied, neox "
                 "rope; sliding window 4 on layer 0 (bool pattern), YaRN x4 on layer 1",
     .qk_norm = true,
     .qk_norm_whole = true,
     .pre_norms = false,
     .post_norms = true,
     .freq_base = 500000.0f,
     .scaling_type = "yarn",
     .scaling_factor = 4.0f,
     .orig_ctx = 8,
     .sliding_window = 4,
     .swa_pattern = 2,
     .swa_pattern_array = true},
    // Embeddings 1/12 as large, so that the scaled ones are as large as the other variants'.
    {.name = "granite",
     .arch = "granite",
     .features = "embedding x12, attention scale 1/4, residual x0.22, logits / 2, untied, "
                 "norm rope",
     .eps = 1e-5f,
     .embd_std = 1.0 / 12,
     .embedding_scale = 12.0f,
     .attention_scale = 0.25f,
     .residual_scale = 0.22f,
     .logit_scale = 2.0f},
    // Granite's multipliers with 8 experts of 512, 2 used.
    {.name = "granitemoe",
     .arch = "granitemoe",
     .features = "granite's four multipliers, 8 experts of 512, 2 used (renormalised), untied",
     .eps = 1e-5f,
     .embd_std = 1.0 / 12,
     .embedding_scale = 12.0f,
     .attention_scale = 0.25f,
     .residual_scale = 0.22f,
     .logit_scale = 2.0f,
     .experts = 8,
     .experts_used = 2,
     .seed = 2},
    // Mixtral's layout: arch llama with experts as wide as the dense FFN.
    {.name = "mixtral",
     .arch = "llama",
     .features = "8 experts, 2 used (softmax, top 2, renormalised), untied, norm rope",
     .eps = 1e-5f,
     .experts = 8,
     .experts_used = 2,
     .seed = 2},
    {.name = "qwen2moe",
     .arch = "qwen2moe",
     .features = "8 experts of 256, 2 used (not renormalised), shared expert of 512 with its "
                 "sigmoid gate, q/k/v biases, untied, neox rope",
     .qkv_bias = true,
     .freq_base = 1000000.0f,
     .experts = 8,
     .experts_used = 2,
     .expert_ff = 256,
     .shared_ff = 512,
     .seed = 2},
    {.name = "qwen3moe",
     .arch = "qwen3moe",
     .features = "8 experts of 256, 2 used (renormalised), q/k norms, untied, neox rope",
     .write_head_dim = true,
     .qk_norm = true,
     .freq_base = 1000000.0f,
     .experts = 8,
     .experts_used = 2,
     .expert_ff = 256,
     .seed = 2},
    // Layer 0 local (window 4, the default pattern 2), layer 1 global; YaRN x4 over an original
    // context of 8.
    {.name = "gpt-oss",
     .arch = "gpt-oss",
     .features = "8 experts of 256, 2 used (top 2 logits, softmax), clamped SwiGLU, attention "
                 "sinks, biases everywhere, sliding window 4 on layer 0, YaRN x4, untied",
     .write_head_dim = true,
     .eps = 1e-5f,
     .qkv_bias = true,
     .attn_out_bias = true,
     .freq_base = 150000.0f,
     .scaling_type = "yarn",
     .scaling_factor = 4.0f,
     .orig_ctx = 8,
     .sliding_window = 4,
     .experts = 8,
     .experts_used = 2,
     .expert_ff = 256,
     .expert_biases = true,
     .attn_sinks = true,
     .ffn_norm = "post_attention_norm.weight",
     .seed = 2},
};

const Variant &find_variant(std::string_view name) {
    for (const Variant &v : kVariants)
        if (name == v.name) return v;
    throw std::invalid_argument(fmt::format("no tiny decoder variant named '{}'", name));
}

// sample_model's SentencePiece layout: <unk>, <s>, </s>, the 256 byte tokens, pieces, and last
// the control token <|endoftext|>, which llama.cpp's vocabulary loader looks up (and throws
// without) when general.name contains "phi3", as Phi-3's vocabulary has it.
testkit::Vocab make_vocab() {
    testkit::Vocab v = testkit::spm_base_vocab();
    const std::string space = "\xE2\x96\x81";  // "▁"
    std::vector<std::string> pieces = {space};
    for (char c = 'a'; c <= 'z'; ++c) pieces.push_back(space + c);
    for (char c = 'a'; c <= 'z'; ++c) pieces.push_back(std::string(1, c));
    for (char c = 'a'; c <= 'z'; ++c)
        for (char d = 'a'; d <= 'z'; ++d) pieces.push_back(space + c + d);
    float score = -1.0f;
    for (const std::string &p : pieces) {
        if (v.tokens.size() == kVocab - 1) break;
        v.add(p, score, 1);
        score -= 1.0f;
    }
    v.add("<|endoftext|>", 0.0f, 3);
    return v;
}

std::vector<float> concat(std::vector<float> a, const std::vector<float> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

void add_metadata(gguf::Writer &w, const Variant &v, uint32_t n_rot) {
    const std::string a = v.arch;
    const auto key = [&](const char *k) { return a + "." + k; };
    w.add("general.architecture", MetaValue::str(a));
    w.add("general.name", MetaValue::str(fmt::format("gguftool tiny {} (random weights)", v.name)));
    w.add("general.file_type", MetaValue::u32(0));  // LLAMA_FTYPE_ALL_F32
    w.add(key("vocab_size"), MetaValue::u32(kVocab));
    w.add(key("context_length"), MetaValue::u32(v.context_length));
    w.add(key("embedding_length"), MetaValue::u32(kEmbd));
    w.add(key("block_count"), MetaValue::u32(v.layers));
    w.add(key("feed_forward_length"), MetaValue::u32(kFf));
    w.add(key("attention.head_count"), MetaValue::u32(kHeads));
    w.add(key("attention.head_count_kv"), MetaValue::u32(kHeadsKv));
    if (v.write_head_dim) {
        w.add(key("attention.key_length"), MetaValue::u32(v.head_dim));
        w.add(key("attention.value_length"), MetaValue::u32(v.head_dim));
    }
    w.add(key("attention.layer_norm_rms_epsilon"), MetaValue::f32(v.eps));
    w.add(key("rope.dimension_count"), MetaValue::u32(n_rot));
    w.add(key("rope.freq_base"), MetaValue::f32(v.freq_base));
    if (v.freq_base_swa) w.add(key("rope.freq_base_swa"), MetaValue::f32(v.freq_base_swa));
    if (v.scaling_type) w.add(key("rope.scaling.type"), MetaValue::str(v.scaling_type));
    if (v.scaling_factor) w.add(key("rope.scaling.factor"), MetaValue::f32(v.scaling_factor));
    if (v.orig_ctx) w.add(key("rope.scaling.original_context_length"), MetaValue::u32(v.orig_ctx));
    if (v.rope_attn_factor)
        w.add(key("rope.scaling.attn_factor"), MetaValue::f32(v.rope_attn_factor));
    if (v.yarn_beta_fast)
        w.add(key("rope.scaling.yarn_beta_fast"), MetaValue::f32(v.yarn_beta_fast));
    if (v.yarn_beta_slow)
        w.add(key("rope.scaling.yarn_beta_slow"), MetaValue::f32(v.yarn_beta_slow));
    if (v.yarn_log_mul)
        w.add(key("rope.scaling.yarn_log_multiplier"), MetaValue::f32(v.yarn_log_mul));
    if (v.temperature_scale)
        w.add(key("attention.temperature_scale"), MetaValue::f32(v.temperature_scale));
    if (v.sliding_window) w.add(key("attention.sliding_window"), MetaValue::u32(*v.sliding_window));
    if (v.swa_pattern && v.swa_pattern_array) {
        std::vector<MetaValue> local;
        for (uint32_t il = 0; il < v.layers; ++il)
            local.push_back(MetaValue::boolean(il % v.swa_pattern < v.swa_pattern - 1));
        w.add(key("attention.sliding_window_pattern"),
              MetaValue::array(gguf::ValueType::bool_, std::move(local)));
    } else if (v.swa_pattern) {
        w.add(key("attention.sliding_window_pattern"), MetaValue::u32(v.swa_pattern));
    }
    if (v.embedding_scale) w.add(key("embedding_scale"), MetaValue::f32(v.embedding_scale));
    if (v.attention_scale) w.add(key("attention.scale"), MetaValue::f32(v.attention_scale));
    if (v.residual_scale) w.add(key("residual_scale"), MetaValue::f32(v.residual_scale));
    if (v.logit_scale) w.add(key("logit_scale"), MetaValue::f32(v.logit_scale));
    if (v.experts) {
        w.add(key("expert_count"), MetaValue::u32(v.experts));
        w.add(key("expert_used_count"), MetaValue::u32(v.experts_used));
    }
    if (v.expert_ff) w.add(key("expert_feed_forward_length"), MetaValue::u32(v.expert_ff));
    if (v.shared_ff) w.add(key("expert_shared_feed_forward_length"), MetaValue::u32(v.shared_ff));
    if (v.attn_softcap) w.add(key("attn_logit_softcapping"), MetaValue::f32(v.attn_softcap));
    if (v.final_softcap) w.add(key("final_logit_softcapping"), MetaValue::f32(v.final_softcap));

    testkit::add_spm_metadata(w, make_vocab());
}

// A layer's experts: the router, the stacked expert matrices (ne = {cols, rows, experts}) with
// their biases, and the shared expert.
template <class Add>
void add_experts(const Add &add, Random &rng, const Variant &v, const std::string &b) {
    const uint64_t X = v.experts, F = v.expert_ff ? v.expert_ff : kFf;
    add(b + "ffn_gate_inp.weight", {kEmbd, X}, rng.normal(kEmbd * X, 0.0, kStdRouter));
    if (v.expert_biases) add(b + "ffn_gate_inp.bias", {X}, rng.normal(X, 0.0, kStdBias));
    add(b + "ffn_gate_exps.weight", {kEmbd, F, X}, rng.normal(kEmbd * F * X, 0.0, kStdProj));
    add(b + "ffn_up_exps.weight", {kEmbd, F, X}, rng.normal(kEmbd * F * X, 0.0, kStdProj));
    add(b + "ffn_down_exps.weight", {F, kEmbd, X}, rng.normal(F * kEmbd * X, 0.0, kStdProj));
    if (v.expert_biases) {
        add(b + "ffn_gate_exps.bias", {F, X}, rng.normal(F * X, 0.0, kStdBias));
        add(b + "ffn_up_exps.bias", {F, X}, rng.normal(F * X, 0.0, kStdBias));
        add(b + "ffn_down_exps.bias", {kEmbd, X}, rng.normal(kEmbd * X, 0.0, kStdBias));
    }
    if (v.shared_ff) {
        const uint64_t S = v.shared_ff;
        add(b + "ffn_gate_inp_shexp.weight", {kEmbd}, rng.normal(kEmbd, 0.0, kStdRouter));
        add(b + "ffn_gate_shexp.weight", {kEmbd, S}, rng.normal(kEmbd * S, 0.0, kStdProj));
        add(b + "ffn_up_shexp.weight", {kEmbd, S}, rng.normal(kEmbd * S, 0.0, kStdProj));
        add(b + "ffn_down_shexp.weight", {S, kEmbd}, rng.normal(S * kEmbd, 0.0, kStdProj));
    }
}

void add_tensors(gguf::Writer &w, const Variant &v, uint32_t n_rot, uint32_t seed) {
    Random rng(seed);
    const auto add = [&](const std::string &name, std::vector<uint64_t> dims,
                         const std::vector<float> &values) {
        w.add_tensor(name, GgmlType::f32, std::move(dims), f32_bytes(values));
    };
    // A matrix of `rows` outputs over `cols` inputs: ne = {cols, rows}.
    const auto matrix = [&](uint64_t cols, uint64_t rows, double std) {
        return rng.normal(cols * rows, 0.0, std);
    };
    const auto norm = [&](uint64_t n) { return rng.normal(n, 1.0, kStdNorm); };
    const auto bias = [&](uint64_t n) { return rng.normal(n, 0.0, kStdBias); };
    const auto factors = [&](double lo, double hi) {
        std::vector<float> f(n_rot / 2);
        for (float &x : f) x = float(rng.uniform(lo, hi));
        return f;
    };

    const uint64_t q_rows = uint64_t(kHeads) * v.head_dim;
    const uint64_t kv_rows = uint64_t(kHeadsKv) * v.head_dim;

    add("token_embd.weight", {kEmbd, kVocab}, matrix(kEmbd, kVocab, v.embd_std));
    if (v.rope_factors == RopeFactors::freqs) add("rope_freqs.weight", {n_rot / 2}, factors(1, 8));
    if (v.rope_factors == RopeFactors::long_short) {
        add("rope_factors_long.weight", {n_rot / 2}, factors(1, 16));
        add("rope_factors_short.weight", {n_rot / 2}, factors(1, 4));
    }
    add("output_norm.weight", {kEmbd}, norm(kEmbd));
    if (!v.tied) add("output.weight", {kEmbd, kVocab}, matrix(kEmbd, kVocab, kStdOutput));
    if (v.output_bias) add("output.bias", {kVocab}, bias(kVocab));

    for (uint32_t l = 0; l < v.layers; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        if (v.pre_norms) add(b + "attn_norm.weight", {kEmbd}, norm(kEmbd));
        if (v.fused_qkv) {
            auto qkv = matrix(kEmbd, q_rows, kStdQk);
            qkv = concat(std::move(qkv), matrix(kEmbd, kv_rows, kStdQk));
            qkv = concat(std::move(qkv), matrix(kEmbd, kv_rows, kStdProj));
            add(b + "attn_qkv.weight", {kEmbd, q_rows + 2 * kv_rows}, qkv);
        } else {
            add(b + "attn_q.weight", {kEmbd, q_rows}, matrix(kEmbd, q_rows, kStdQk));
            add(b + "attn_k.weight", {kEmbd, kv_rows}, matrix(kEmbd, kv_rows, kStdQk));
            add(b + "attn_v.weight", {kEmbd, kv_rows}, matrix(kEmbd, kv_rows, kStdProj));
        }
        if (v.qkv_bias) {
            add(b + "attn_q.bias", {q_rows}, bias(q_rows));
            add(b + "attn_k.bias", {kv_rows}, bias(kv_rows));
            add(b + "attn_v.bias", {kv_rows}, bias(kv_rows));
        }
        if (v.qk_norm) {
            const uint64_t qn = v.qk_norm_whole ? q_rows : v.head_dim;
            const uint64_t kn = v.qk_norm_whole ? kv_rows : v.head_dim;
            add(b + "attn_q_norm.weight", {qn}, norm(qn));
            add(b + "attn_k_norm.weight", {kn}, norm(kn));
        }
        add(b + "attn_output.weight", {q_rows, kEmbd}, matrix(q_rows, kEmbd, kStdProj));
        if (v.attn_out_bias) add(b + "attn_output.bias", {kEmbd}, bias(kEmbd));
        if (v.post_norms) add(b + "post_attention_norm.weight", {kEmbd}, norm(kEmbd));

        if (v.attn_sinks) add(b + "attn_sinks.weight", {kHeads}, rng.normal(kHeads, 0.0, 1.0));
        if (v.pre_norms) add(b + v.ffn_norm, {kEmbd}, norm(kEmbd));
        if (v.experts) {
            add_experts(add, rng, v, b);
        } else if (v.fused_up) {
            // Rows [gate | up]: llama.cpp activates the first half.
            add(b + "ffn_up.weight", {kEmbd, 2 * kFf}, matrix(kEmbd, 2 * kFf, kStdProj));
        } else {
            add(b + "ffn_gate.weight", {kEmbd, kFf}, matrix(kEmbd, kFf, kStdProj));
            if (v.ffn_bias) add(b + "ffn_gate.bias", {kFf}, bias(kFf));
            add(b + "ffn_up.weight", {kEmbd, kFf}, matrix(kEmbd, kFf, kStdProj));
            if (v.ffn_bias) add(b + "ffn_up.bias", {kFf}, bias(kFf));
        }
        if (!v.experts) {
            add(b + "ffn_down.weight", {kFf, kEmbd}, matrix(kFf, kEmbd, kStdProj));
            if (v.ffn_bias) add(b + "ffn_down.bias", {kEmbd}, bias(kEmbd));
        }
        if (v.post_norms) add(b + "post_ffw_norm.weight", {kEmbd}, norm(kEmbd));
    }
}

}  // namespace

std::vector<std::string> tiny_decoder_names() {
    std::vector<std::string> names;
    for (const Variant &v : kVariants) names.emplace_back(v.name);
    return names;
}

TinyDecoder tiny_decoder(std::string_view name) {
    const Variant &v = find_variant(name);
    return {.name = v.name,
            .arch = v.arch,
            .n_layer = v.layers,
            .n_embd = kEmbd,
            .n_head = kHeads,
            .n_head_kv = kHeadsKv,
            .n_vocab = kVocab,
            .head_dim = v.head_dim,
            .n_rot = v.n_rot ? v.n_rot : v.head_dim,
            .tied = v.tied,
            .features = v.features};
}

void write_tiny_decoder(std::string_view name, const std::string &path, uint32_t seed) {
    const Variant &v = find_variant(name);
    const uint32_t n_rot = v.n_rot ? v.n_rot : v.head_dim;
    gguf::Writer w;
    add_metadata(w, v, n_rot);
    add_tensors(w, v, n_rot, seed ? seed : v.seed);
    w.write(path);
}

}  // namespace gguftool::testkit
