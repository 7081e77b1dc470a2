// The sample model of testdata/sample.gguf: a tiny two-layer llama with random weights, its
// tensors quantized and the file written by llama.cpp itself (ggml_quantize_chunk and
// gguf_write_to_file, loaded through gguftool::reference::ggml()). The output is deterministic:
// the weights come from the kit's Random (random.hpp).
//
// Also as its F16 source: the same weights with every matrix in f16 (the norms stay f32), the
// input llama.cpp's llama_model_quantize expects (used by tests and the README's diff example).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gguftool/gguf_writer.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"
#include "llama_ref.hpp"
#include "random.hpp"

namespace gguftool::testkit {

// The model's shape.
inline constexpr int64_t kSampleEmbd = 256;
inline constexpr int64_t kSampleFfn = 512;
inline constexpr int64_t kSampleHeads = 4;
inline constexpr int64_t kSampleHeadsKv = 2;
inline constexpr int64_t kSampleHeadDim = kSampleEmbd / kSampleHeads;
inline constexpr int64_t kSampleLayers = 2;

// GGUF metadata value type ids used with gguf_set_arr_data.
inline constexpr int kGgufInt32 = 5;
inline constexpr int kGgufFloat32 = 6;

// The vocabulary of llama's SentencePiece tokenizers in miniature: <unk>, <s>, </s>, the 256 byte
// tokens, then words.
struct Vocab {
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;  // 1 normal, 2 unknown, 3 control, 6 byte

    void add(std::string token, float score, int32_t type) {
        tokens.push_back(std::move(token));
        scores.push_back(score);
        types.push_back(type);
    }
};

// The tokens every such vocabulary starts with: <unk> (0), <s> (1), </s> (2), <0x00>..<0xFF>.
inline Vocab spm_base_vocab() {
    Vocab v;
    v.add("<unk>", 0.0f, 2);
    v.add("<s>", 0.0f, 3);
    v.add("</s>", 0.0f, 3);
    for (int b = 0; b < 256; ++b) v.add(fmt::format("<0x{:02X}>", b), 0.0f, 6);
    return v;
}

// Its tokenizer.ggml.* metadata through the project's writer (unknown 0, BOS 1, EOS 2, BOS added).
inline void add_spm_metadata(gguf::Writer &w, const Vocab &vocab) {
    using gguf::MetaValue;
    w.add("tokenizer.ggml.model", MetaValue::str("llama"));
    w.add("tokenizer.ggml.tokens", MetaValue::array_of(vocab.tokens));
    w.add("tokenizer.ggml.scores", MetaValue::array_of(vocab.scores));
    w.add("tokenizer.ggml.token_type", MetaValue::array_of(vocab.types));
    w.add("tokenizer.ggml.unknown_token_id", MetaValue::u32(0));
    w.add("tokenizer.ggml.bos_token_id", MetaValue::u32(1));
    w.add("tokenizer.ggml.eos_token_id", MetaValue::u32(2));
    w.add("tokenizer.ggml.add_bos_token", MetaValue::boolean(true));
    w.add("tokenizer.ggml.add_eos_token", MetaValue::boolean(false));
}

inline Vocab sample_vocab() {
    Vocab v = spm_base_vocab();
    const auto add = [&](std::string t, float score, int32_t type) {
        v.add(std::move(t), score, type);
    };
    static const char *kWords[] = {
        "the",  "of",    "and",    "to",    "a",      "in",    "is",    "that",  "for",   "it",
        "as",   "was",   "with",   "be",    "by",     "on",    "not",   "he",    "this",  "are",
        "or",   "his",   "from",   "at",    "which",  "but",   "have",  "an",    "had",   "they",
        "you",  "were",  "their",  "one",   "all",    "we",    "can",   "her",   "has",   "there",
        "been", "if",    "more",   "when",  "will",   "would", "who",   "so",    "no",    "gguf",
        "tool", "model", "tensor", "llama", "weight", "quant", "block", "scale", "héllo", "世界"};
    float score = -1.0f;
    for (const char *w : kWords) add(std::string("\xE2\x96\x81") + w, score--, 1);  // "▁" + word
    add("!", score--, 1);
    return v;
}

// Which types the matrices are written in.
enum class SampleTypes {
    mixed,  // testdata/sample.gguf: a different type for nearly every matrix
    f16,    // every matrix f16: the unquantized source
};

struct SampleTensor {
    std::string name;
    GgmlType type;
    int64_t ne0, ne1;  // ne1 == 0: a vector
    bool norm;         // weights around 1 instead of 0
};

inline std::vector<SampleTensor> sample_tensors(int64_t vocab, SampleTypes types) {
    std::vector<SampleTensor> s = {
        {"token_embd.weight", GgmlType::q4_k, kSampleEmbd, vocab, false},
        {"output_norm.weight", GgmlType::f32, kSampleEmbd, 0, true},
        {"output.weight", GgmlType::q6_k, kSampleEmbd, vocab, false},
    };
    // Layer by layer: attention q, k, v, output, then feed-forward gate, up, down.
    const GgmlType kLayerTypes[kSampleLayers][7] = {
        {GgmlType::q4_0, GgmlType::f16, GgmlType::bf16, GgmlType::q8_0, GgmlType::q4_k,
         GgmlType::q5_k, GgmlType::q6_k},
        {GgmlType::q4_1, GgmlType::q5_0, GgmlType::q5_1, GgmlType::iq4_nl, GgmlType::q2_k,
         GgmlType::q3_k, GgmlType::iq4_xs},
    };
    for (int l = 0; l < kSampleLayers; ++l) {
        const auto *t = kLayerTypes[l];
        const std::string b = fmt::format("blk.{}.", l);
        s.push_back({b + "attn_norm.weight", GgmlType::f32, kSampleEmbd, 0, true});
        s.push_back({b + "attn_q.weight", t[0], kSampleEmbd, kSampleEmbd, false});
        s.push_back(
            {b + "attn_k.weight", t[1], kSampleEmbd, kSampleHeadsKv * kSampleHeadDim, false});
        s.push_back(
            {b + "attn_v.weight", t[2], kSampleEmbd, kSampleHeadsKv * kSampleHeadDim, false});
        s.push_back({b + "attn_output.weight", t[3], kSampleEmbd, kSampleEmbd, false});
        s.push_back({b + "ffn_norm.weight", GgmlType::f32, kSampleEmbd, 0, true});
        s.push_back({b + "ffn_gate.weight", t[4], kSampleEmbd, kSampleFfn, false});
        s.push_back({b + "ffn_up.weight", t[5], kSampleEmbd, kSampleFfn, false});
        s.push_back({b + "ffn_down.weight", t[6], kSampleFfn, kSampleEmbd, false});
    }
    if (types == SampleTypes::f16)
        for (SampleTensor &t : s)
            if (t.ne1) t.type = GgmlType::f16;
    return s;
}

// Writes the model to `path`; false if llama.cpp's writer fails.
inline bool write_sample(const reference::Ggml &g, const std::string &path,
                         SampleTypes types = SampleTypes::mixed) {
    const Vocab vocab = sample_vocab();
    const auto n_vocab = static_cast<int64_t>(vocab.tokens.size());
    std::vector<LlamaTensor> tensors;
    Random random(20240601);
    for (const SampleTensor &s : sample_tensors(n_vocab, types)) {
        const int64_t rows = s.ne1 ? s.ne1 : 1;
        std::vector<float> w(size_t(s.ne0 * rows));
        for (float &x : w)
            x = float(s.norm ? 1.0 + 0.05 * random.normal_paired() : 0.02 * random.normal_paired());
        LlamaTensor &t = tensors.emplace_back();
        t.name = s.name;
        t.type = s.type;
        t.ne = s.ne1 ? std::vector<int64_t>{s.ne0, s.ne1} : std::vector<int64_t>{s.ne0};
        t.bytes.resize(size_t(*row_bytes(s.type, uint64_t(s.ne0)) * rows));
        g.quantize_chunk(int(s.type), w.data(), t.bytes.data(), 0, rows, s.ne0, nullptr);
    }
    const LlamaMetadata metadata = [&](const reference::Ggml &, reference::gguf_context *ctx) {
        g.gguf_set_val_str(ctx, "general.architecture", "llama");
        g.gguf_set_val_str(ctx, "general.name", "gguftool sample (tiny llama, random weights)");
        // LLAMA_FTYPE_MOSTLY_Q4_K_M (the mixture is close to it), LLAMA_FTYPE_MOSTLY_F16
        g.gguf_set_val_u32(ctx, "general.file_type", types == SampleTypes::f16 ? 1 : 15);
        g.gguf_set_val_u32(ctx, "general.quantization_version", 2);
        g.gguf_set_val_u32(ctx, "llama.vocab_size", uint32_t(n_vocab));
        g.gguf_set_val_u32(ctx, "llama.context_length", 512);
        g.gguf_set_val_u32(ctx, "llama.embedding_length", kSampleEmbd);
        g.gguf_set_val_u32(ctx, "llama.block_count", kSampleLayers);
        g.gguf_set_val_u32(ctx, "llama.feed_forward_length", kSampleFfn);
        g.gguf_set_val_u32(ctx, "llama.attention.head_count", kSampleHeads);
        g.gguf_set_val_u32(ctx, "llama.attention.head_count_kv", kSampleHeadsKv);
        g.gguf_set_val_u32(ctx, "llama.rope.dimension_count", kSampleHeadDim);
        g.gguf_set_val_f32(ctx, "llama.rope.freq_base", 10000.0f);
        g.gguf_set_val_f32(ctx, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
        g.gguf_set_val_str(ctx, "tokenizer.ggml.model", "llama");
        std::vector<const char *> token_ptrs;
        for (const std::string &t : vocab.tokens) token_ptrs.push_back(t.c_str());
        g.gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", token_ptrs.data(), token_ptrs.size());
        g.gguf_set_arr_data(ctx, "tokenizer.ggml.scores", kGgufFloat32, vocab.scores.data(),
                            vocab.scores.size());
        g.gguf_set_arr_data(ctx, "tokenizer.ggml.token_type", kGgufInt32, vocab.types.data(),
                            vocab.types.size());
        g.gguf_set_val_u32(ctx, "tokenizer.ggml.unknown_token_id", 0);
        g.gguf_set_val_u32(ctx, "tokenizer.ggml.bos_token_id", 1);
        g.gguf_set_val_u32(ctx, "tokenizer.ggml.eos_token_id", 2);
        g.gguf_set_val_bool(ctx, "tokenizer.ggml.add_bos_token", true);
        g.gguf_set_val_bool(ctx, "tokenizer.ggml.add_eos_token", false);
        g.gguf_set_val_str(ctx, "tokenizer.chat_template",
                           "{% for message in messages %}{{ message['role'] }}: "
                           "{{ message['content'] }}\n{% endfor %}");
    };
    try {
        write_with_llama(g, path, tensors, metadata);
    } catch (const std::runtime_error &) {
        return false;
    }
    return true;
}

}  // namespace gguftool::testkit
