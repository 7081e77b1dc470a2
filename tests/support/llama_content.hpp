// A GGUF file of every scalar type, string and numeric arrays and tensors of several types, written
// by llama.cpp's own writer (gguf_write_to_file): the oracle the GGUF writer tests compare with.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/types.hpp"
#include "llama_ref.hpp"

namespace gguftool::testkit {

inline std::vector<LlamaTensor> content_tensors() {
    std::vector<LlamaTensor> specs = {
        {"token_embd.weight", GgmlType::q4_0, {64, 3}, {}},
        {"blk.0.attn_norm.weight", GgmlType::f32, {7}, {}},
        {"blk.0.ffn_up.weight", GgmlType::q6_k, {256, 2}, {}},
        {"blk.0.ffn_down.weight", GgmlType::bf16, {5, 3, 2}, {}},
        {"output.weight", GgmlType::iq4_xs, {256, 1, 1, 2}, {}},
        {"rope_freqs", GgmlType::i64, {3}, {}},
    };
    uint32_t seed = 1;
    for (auto &s : specs) {
        uint64_t n = 1;
        for (int64_t d : s.ne) n *= static_cast<uint64_t>(d);
        s.bytes = testkit::filler(*row_bytes(s.type, n), seed++);
    }
    return specs;
}

inline const std::vector<std::string> kContentTokens = {"<s>", "</s>", "▁the", "", "a b"};
inline const std::vector<float> kContentScores = {0.0f, -1.5f, 2.25f, -0.0f, 1e-7f};
inline const std::vector<int32_t> kContentTokenTypes = {3, 3, 1, 6, 1};

// Writes the test content with llama.cpp's writer (throws when it cannot).
inline void write_content_with_llama(const reference::Ggml &g, const std::string &path,
                                     const std::vector<LlamaTensor> &specs,
                                     bool alignment_key = false) {
    write_with_llama(g, path, specs, [&](const reference::Ggml &, reference::gguf_context *ctx) {
        g.gguf_set_val_str(ctx, "general.architecture", "llama");
        g.gguf_set_val_u8(ctx, "v.u8", 200);
        g.gguf_set_val_i8(ctx, "v.i8", -100);
        g.gguf_set_val_u16(ctx, "v.u16", 60000);
        g.gguf_set_val_i16(ctx, "v.i16", -20000);
        g.gguf_set_val_u32(ctx, "llama.context_length", 4096);
        g.gguf_set_val_i32(ctx, "v.i32", -123456);
        g.gguf_set_val_f32(ctx, "llama.rope.freq_base", 10000.5f);
        g.gguf_set_val_bool(ctx, "v.bool", true);
        g.gguf_set_val_u64(ctx, "v.u64", 1ull << 50);
        g.gguf_set_val_i64(ctx, "v.i64", -(1ll << 50));
        g.gguf_set_val_f64(ctx, "v.f64", -0.125);
        if (alignment_key) g.gguf_set_val_u32(ctx, "general.alignment", 64);
        std::vector<const char *> tokens;
        for (const auto &t : kContentTokens) tokens.push_back(t.c_str());
        g.gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", tokens.data(), tokens.size());
        g.gguf_set_arr_data(ctx, "tokenizer.ggml.scores",
                            static_cast<int>(gguf::ValueType::float32), kContentScores.data(),
                            kContentScores.size());
        g.gguf_set_arr_data(ctx, "tokenizer.ggml.token_type",
                            static_cast<int>(gguf::ValueType::int32), kContentTokenTypes.data(),
                            kContentTokenTypes.size());
        const uint8_t bools[] = {1, 0, 1};
        g.gguf_set_arr_data(ctx, "v.bools", static_cast<int>(gguf::ValueType::bool_), bools, 3);
        g.gguf_set_arr_data(ctx, "v.empty", static_cast<int>(gguf::ValueType::uint16), nullptr, 0);
    });
}

}  // namespace gguftool::testkit
