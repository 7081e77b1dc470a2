// The architectures the decoder and encoder exports know: one row each, every quirk a named field
// (decoder.hpp says what each means), from llama.cpp's src/models/<arch>.cpp of the pinned version.
// A new architecture is a row here (and, if it has a quirk no row has yet, that field in
// decoder.hpp and where the hparams reader or the graph uses it).
#include "decoder.hpp"

namespace gguftool::decoder {
namespace detail {
namespace {

const ArchRow kArchs[] = {
    // With expert_count > 0: Mixtral's layout.
    {.name = "llama",
     .model_type = "llama",
     .hf_class = "LlamaForCausalLM",
     .full_rotary = true,
     .experts = Experts::counted,
     .experts_norm = true},
    {.name = "mistral3",
     .model_type = "mistral",
     .hf_class = "MistralForCausalLM",
     .yarn_keys = true},
    {.name = "qwen2", .model_type = "qwen2", .hf_class = "Qwen2ForCausalLM", .rope = Rope::neox},
    {.name = "qwen2moe",
     .model_type = "qwen2_moe",
     .hf_class = "Qwen2MoeForCausalLM",
     .rope = Rope::neox,
     .full_rotary = true,
     .experts = Experts::always,
     .shared_expert = true},
    {.name = "qwen3",
     .model_type = "qwen3",
     .hf_class = "Qwen3ForCausalLM",
     .rope = Rope::neox,
     .qk_norm = QkNorm::per_head},
    {.name = "qwen3moe",
     .model_type = "qwen3_moe",
     .hf_class = "Qwen3MoeForCausalLM",
     .rope = Rope::neox,
     .full_rotary = true,
     .qk_norm = QkNorm::per_head,
     .experts = Experts::always,
     .experts_norm = true},
    {.name = "gemma",
     .model_type = "gemma",
     .hf_class = "GemmaForCausalLM",
     .rope = Rope::neox,
     .act = Act::gelu,
     .head = Head::tied,
     .embed_scale_sqrt = true,
     .q_scaled = true},
    {.name = "gemma2",
     .model_type = "gemma2",
     .hf_class = "Gemma2ForCausalLM",
     .rope = Rope::neox,
     .act = Act::gelu,
     .post_norms = true,
     .head = Head::tied,
     .embed_scale_sqrt = true,
     .q_scaled = true,
     .layers_27b = 46,
     .swa = Swa::gemma2},
    {.name = "gemma3",
     .model_type = "gemma3_text",
     .hf_class = "Gemma3ForCausalLM",
     .rope = Rope::neox,
     .act = Act::gelu,
     .post_norms = true,
     .qk_norm = QkNorm::per_head,
     .embed_scale_sqrt = true,
     .q_scaled = true,
     .layers_27b = 62,
     .swa = Swa::gemma3},
    {.name = "phi3",
     .model_type = "phi3",
     .hf_class = "Phi3ForCausalLM",
     .rope = Rope::neox,
     .ffn = Ffn::fused_gate_up,
     .q_scaled = true},
    {.name = "smollm3",
     .model_type = "smollm3",
     .hf_class = "SmolLM3ForCausalLM",
     .full_rotary = true,
     .no_rope_period = 4},
    {.name = "olmo2",
     .model_type = "olmo2",
     .hf_class = "Olmo2ForCausalLM",
     .rope = Rope::neox,
     .full_rotary = true,
     .pre_norms = false,
     .post_norms = true,
     .qk_norm = QkNorm::whole,
     .head = Head::untied,
     .swa = Swa::olmo2},
    {.name = "granite",
     .model_type = "granite",
     .hf_class = "GraniteForCausalLM",
     .full_rotary = true,
     .rope_switch = true,
     .multipliers = true},
    // Granite's multipliers and graph (its RoPE always on) with Mixtral-style experts, as wide as
    // the dense FFN, when expert_count > 0. transformers.js knows it as granite.
    {.name = "granitemoe",
     .model_type = "granite",
     .hf_class = "GraniteMoeForCausalLM",
     .full_rotary = true,
     .multipliers = true,
     .experts = Experts::counted,
     .experts_norm = true},
    // The attention output bias and the router and expert biases are there in every released
    // model; the graph adds any bias it finds.
    {.name = "gpt-oss",
     .model_type = "gpt_oss",
     .hf_class = "GptOssForCausalLM",
     .rope = Rope::neox,
     .swa = Swa::gpt_oss,
     .attn_sinks = true,
     .ffn_norm = "post_attention_norm.weight",
     .experts = Experts::always,
     .gating = Gating::topk_softmax,
     .expert_act = ExpertAct::swiglu_oai},
    // The encoders only (src/models/bert.cpp builds all three; jina-bert-v2.cpp and
    // nomic-bert.cpp load them). transformers.js knows jina-bert-v2 as a bert.
    {.name = "bert",
     .model_type = "bert",
     .hf_class = "BertModel",
     .act = Act::gelu,
     .ffn = Ffn::up,
     .pre_norms = false,
     .decoder = false,
     .bert_layout = true,
     .positions = Positions::absolute,
     .token_types = true},
    {.name = "nomic-bert",
     .model_type = "nomic_bert",
     .hf_class = "NomicBertModel",
     .rope = Rope::neox,
     .pre_norms = false,
     .decoder = false,
     .bert_layout = true,
     .token_types = true},
    {.name = "jina-bert-v2",
     .model_type = "bert",
     .hf_class = "JinaBertModel",
     .act = Act::gelu,
     .ffn = Ffn::by_shape,
     .pre_norms = false,
     .qk_norm = QkNorm::layer,
     .decoder = false,
     .bert_layout = true,
     .positions = Positions::alibi,
     .token_types = true},
    // Gemma 3's layer, never causal, its local layers' window symmetric
    // (src/models/gemma-embedding.cpp).
    {.name = "gemma-embedding",
     .model_type = "gemma3_text",
     .hf_class = "Gemma3TextModel",
     .rope = Rope::neox,
     .act = Act::gelu,
     .post_norms = true,
     .qk_norm = QkNorm::per_head,
     .embed_scale_sqrt = true,
     .q_scaled = true,
     .swa = Swa::symmetric,
     .decoder = false,
     .bidirectional = true},
};

}  // namespace

const ArchRow *find_arch(std::string_view name) {
    for (const ArchRow &r : kArchs)
        if (r.name == name) return &r;
    return nullptr;
}

std::span<const ArchRow> arch_rows() {
    return kArchs;
}

}  // namespace detail

std::vector<std::string_view> architectures(Graph graph) {
    std::vector<std::string_view> out;
    for (const detail::ArchRow &r : detail::arch_rows())
        if (graph == Graph::encoder || r.decoder) out.push_back(r.name);
    return out;
}

}  // namespace gguftool::decoder
