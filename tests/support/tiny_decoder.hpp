// Tiny random decoder models, one variant per llama.cpp feature set: F32 GGUF files written by
// our own writer (gguf::Writer) that llama.cpp loads, runs and quantizes. For tests comparing a
// whole-decoder export's logits with llama.cpp's.
//
// Shapes: n_embd 256, 4 heads, 2 KV heads, head size 64 (qwen3: 128), n_ff 512, vocabulary 384
// (an SPM vocabulary: <unk> <s> </s>, the 256 byte tokens, then pieces), so every matrix's ne[0]
// is a multiple of 256 and llama.cpp's quantizer can make K-quants and IQ4_XS of all of them.
// Weights are deterministic from the seed (std::mt19937 and our own Box-Muller transform).
// The values that only matter past some position or score (sliding window, soft-caps, YaRN's
// original context, attention temperature) are chosen small so that a 12-token sequence
// shows them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gguftool::testkit {

// What a variant is, for test names and messages.
struct TinyDecoder {
    std::string name;      // "llama", "gemma2", ...
    std::string arch;      // general.architecture
    uint32_t n_layer = 0;  // block_count
    uint32_t n_embd = 0;
    uint32_t n_head = 0, n_head_kv = 0;
    uint32_t n_vocab = 0;
    uint32_t head_dim = 0;  // attention.key_length (= value_length)
    uint32_t n_rot = 0;     // rope.dimension_count
    bool tied = false;      // no output.weight: token_embd is the head
    std::string features;   // what it has beyond the plain decoder, e.g. "qkv bias, neox, tied"
};

// Every variant: llama, llama-tied-bias, llama3, mistral3, qwen2, qwen3, gemma, gemma2, gemma3,
// phi3, smollm3, olmo2, granite, granitemoe, mixtral, qwen2moe, qwen3moe, gpt-oss.
std::vector<std::string> tiny_decoder_names();

// The variant `name`. Throws std::invalid_argument for an unknown name.
TinyDecoder tiny_decoder(std::string_view name);

// Writes the variant `name` as an F32 GGUF file to `path` (the same bytes for the same seed; 0:
// the variant's own).
// Throws std::invalid_argument for an unknown name, gguftool::Error when the file cannot be
// written.
void write_tiny_decoder(std::string_view name, const std::string &path, uint32_t seed = 0);

}  // namespace gguftool::testkit
