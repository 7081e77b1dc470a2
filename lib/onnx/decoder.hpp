// Internal to lib/onnx: the decoder export's architecture rows, tensor checks and graph.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "gguftool/decoder_export.hpp"
#include "plan.hpp"

namespace gguftool::decoder::detail {

// Which layers use a sliding window, by llama.cpp's loader of the architecture.
enum class Swa {
    none,
    gemma2,  // every layer kind from attention.sliding_window_pattern (default period 2),
             // window attention.sliding_window (default 4096)
    gemma3,  // only with attention.sliding_window > 0: pattern (default period 6), local layers
             // use rope.freq_base_swa (default 10000) and no rope scaling
};

// One architecture: what it does beyond the common pre-norm decoder (MODEL-FACTS §1.3-1.8).
struct ArchRow {
    std::string_view name;  // general.architecture
    std::string_view
        model_type;             // config.json's model_type (transformers.js picks the class by it)
    std::string_view hf_class;  // config.json's architectures[0]
    bool neox;                  // rope pairs (i, i + n_rot/2); else adjacent pairs (NORM)
    bool gelu;                  // GELU (tanh) gated FFN; else SiLU
    bool embed_scale;           // embedding * sqrt(n_embd)
    bool q_scaled;              // Q *= scale after RoPE, scores unscaled; else scores scaled
    bool post_norms;            // post_attention_norm and post_ffw_norm (required)
    bool qk_norm;               // attn_q_norm and attn_k_norm over the head (required)
    bool always_tied;           // the head is always token_embd
    Swa swa;
    int64_t layers_27b;  // the 27B model's layer count: Q scaled by 1/sqrt(n_embd/n_head) there
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
void rope_tables(const Hparams &h, float freq_base, float freq_scale,
                 std::span<const float> factors, int64_t first, int64_t n_positions, float *cos_out,
                 float *sin_out);

}  // namespace gguftool::decoder::detail
