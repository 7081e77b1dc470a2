#include "tiny_encoder.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "floats.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/half.hpp"
#include "llama_vocabs.hpp"
#include "random.hpp"

namespace gguftool::testkit {
namespace {

using gguf::MetaValue;

// The FFN's shape: up alone (bert, LLM_FFN_SEQ), gate and up (nomic-bert, the decoder-like ones),
// or [gate | up] in ffn_up (jina-bert-v2's GEGLU).
enum class Ffn { up, gate_up, geglu };

struct Variant {
    const char *name;
    const char *arch;
    const char *vocab;  // ggml-vocab-<vocab>.gguf
    const char *pooling_name;
    uint32_t pooling;  // {arch}.pooling_type
    const char *features;
    uint32_t embd = 256, heads = 4, heads_kv = 4, head_dim = 64, layers = 2;
    uint32_t context = 512;
    bool bert = false;  // the BERT layout: LayerNorms with biases, token types, no final norm
    bool absolute_positions = false;
    bool fused_qkv = false;
    bool biases = false;  // on q/k/v, the attention output and the FFN
    Ffn ffn = Ffn::gate_up;
    bool qk_layer_norm = false;  // jina-bert-v2's q/k LayerNorms
    bool attn_norm_2 = false;
    // The decoder-like layouts (gemma-embedding, qwen3).
    bool qk_norm = false;  // per-head RMS norms
    bool post_norms = false;
    float freq_base = 10000.0f, freq_base_swa = 0;
    uint32_t window = 0, pattern = 0;
    bool dense = false;        // dense_2 / dense_3 (sentence-transformers' Dense modules)
    bool add_eos = false;      // tokenizer.ggml.add_eos_token (Qwen3-Embedding, embeddinggemma)
    bool write_causal = true;  // {arch}.attention.causal = false (the BERT family's converters)
    double embd_std = 1.0;
};

constexpr uint32_t kFf = 512;
constexpr double kStdQk = 0.08, kStdProj = 0.05, kStdBias = 0.1, kStdNorm = 0.1;

const Variant kVariants[] = {
    {.name = "bert",
     .arch = "bert",
     .vocab = "bert-bge",
     .pooling_name = "cls",
     .pooling = 2,
     .features = "absolute positions, token types, LayerNorms, biases, GELU, CLS pooling",
     .bert = true,
     .absolute_positions = true,
     .biases = true,
     .ffn = Ffn::up},
    {.name = "nomic-bert",
     .arch = "nomic-bert",
     .vocab = "bert-bge",
     .pooling_name = "mean",
     .pooling = 1,
     .features = "neox RoPE (base 1000), fused qkv, SwiGLU, token types, mean pooling",
     .bert = true,
     .fused_qkv = true,
     .freq_base = 1000.0f},
    // 6 heads of 64: ALiBi's slopes from two series (n_head_log2 = 4).
    {.name = "jina-bert-v2",
     .arch = "jina-bert-v2",
     .vocab = "bert-bge",
     .pooling_name = "mean",
     .pooling = 1,
     .features = "ALiBi over 6 heads, q/k LayerNorms, attn_norm_2, GEGLU, biases, mean pooling",
     .embd = 384,
     .heads = 6,
     .heads_kv = 6,
     .bert = true,
     .biases = true,
     .ffn = Ffn::geglu,
     .qk_layer_norm = true,
     .attn_norm_2 = true},
    // Layers 0-1 local (window 4: keys within ±2), layer 2 global.
    {.name = "gemma-embedding",
     .arch = "gemma-embedding",
     .vocab = "llama-spm",
     .pooling_name = "mean",
     .pooling = 1,
     .features = "bidirectional, symmetric window 4 (pattern 3), q/k norms, post norms, GELU, "
                 "embeddings x sqrt(n_embd), dense_2/dense_3, EOS appended, mean pooling",
     .heads_kv = 2,
     .layers = 3,
     .qk_norm = true,
     .post_norms = true,
     .freq_base = 1000000.0f,
     .freq_base_swa = 10000.0f,
     .window = 4,
     .pattern = 3,
     .dense = true,
     .add_eos = true,
     .write_causal = false,
     .embd_std = 1.0 / 16},
    {.name = "qwen3",
     .arch = "qwen3",
     .vocab = "gpt-2",
     .pooling_name = "last",
     .pooling = 3,
     .features = "causal, q/k norms, head size 128, neox RoPE, EOS appended, last-token pooling",
     .heads_kv = 2,
     .head_dim = 128,
     .qk_norm = true,
     .freq_base = 1000000.0f,
     .add_eos = true,
     .write_causal = false},
};

const Variant &find_variant(std::string_view name) {
    for (const Variant &v : kVariants)
        if (name == v.name) return v;
    throw std::invalid_argument(fmt::format("no tiny encoder variant named '{}'", name));
}

std::vector<uint8_t> f16_bytes(const std::vector<float> &values) {
    std::vector<uint8_t> out(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
        const uint16_t h = f32_to_fp16(values[i]);
        out[2 * i] = uint8_t(h), out[2 * i + 1] = uint8_t(h >> 8);
    }
    return out;
}

}  // namespace

std::vector<std::string> tiny_encoder_names() {
    std::vector<std::string> names;
    for (const Variant &v : kVariants) names.emplace_back(v.name);
    return names;
}

TinyEncoder tiny_encoder(std::string_view name) {
    const Variant &v = find_variant(name);
    return {v.name, v.arch, v.vocab, v.pooling_name, v.features};
}

void write_tiny_encoder(std::string_view name, const std::string &path) {
    const Variant &v = find_variant(name);
    const std::string vocab_path = llama_vocab_dir() + "/ggml-vocab-" + v.vocab + ".gguf";
    const gguf::Model vocab = gguf::Model::open(vocab_path);
    const gguf::MetadataEntry *tokens = vocab.first().find("tokenizer.ggml.tokens");
    if (!tokens) throw std::runtime_error(vocab_path + " has no tokens");
    const uint64_t V = tokens->value.array_size();

    gguf::Writer w;
    const std::string a = v.arch;
    const auto key = [&](const char *k) { return a + "." + k; };
    w.add("general.architecture", MetaValue::str(a));
    w.add("general.name", MetaValue::str(fmt::format("gguftool tiny {} (random weights)", v.name)));
    w.add(key("context_length"), MetaValue::u32(v.context));
    w.add(key("embedding_length"), MetaValue::u32(v.embd));
    w.add(key("block_count"), MetaValue::u32(v.layers));
    w.add(key("feed_forward_length"), MetaValue::u32(kFf));
    w.add(key("attention.head_count"), MetaValue::u32(v.heads));
    w.add(key("attention.head_count_kv"), MetaValue::u32(v.heads_kv));
    if (v.head_dim * v.heads != v.embd) {
        w.add(key("attention.key_length"), MetaValue::u32(v.head_dim));
        w.add(key("attention.value_length"), MetaValue::u32(v.head_dim));
    }
    if (v.bert)
        w.add(key("attention.layer_norm_epsilon"), MetaValue::f32(1e-12f));
    else
        w.add(key("attention.layer_norm_rms_epsilon"), MetaValue::f32(1e-6f));
    if (v.bert && v.write_causal) w.add(key("attention.causal"), MetaValue::boolean(false));
    w.add(key("pooling_type"), MetaValue::u32(v.pooling));
    w.add(key("rope.freq_base"), MetaValue::f32(v.freq_base));
    if (v.freq_base_swa) w.add(key("rope.freq_base_swa"), MetaValue::f32(v.freq_base_swa));
    if (v.window) {
        w.add(key("attention.sliding_window"), MetaValue::u32(v.window));
        w.add(key("attention.sliding_window_pattern"), MetaValue::u32(v.pattern));
    }
    if (v.dense) {
        w.add(key("dense_2_feat_in"), MetaValue::u32(v.embd));
        w.add(key("dense_2_feat_out"), MetaValue::u32(kFf));
        w.add(key("dense_3_feat_in"), MetaValue::u32(kFf));
        w.add(key("dense_3_feat_out"), MetaValue::u32(v.embd));
    }
    for (const gguf::MetadataEntry &e : vocab.first().metadata())
        if (e.key.starts_with("tokenizer.") &&
            !(v.add_eos && e.key == "tokenizer.ggml.add_eos_token"))
            w.add(gguf::MetadataItem::of(e));
    if (v.bert && !vocab.first().find("tokenizer.ggml.token_type_count"))
        w.add("tokenizer.ggml.token_type_count", MetaValue::u32(2));
    if (v.add_eos) w.add("tokenizer.ggml.add_eos_token", MetaValue::boolean(true));

    Random rng(7);
    const auto add = [&](const std::string &n, std::vector<uint64_t> dims,
                         const std::vector<float> &values) {
        w.add_tensor(n, GgmlType::f32, std::move(dims), f32_bytes(values));
    };
    const uint64_t E = v.embd, F = kFf, Q = uint64_t(v.heads) * v.head_dim,
                   KV = uint64_t(v.heads_kv) * v.head_dim;
    const auto matrix = [&](uint64_t cols, uint64_t rows, double std) {
        return rng.normal(cols * rows, 0.0, std);
    };
    const auto norm = [&](uint64_t n) { return rng.normal(n, 1.0, kStdNorm); };
    const auto bias = [&](uint64_t n) { return rng.normal(n, 0.0, kStdBias); };
    const auto layer_norm = [&](const std::string &n, uint64_t size) {
        add(n + ".weight", {size}, norm(size));
        add(n + ".bias", {size}, bias(size));
    };

    w.add_tensor("token_embd.weight", GgmlType::f16, {E, V},
                 f16_bytes(rng.normal(E * V, 0.0, v.embd_std)));
    if (v.bert) {
        if (v.absolute_positions)
            add("position_embd.weight", {E, v.context}, matrix(E, v.context, 0.5));
        add("token_types.weight", {E, 2}, matrix(E, 2, 0.5));
        layer_norm("token_embd_norm", E);
    } else {
        add("output_norm.weight", {E}, norm(E));
    }
    for (uint32_t l = 0; l < v.layers; ++l) {
        const std::string b = fmt::format("blk.{}.", l);
        if (!v.bert) add(b + "attn_norm.weight", {E}, norm(E));
        if (v.fused_qkv) {
            std::vector<float> qkv = matrix(E, Q + KV, kStdQk);
            const std::vector<float> vv = matrix(E, KV, kStdProj);
            qkv.insert(qkv.end(), vv.begin(), vv.end());
            add(b + "attn_qkv.weight", {E, Q + 2 * KV}, qkv);
        } else {
            add(b + "attn_q.weight", {E, Q}, matrix(E, Q, kStdQk));
            add(b + "attn_k.weight", {E, KV}, matrix(E, KV, kStdQk));
            add(b + "attn_v.weight", {E, KV}, matrix(E, KV, kStdProj));
        }
        if (v.biases) {
            add(b + "attn_q.bias", {Q}, bias(Q));
            add(b + "attn_k.bias", {KV}, bias(KV));
            add(b + "attn_v.bias", {KV}, bias(KV));
        }
        if (v.qk_layer_norm) {
            layer_norm(b + "attn_q_norm", Q);
            layer_norm(b + "attn_k_norm", KV);
        }
        if (v.qk_norm) {
            add(b + "attn_q_norm.weight", {v.head_dim}, norm(v.head_dim));
            add(b + "attn_k_norm.weight", {v.head_dim}, norm(v.head_dim));
        }
        add(b + "attn_output.weight", {Q, E}, matrix(Q, E, kStdProj));
        if (v.biases) add(b + "attn_output.bias", {E}, bias(E));
        if (v.bert) layer_norm(b + "attn_output_norm", E);
        if (v.attn_norm_2) layer_norm(b + "attn_norm_2", E);
        if (v.post_norms) add(b + "post_attention_norm.weight", {E}, norm(E));
        if (!v.bert) add(b + "ffn_norm.weight", {E}, norm(E));
        if (v.ffn == Ffn::gate_up) {
            add(b + "ffn_gate.weight", {E, F}, matrix(E, F, kStdProj));
            add(b + "ffn_up.weight", {E, F}, matrix(E, F, kStdProj));
        } else {
            const uint64_t rows = v.ffn == Ffn::geglu ? 2 * F : F;
            // bert's up projection larger: its GELU then sees inputs past ±10 too.
            add(b + "ffn_up.weight", {E, rows}, matrix(E, rows, v.ffn == Ffn::up ? 0.3 : kStdProj));
            if (v.biases) add(b + "ffn_up.bias", {rows}, bias(rows));
        }
        add(b + "ffn_down.weight", {F, E}, matrix(F, E, kStdProj));
        if (v.biases) add(b + "ffn_down.bias", {E}, bias(E));
        if (v.post_norms) add(b + "post_ffw_norm.weight", {E}, norm(E));
        if (v.bert) layer_norm(b + "layer_output_norm", E);
    }
    if (v.dense) {
        add("dense_2.weight", {E, F}, matrix(E, F, kStdProj));
        add("dense_3.weight", {F, E}, matrix(F, E, kStdProj));
    }
    w.write(path);
}

}  // namespace gguftool::testkit
