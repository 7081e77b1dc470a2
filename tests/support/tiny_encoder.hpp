// Tiny random embedding models, one per encoder architecture (bert, nomic-bert, jina-bert-v2,
// gemma-embedding, and qwen3 as Qwen3-Embedding uses it): GGUF files written by our own writer
// with a real vocabulary (its tokenizer.* keys copied from one of llama.cpp's
// models/ggml-vocab-*.gguf, testkit::llama_vocab_dir()), which llama.cpp loads, embeds with and
// quantizes. For tests comparing an encoder export with llama.cpp's embeddings.
//
// Shapes: n_embd 256 (jina-bert-v2: 384, for 6 heads: ALiBi's second series of slopes), head size
// 64 (qwen3: 128), n_ff 512. The token embedding is F16 (it is only gathered, so exact either way,
// and half the size of a 30-50k-token vocabulary's F32 table); every other weight F32.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gguftool::testkit {

struct TinyEncoder {
    std::string name;     // "bert", "nomic-bert", ...
    std::string arch;     // general.architecture
    std::string vocab;    // the ggml-vocab-<vocab>.gguf its tokenizer comes from
    std::string pooling;  // "mean", "cls" or "last"
    std::string features;
};

std::vector<std::string> tiny_encoder_names();
TinyEncoder tiny_encoder(std::string_view name);

// Writes the variant `name` to `path` (the same bytes every time). Throws std::invalid_argument
// for an unknown name, std::runtime_error when the vocabulary cannot be had, gguftool::Error when
// the file cannot be written.
void write_tiny_encoder(std::string_view name, const std::string &path);

}  // namespace gguftool::testkit
