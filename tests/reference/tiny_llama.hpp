// A tiny F32 llama for the libllama reference tests, written with the project's own GGUF writer
// (gguf::Writer): n_embd 64, one layer, 4 heads (2 K/V heads, head size 16), feed-forward 128, and
// the SentencePiece vocabulary of sample_model.hpp (<unk>, <s>, </s>, the 256 byte tokens, 60
// words, "!") and the pieces that make one word reachable by merging ("▁", "▁t", "▁th": "the" is
// one token, 259; other words are "▁" and bytes): 323 tokens. Weights are seeded normal variates,
// large enough that the logits spread over several units. F32 throughout, so that llama.cpp
// computes in f32 (MODEL-FACTS §1.9).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "floats.hpp"
#include "gguftool/gguf_writer.hpp"
#include "sample_model.hpp"

namespace gguftool::tiny_llama {

inline constexpr uint32_t kEmbd = 64;
inline constexpr uint32_t kFfn = 128;
inline constexpr uint32_t kHeads = 4;
inline constexpr uint32_t kHeadsKv = 2;
inline constexpr uint32_t kHeadDim = kEmbd / kHeads;
inline constexpr uint32_t kLayers = 1;

// Writes the model to `path` (throws gguftool::Error). `seed` picks the weights.
inline void write(const std::string &path, uint32_t seed = 1234) {
    using gguf::MetaValue;
    testkit::Vocab vocab = testkit::sample_vocab();
    for (const char *piece : {"\xE2\x96\x81", "\xE2\x96\x81t", "\xE2\x96\x81th"})
        vocab.add(piece, -100.0f, 1);
    const auto n_vocab = uint32_t(vocab.tokens.size());
    gguf::Writer w;
    w.add("general.architecture", MetaValue::str("llama"));
    w.add("general.name", MetaValue::str("gguftool tiny llama (f32, random weights)"));
    w.add("general.file_type", MetaValue::u32(0));  // LLAMA_FTYPE_ALL_F32
    w.add("llama.vocab_size", MetaValue::u32(n_vocab));
    w.add("llama.context_length", MetaValue::u32(512));
    w.add("llama.embedding_length", MetaValue::u32(kEmbd));
    w.add("llama.block_count", MetaValue::u32(kLayers));
    w.add("llama.feed_forward_length", MetaValue::u32(kFfn));
    w.add("llama.attention.head_count", MetaValue::u32(kHeads));
    w.add("llama.attention.head_count_kv", MetaValue::u32(kHeadsKv));
    w.add("llama.rope.dimension_count", MetaValue::u32(kHeadDim));
    w.add("llama.rope.freq_base", MetaValue::f32(10000.0f));
    w.add("llama.attention.layer_norm_rms_epsilon", MetaValue::f32(1e-5f));
    testkit::add_spm_metadata(w, vocab);

    testkit::Normal normal(seed);
    // A matrix of ne1 rows of ne0 (ggml order), or a norm vector (ne1 == 0) around 1.
    const auto tensor = [&](const std::string &name, uint32_t ne0, uint32_t ne1, double scale) {
        std::vector<float> v(size_t(ne0) * (ne1 ? ne1 : 1));
        for (float &x : v) x = float(ne1 ? scale * normal() : 1.0 + 0.1 * normal());
        std::vector<uint64_t> dims = {ne0};
        if (ne1) dims.push_back(ne1);
        w.add_tensor(name, GgmlType::f32, dims, testkit::f32_bytes(v));
    };
    // Matrices scaled by 1/sqrt(fan in) (times 2 for the output, to spread the logits).
    const double in_e = 1.0 / std::sqrt(double(kEmbd)), in_f = 1.0 / std::sqrt(double(kFfn));
    tensor("token_embd.weight", kEmbd, n_vocab, 1.0);
    tensor("output_norm.weight", kEmbd, 0, 0);
    tensor("output.weight", kEmbd, n_vocab, 2 * in_e);
    for (uint32_t l = 0; l < kLayers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        tensor(b + "attn_norm.weight", kEmbd, 0, 0);
        tensor(b + "attn_q.weight", kEmbd, kEmbd, 2 * in_e);
        tensor(b + "attn_k.weight", kEmbd, kHeadsKv * kHeadDim, 2 * in_e);
        tensor(b + "attn_v.weight", kEmbd, kHeadsKv * kHeadDim, in_e);
        tensor(b + "attn_output.weight", kEmbd, kEmbd, in_e);
        tensor(b + "ffn_norm.weight", kEmbd, 0, 0);
        tensor(b + "ffn_gate.weight", kEmbd, kFfn, in_e);
        tensor(b + "ffn_up.weight", kEmbd, kFfn, in_e);
        tensor(b + "ffn_down.weight", kFfn, kEmbd, in_f);
    }
    w.write(path);
}

}  // namespace gguftool::tiny_llama
