// The decoder's hyperparameters from a GGUF file, by llama.cpp's rules (src/llama-model.cpp
// load_hparams and src/models/<arch>.cpp load_arch_hparams of the pinned version): the keys every
// architecture shares read once, the others as the architecture's row (decoder_arch.cpp) says.
#include <fmt/format.h>

#include <cmath>

#include "decoder.hpp"

namespace gguftool::decoder {
namespace detail {
namespace {

// Metadata access naming the file and key in every error.
class Keys {
public:
    Keys(const gguf::Model &m, std::string arch) : m_(m), arch_(std::move(arch)) {}

    const gguf::MetadataEntry *find(std::string_view name) const {
        return m_.first().find(key(name));
    }
    std::string key(std::string_view name) const { return fmt::format("{}.{}", arch_, name); }

    [[noreturn]] void fail(const gguf::MetadataEntry *e, std::string_view name,
                           const std::string &what) const {
        throw Error(m_.first().path(), e ? std::optional<uint64_t>(e->offset) : std::nullopt,
                    fmt::format("key {}: {}", key(name), what));
    }

    int64_t integer(std::string_view name, std::optional<int64_t> fallback) const {
        const gguf::MetadataEntry *e = find(name);
        if (!e) {
            if (fallback) return *fallback;
            fail(e, name, "missing");
        }
        if (e->value.type() == gguf::ValueType::array)
            fail(e, name, "per-layer arrays are not supported");
        try {
            return e->value.as_int();
        } catch (const std::exception &) {
            fail(e, name, "not an integer");
        }
    }
    float real(std::string_view name, float fallback) const {
        const gguf::MetadataEntry *e = find(name);
        if (!e) return fallback;
        try {
            return static_cast<float>(e->value.as_double());
        } catch (const std::exception &) {
            fail(e, name, "not a number");
        }
    }
    std::optional<float> real_if(std::string_view name) const {
        if (!find(name)) return std::nullopt;
        return real(name, 0);
    }
    std::string string(std::string_view name, std::string fallback) const {
        const gguf::MetadataEntry *e = find(name);
        if (!e) return fallback;
        if (e->value.type() != gguf::ValueType::string) fail(e, name, "not a string");
        return std::string(e->value.as_string());
    }

private:
    const gguf::Model &m_;
    std::string arch_;
};

int64_t optional_id(const gguf::Model &m, std::string_view key) {
    const gguf::MetadataEntry *e = m.first().find(key);
    if (!e) return -1;
    try {
        return e->value.as_int();
    } catch (const std::exception &) {
        throw Error(m.first().path(), e->offset, fmt::format("key {}: not an integer", key));
    }
}

// llama.cpp's sliding-window layers: the key's bool array, or the period rule (SWA iff
// il % n < n - 1; period 0: every layer).
void swa_pattern(const Keys &k, Hparams &h, uint32_t period) {
    if (const gguf::MetadataEntry *e = k.find("attention.sliding_window_pattern")) {
        if (e->value.type() == gguf::ValueType::array) {
            if (e->value.array_type() != gguf::ValueType::bool_ ||
                e->value.array_size() != uint64_t(h.n_layer))
                k.fail(e, "attention.sliding_window_pattern",
                       fmt::format("expected {} bools", h.n_layer));
            for (int64_t il = 0; il < h.n_layer; ++il) h.swa[il] = e->value.element(il).as_bool();
            return;
        }
        period = uint32_t(k.integer("attention.sliding_window_pattern", std::nullopt));
    }
    for (int64_t il = 0; il < h.n_layer; ++il)
        h.swa[il] = period == 0 || (il % period < period - 1);
}

// The mixture of experts: expert_count and expert_used_count as the row says, checked as
// llama_model_base::load_hparams does (0 < used <= count); a gating-function key naming another
// function than the architecture's own is refused (llama.cpp would ignore it: the graph of each
// architecture fixes its function).
void experts(const Keys &k, const ArchRow &row, Hparams &h) {
    if (row.experts == Experts::none) {
        if (const gguf::MetadataEntry *e = k.find("expert_count");
            e && k.integer("expert_count", 0) > 0)
            k.fail(e, "expert_count", "this architecture has no mixture-of-experts form");
        return;
    }
    const bool required = row.experts == Experts::always;
    h.n_expert = k.integer("expert_count", required ? std::nullopt : std::optional<int64_t>(0));
    if (h.n_expert < 0 || (required && h.n_expert == 0))
        k.fail(k.find("expert_count"), "expert_count",
               fmt::format("{} experts (the architecture needs at least one)", h.n_expert));
    if (h.n_expert == 0) return;
    h.n_expert_used = k.integer("expert_used_count", std::nullopt);
    if (h.n_expert_used <= 0 || h.n_expert_used > h.n_expert)
        k.fail(k.find("expert_used_count"), "expert_used_count",
               fmt::format("{} experts used of {}", h.n_expert_used, h.n_expert));
    if (k.find("expert_group_count") && k.integer("expert_group_count", 0) > 1)
        k.fail(k.find("expert_group_count"), "expert_group_count",
               "expert groups are not supported");
    // LLAMA_EXPERT_GATING_FUNC_TYPE (src/llama-hparams.h): 1 softmax, 2 sigmoid, 3 softmax_weight.
    const int64_t own = row.gating == Gating::softmax ? 1 : 3;
    if (const gguf::MetadataEntry *e = k.find("expert_gating_func"))
        if (const int64_t f = k.integer("expert_gating_func", 0); f != own)
            k.fail(e, "expert_gating_func",
                   fmt::format("gating function {} is not this architecture's ({})", f, own));
}

}  // namespace

}  // namespace detail

Hparams read_hparams(const gguf::Model &model, Graph graph) {
    using namespace detail;
    const std::string &path = model.first().path();
    const gguf::MetadataEntry *ae = model.first().find("general.architecture");
    if (!ae || ae->value.type() != gguf::ValueType::string)
        throw Error(path, ae ? std::optional<uint64_t>(ae->offset) : std::nullopt,
                    "key general.architecture: missing or not a string");
    Hparams h;
    h.graph = graph;
    h.arch = std::string(ae->value.as_string());
    const ArchRow *row = find_arch(h.arch);
    if (!row || (graph == Graph::decoder && !row->decoder))
        throw Error(path, ae->offset,
                    fmt::format("architecture {} cannot be exported as {} (supported: {}){}",
                                h.arch, graph == Graph::decoder ? "a decoder" : "an encoder",
                                fmt::join(architectures(graph), ", "),
                                row ? "; it is an encoder: --graph encoder" : ""));
    const Keys k(model, h.arch);

    h.n_ctx_train = k.integer("context_length", std::nullopt);
    h.n_embd = k.integer("embedding_length", std::nullopt);
    h.n_layer = k.integer("block_count", std::nullopt);
    experts(k, *row, h);
    // The dense FFN's width; a mixture of experts needs it only for its default expert width.
    h.n_ff =
        k.integer("feed_forward_length", h.n_expert > 0 ? std::optional<int64_t>(0) : std::nullopt);
    h.n_head = k.integer("attention.head_count", std::nullopt);
    h.n_head_kv = k.integer("attention.head_count_kv", h.n_head);
    if (h.n_embd <= 0 || h.n_layer <= 0 || h.n_head <= 0 || h.n_head_kv <= 0 ||
        h.n_ctx_train <= 0 || (h.n_expert == 0 && h.n_ff <= 0))
        throw Error(path, std::nullopt,
                    fmt::format("{}: embedding_length, block_count, feed_forward_length, "
                                "head counts and context_length must be positive",
                                h.arch));
    if (h.n_expert > 0) {
        // The experts' width (load_arch_tensors): llama's are n_ff wide; the others read
        // expert_feed_forward_length, by default n_ff divided among the used experts.
        h.n_ff_exp = row->experts == Experts::counted
                         ? h.n_ff
                         : k.integer("expert_feed_forward_length", h.n_ff / h.n_expert_used);
        if (h.n_ff_exp <= 0)
            k.fail(k.find("expert_feed_forward_length"), "expert_feed_forward_length",
                   "missing, and feed_forward_length gives no width");
        if (row->shared_expert) {
            h.n_ff_shexp = k.integer("expert_shared_feed_forward_length", h.n_ff);
            if (h.n_ff_shexp <= 0)
                k.fail(k.find("expert_shared_feed_forward_length"),
                       "expert_shared_feed_forward_length",
                       "missing, and feed_forward_length gives no width");
        }
    }
    if (h.n_embd % h.n_head != 0 && !k.find("attention.key_length"))
        k.fail(k.find("attention.head_count"), "attention.head_count",
               fmt::format("{} heads do not divide embedding_length {}", h.n_head, h.n_embd));
    if (h.n_head % h.n_head_kv != 0)
        k.fail(k.find("attention.head_count_kv"), "attention.head_count_kv",
               fmt::format("{} KV heads do not divide {} heads", h.n_head_kv, h.n_head));
    h.head_dim = k.integer("attention.key_length", h.n_embd / h.n_head);
    if (k.integer("attention.value_length", h.head_dim) != h.head_dim)
        k.fail(k.find("attention.value_length"), "attention.value_length",
               "a value length other than the key length is not supported");
    h.n_rot = k.integer("rope.dimension_count", h.head_dim);
    if (h.n_rot <= 0 || h.n_rot > h.head_dim || h.n_rot % 2 != 0)
        k.fail(k.find("rope.dimension_count"), "rope.dimension_count",
               fmt::format("{} rotated dimensions for a head of {}", h.n_rot, h.head_dim));
    if (row->full_rotary && h.n_rot != h.head_dim)
        k.fail(k.find("rope.dimension_count"), "rope.dimension_count",
               fmt::format("invalid n_rot {}, expected {}", h.n_rot, h.head_dim));
    // The norms' epsilon: LayerNorm's for the BERT layout, RMSNorm's otherwise.
    const char *eps_key =
        row->bert_layout ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon";
    (row->bert_layout ? h.norm_eps : h.rms_eps) = k.real(eps_key, -1);
    if ((row->bert_layout ? h.norm_eps : h.rms_eps) < 0)
        k.fail(k.find(eps_key), eps_key, "missing");

    // RoPE (llama_model_base::load_hparams, llama_context's cparams).
    h.n_ctx_orig = k.integer("rope.scaling.original_context_length", h.n_ctx_train);
    h.rope.freq_base = k.real("rope.freq_base", 10000.0f);
    h.rope_scaling = k.string("rope.scaling.type", "linear");
    if (h.rope_scaling != "none" && h.rope_scaling != "linear" && h.rope_scaling != "yarn" &&
        h.rope_scaling != "longrope")
        k.fail(k.find("rope.scaling.type"), "rope.scaling.type",
               fmt::format("rope scaling type '{}' is not supported (none, linear, yarn, "
                           "longrope)",
                           h.rope_scaling));
    float factor = k.real("rope.scaling.factor", 0.0f);
    if (!k.find("rope.scaling.factor")) factor = k.real("rope.scale_linear", 0.0f);
    h.rope.freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
    if (h.rope_scaling == "none") h.rope.freq_scale = 1.0f;
    const float rope_attn_factor = k.real("rope.scaling.attn_factor", 1.0f);
    float log_mul = 0;
    if (row->yarn_keys) {  // mistral3's load_arch_hparams
        h.beta_fast = k.real("rope.scaling.yarn_beta_fast", h.beta_fast);
        h.beta_slow = k.real("rope.scaling.yarn_beta_slow", h.beta_slow);
        log_mul = k.real("rope.scaling.yarn_log_multiplier", 0.0f);
        h.attn_temp_scale = k.real("attention.temperature_scale", 0.0f);
        if (h.attn_temp_scale != 0.0f) {
            h.attn_temp_floor = h.n_ctx_orig;
            if (h.attn_temp_floor == 0)
                k.fail(k.find("attention.temperature_scale"), "attention.temperature_scale",
                       "needs rope.scaling.original_context_length");
        }
    }
    h.rope.ext_factor = h.rope_scaling == "yarn" ? 1.0f : 0.0f;
    h.rope.attn_factor = 1.0f;
    if (h.rope.ext_factor != 0) {
        auto mscale = [](float scale, float m) {
            return scale <= 1.0f ? 1.0f : (0.1f * m * logf(scale) + 1.0f);
        };
        const float f = 1.0f / h.rope.freq_scale;
        h.rope.attn_factor =
            log_mul != 0.0f ? mscale(f, 1.0f) / mscale(f, log_mul) : mscale(f, 1.0f);
        h.rope.attn_factor *= 1.0f / (1.0f + 0.1f * logf(f));
    }
    h.rope.attn_factor *= rope_attn_factor;
    // Which layers rotate: all, but every no_rope_period-th (smollm3), or none when the
    // rope.scaling.finetuned switch is off (granite's load_arch_hparams fills rope_pattern).
    h.rope_layers.assign(h.n_layer, true);
    if (row->no_rope_period > 0)
        for (int64_t il = 0; il < h.n_layer; ++il)
            h.rope_layers[il] = (il + 1) % row->no_rope_period != 0;
    if (row->positions != Positions::rope) h.rope_layers.assign(h.n_layer, false);
    if (row->rope_switch) {
        const gguf::MetadataEntry *e = k.find("rope.scaling.finetuned");
        if (e && e->value.type() != gguf::ValueType::bool_)
            k.fail(e, "rope.scaling.finetuned", "not a bool");
        if (e && !e->value.as_bool()) h.rope_layers.assign(h.n_layer, false);
    }

    // Sliding windows.
    h.swa.assign(h.n_layer, false);
    h.rope_swa = h.rope;
    if (row->swa == Swa::gemma2) {
        h.n_swa = uint32_t(k.integer("attention.sliding_window", 4096));
        swa_pattern(k, h, 2);
        h.rope_swa.freq_base = k.real("rope.freq_base_swa", h.rope.freq_base);
        h.attn_softcap = k.real("attn_logit_softcapping", 0.0f);
        h.final_softcap = k.real("final_logit_softcapping", 0.0f);
    } else if (row->swa == Swa::gemma3) {
        h.n_swa = uint32_t(k.integer("attention.sliding_window", 0));
        if (h.n_swa > 0) {
            swa_pattern(k, h, 6);
            h.rope_swa.freq_base = k.real("rope.freq_base_swa", 10000.0f);
            h.rope_swa.freq_scale = 1.0f;
        }
        h.final_softcap = k.real("final_logit_softcapping", 0.0f);
    } else if (row->swa == Swa::gpt_oss) {
        h.n_swa = uint32_t(k.integer("attention.sliding_window", std::nullopt));
        swa_pattern(k, h, 2);
        h.rope_swa.freq_base = k.real("rope.freq_base_swa", h.rope.freq_base);
    } else if (row->swa == Swa::symmetric) {
        h.n_swa = uint32_t(k.integer("attention.sliding_window", std::nullopt));
        swa_pattern(k, h, 6);
        h.rope_swa.freq_base = k.real("rope.freq_base_swa", 10000.0f);
        h.rope_swa.freq_scale = 1.0f;
    } else if (row->swa == Swa::olmo2) {
        h.n_swa = uint32_t(k.integer("attention.sliding_window", 0));
        if (h.n_swa > 0) {
            swa_pattern(k, h, 4);
            h.rope_swa.freq_scale = 1.0f;
            h.rope_swa.ext_factor = 0.0f;
            h.rope_swa.attn_factor = 1.0f;
        }
    }
    // phi3's sliding window is disabled in llama.cpp ("Phi SWA is currently disabled"): none.
    if (h.n_swa == 0) h.swa.assign(h.n_layer, false);

    // Scales.
    const float head_scale = 1.0f / std::sqrt(float(h.head_dim));
    if (row->q_scaled) {
        h.kq_scale = 1.0f;
        h.q_scale = head_scale;
        if (row->layers_27b && h.n_layer == row->layers_27b)  // the 27B models
            h.q_scale = 1.0f / std::sqrt(float(h.n_embd / h.n_head));
    } else {
        h.kq_scale = head_scale;
    }
    if (row->embed_scale_sqrt) h.embed_scale = std::sqrt(float(h.n_embd));
    if (row->multipliers) {
        if (const float s = k.real("attention.scale", 0.0f); s != 0.0f) h.kq_scale = s;
        h.embed_scale = k.real("embedding_scale", 0.0f);
        h.residual_scale = k.real("residual_scale", 0.0f);
        h.logit_scale = k.real("logit_scale", 0.0f);
        if (!k.find("logit_scale")) k.fail(nullptr, "logit_scale", "missing");
        if (h.logit_scale == 0.0f) k.fail(k.find("logit_scale"), "logit_scale", "zero");
    }

    // Encoders: attention direction, pooling, ALiBi (llama_model_base::load_hparams and the
    // architectures' load_arch_hparams).
    if (row->bidirectional) {
        h.causal = false;
    } else if (const gguf::MetadataEntry *e = k.find("attention.causal")) {
        if (e->value.type() != gguf::ValueType::bool_) k.fail(e, "attention.causal", "not a bool");
        h.causal = e->value.as_bool();
    }
    if (graph == Graph::encoder) {
        const int64_t pooling = k.integer("pooling_type", 0);
        if (pooling == 4)
            k.fail(k.find("pooling_type"), "pooling_type",
                   "rank pooling (a reranker's classification head) is not exported");
        if (pooling < 0 || pooling > 3)
            k.fail(k.find("pooling_type"), "pooling_type",
                   fmt::format("unknown pooling type {}", pooling));
        h.pooling = Pooling(pooling);
    }
    if (row->positions == Positions::alibi) h.max_alibi_bias = 8.0f;

    // The vocabulary: token_embd's rows (llama.cpp creates it {n_embd, n_vocab}).
    const gguf::TensorInfo *embd = model.find_tensor("token_embd.weight");
    if (!embd) throw Error(path, std::nullopt, "tensor token_embd.weight: missing");
    h.n_vocab = int64_t(embd->ne[1]);
    if (row->token_types) {  // llama_model_bert::load_arch_tensors needs the count
        const char *key = "tokenizer.ggml.token_type_count";
        const int64_t n = optional_id(model, key);
        if (n <= 0)
            throw Error(
                path,
                model.first().find(key) ? std::optional(model.first().find(key)->offset)
                                        : std::nullopt,
                fmt::format("key {}: {}", key,
                            n < 0 ? "missing (a BERT model needs its token type count)" : "zero"));
        h.n_token_types = n;
    }
    h.tied = row->head == Head::tied ||
             (row->head == Head::optional && !model.find_tensor("output.weight"));
    h.bos = optional_id(model, "tokenizer.ggml.bos_token_id");
    h.eos = optional_id(model, "tokenizer.ggml.eos_token_id");
    h.pad = optional_id(model, "tokenizer.ggml.padding_token_id");
    check_tensors(model, h, *row);
    return h;
}

}  // namespace gguftool::decoder
