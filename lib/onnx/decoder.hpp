// Internal to lib/onnx: the decoder export's architecture table, tensor checks and graph.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "gguftool/decoder_export.hpp"
#include "plan.hpp"

namespace gguftool::decoder::detail {

// Which pairs RoPE rotates (llama_model_rope_type in llama.cpp's src/llama-model.cpp).
enum class Rope {
    norm,  // adjacent pairs (2i, 2i + 1)
    neox,  // pairs (i, i + n_rot/2)
};

// The gated FFN's activation (build_ffn's LLM_FFN_SILU / LLM_FFN_GELU, LLM_FFN_PAR).
enum class Act { silu, gelu };

// Where the FFN's gate and up projections are.
enum class Ffn {
    gate_up,        // ffn_gate and ffn_up
    fused_gate_up,  // ffn_up holds [gate | up], 2·n_ff rows, and there is no ffn_gate (phi3)
    up,             // ffn_up only: act(x·upᵀ) then down (bert; LLM_FFN_SEQ)
    // jina-bert-v2's loader: fused (GEGLU) when ffn_up has 2·n_ff rows and there is no ffn_gate;
    // else act(gate)·up with ffn_gate, or act(up) without.
    by_shape,
};

// Where an encoder's positions come from.
enum class Positions {
    rope,      // RoPE on Q and K
    absolute,  // position_embd.weight's row added to the input (bert)
    alibi,     // no rotation: ALiBi slopes (max bias 8) times -|i - j| added to the scores
};

// RMS norms on Q and K before RoPE.
enum class QkNorm {
    none,
    per_head,  // attn_q_norm / attn_k_norm of head_dim, over each head (qwen3, gemma3)
    whole,     // over the whole projection before it is split into heads, of n_head·head_dim
               // and n_head_kv·head_dim (olmo2)
    layer,     // LayerNorms (weight and bias) over the whole projection, where the file has them
               // (jina-bert-v2's attn_q_norm / attn_k_norm)
};

// The output head.
enum class Head {
    optional,  // output.weight, or token_embd when it is absent (TENSOR_DUPLICATED)
    tied,      // always token_embd (gemma, gemma2)
    untied,    // output.weight required (olmo2)
};

// Which layers use a sliding window, by the architecture's load_arch_hparams.
enum class Swa {
    none,
    gemma2,     // every layer kind from attention.sliding_window_pattern (default period 2),
                // window attention.sliding_window (default 4096)
    gemma3,     // only with attention.sliding_window > 0: pattern (default period 6), local layers
                // use rope.freq_base_swa (default 10000) and no rope scaling
    olmo2,      // only with attention.sliding_window > 0: pattern (default period 4); local layers
                // rotate with the global freq_base, no scaling, no YaRN (src/models/olmo2.cpp)
    gpt_oss,    // attention.sliding_window required, pattern (default period 2), local layers use
                // rope.freq_base_swa (default freq_base) (src/models/openai-moe.cpp)
    symmetric,  // attention.sliding_window required, pattern (default period 6), keys within
                // ±window/2 of the query, local layers use rope.freq_base_swa (gemma-embedding)
};

// Whether the FFN is a mixture of experts (build_moe_ffn in src/llama-graph.cpp).
enum class Experts {
    none,
    counted,  // when {arch}.expert_count > 0 (llama: Mixtral's layout)
    always,   // expert_count and expert_used_count required (qwen2moe, qwen3moe, gpt-oss)
};

// How the router's logits become the chosen experts' weights.
enum class Gating {
    softmax,       // softmax over all experts, then the top k of the probabilities
    topk_softmax,  // the top k logits, then a softmax over those k (gpt-oss: SOFTMAX_WEIGHT)
};

// The experts' gated activation.
enum class ExpertAct {
    silu,        // silu(gate) · up
    swiglu_oai,  // gpt-oss: g = min(gate, 7), u = clamp(up, ±7), g·σ(1.702·g)·(u + 1)
};

// One architecture: every way it differs from the plain pre-norm llama decoder, one named field
// per quirk, from llama.cpp's src/models/<arch>.cpp (load_arch_hparams, load_arch_tensors and the
// graph). A row leaves out what it does not have.
struct ArchRow {
    std::string_view name;        // general.architecture
    std::string_view model_type;  // config.json's model_type (transformers.js picks the class)
    std::string_view hf_class;    // config.json's architectures[0]

    Rope rope = Rope::norm;
    bool full_rotary = false;    // rope.dimension_count must be the head size (llama's loader)
    int64_t no_rope_period = 0;  // layer il has no RoPE when (il + 1) % period == 0 (smollm3: 4)
    bool rope_switch = false;    // rope.scaling.finetuned = false turns RoPE off (granite)
    bool yarn_keys = false;      // rope.scaling.yarn_beta_fast/_slow/_log_multiplier and
                                 // attention.temperature_scale (mistral3)
    Act act = Act::silu;
    Ffn ffn = Ffn::gate_up;
    bool pre_norms = true;    // attn_norm and ffn_norm before attention and FFN
    bool post_norms = false;  // post_attention_norm and post_ffw_norm after them (required)
    QkNorm qk_norm = QkNorm::none;
    Head head = Head::optional;
    bool embed_scale_sqrt = false;  // embeddings · sqrt(n_embd) (gemma family)
    bool q_scaled = false;          // Q · 1/sqrt(head_dim) after RoPE, scores unscaled (gemma
                                    // family, phi3); else the scores are scaled
    int64_t layers_27b = 0;         // with this many layers Q is scaled by 1/sqrt(n_embd/n_head)
    // Granite's multipliers (src/models/granite.cpp, llama-graph.cpp build_inp_embd): the
    // embeddings · embedding_scale, the scores · attention.scale instead of 1/sqrt(head_dim),
    // attention and FFN outputs · residual_scale, logits / logit_scale (required).
    bool multipliers = false;
    Swa swa = Swa::none;
    bool attn_sinks = false;  // attn_sinks [n_head]: a logit per head that joins each softmax
    // The norm before the FFN (gpt-oss names it post_attention_norm).
    std::string_view ffn_norm = "ffn_norm.weight";

    // Mixture of experts: ffn_gate_inp [n_embd, n_expert] (and its bias) routes each token to
    // expert_used_count experts of ffn_{gate,up,down}_exps [.., .., n_expert] (and their biases).
    Experts experts = Experts::none;
    Gating gating = Gating::softmax;
    bool experts_norm = false;  // the k weights divided by their sum (clamped to >= 2^-14)
    ExpertAct expert_act = ExpertAct::silu;
    // qwen2moe: a shared expert ffn_{gate,up,down}_shexp added, scaled by
    // sigmoid(ffn_gate_inp_shexp · x) (computed as silu(g) / g).
    bool shared_expert = false;

    // Whether it has a decoder graph (--graph decoder: logits and the KV cache). Every row has
    // the encoder graph (--graph encoder: each token's final hidden state, as llama.cpp's
    // embeddings give it, with its pooling); the BERT family has only that.
    bool decoder = true;
    // The BERT layout (src/models/bert.cpp): LayerNorm with a bias (eps
    // attention.layer_norm_epsilon) after the embeddings and after each residual add, biases on
    // the projections, no final norm.
    bool bert_layout = false;
    Positions positions = Positions::rope;
    bool token_types = false;    // token_types.weight: its row 0 added to every token (llama.cpp
                                 // does not read token_type_ids)
    bool bidirectional = false;  // never causal (gemma-embedding); else {arch}.attention.causal
};

const ArchRow *find_arch(std::string_view name);
std::span<const ArchRow> arch_rows();

// Checks that every tensor the graph reads is there with its shape (decoder_tensors.cpp).
void check_tensors(const gguf::Model &model, const Hparams &h, const ArchRow &row);

// Builds the whole graph into g's plan: inputs, outputs, the computation and, where first used,
// each weight (its DequantizePacked or plain-tensor nodes, decoded to `weight_type`). Returns
// the indices of the weight nodes, which the caller lowers (their inputs are initializers only,
// so they can be moved first) (decoder_graph.cpp).
std::vector<int> emit_decoder(onnx_export::detail::GraphBuilder &g, const gguf::Model &model,
                              const Hparams &h, const Options &options, int opset,
                              std::map<std::string, size_t> *forms);

// cos and sin of every position < n_positions and rotated pair, as ggml's rope computes them
// (ggml_rope_cache_init): [n_positions][n_rot/2] each. `factors`: per-pair divisors of the angle
// (rope_freqs, longrope's), or empty.
void rope_tables(const Hparams &h, const RopeParams &p, std::span<const float> factors,
                 int64_t first, int64_t n_positions, float *cos_out, float *sin_out);

}  // namespace gguftool::decoder::detail
