// `gguftool verify MODEL.gguf --encoder DIR`: an exported encoder package (to-onnx --graph
// encoder) run by the executor against llama.cpp's embeddings on the same GGUF (libllama with
// embeddings on: llama_get_embeddings_ith per token with pooling none, llama_get_embeddings_seq
// with the model's pooling). The prompt and its first half run as one padded batch of two, so the
// padding and the positions counted from attention_mask are checked too; llama.cpp decodes each
// sequence on its own.
//
// llama.cpp rounds as it does for decoders (F16 weights: fp16 activations; quantized weights:
// Q8_0/Q8_K activations), and on the CPU its GELU reads an fp16 table, which the export copies
// (decoder_graph.cpp, activation()); the tolerance depends on the weights' types.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gguftool/runtime/session.hpp"

namespace gguftool::verify {

// How far the graph's vectors are from llama.cpp's: max |Δ| over the compared values, relative to
// the spread of llama.cpp's (max - min), and the smallest cosine similarity of two vectors.
struct EncoderDiff {
    int vectors = 0;  // compared
    double max_abs = 0;
    double spread = 0;
    double relative = 0;
    double min_cosine = 1;
    bool pass = false;
};

// Bounds a comparison must keep: relative max |Δ| and the cosine similarity.
struct EncoderTolerance {
    std::string weights;  // "f32", "f16" (f16/bf16 weights), "quantized"
    double relative = 0;
    double cosine = 0;
};
// The tolerance for a GGUF's weights: the loosest kind among its matrices (not the token
// embedding: its rows are gathered, not multiplied).
EncoderTolerance encoder_tolerance(const std::string &gguf_path);

struct EncoderVerifyOptions {
    std::vector<int32_t> ids;  // the sequence as token ids; empty: `prompt` tokenized by llama.cpp
    std::string prompt;
    unsigned threads = 0;  // both sides (0: all cores)
    std::string backend = "cpu";
    int device = 0;
    std::optional<EncoderTolerance> tolerance;  // default: encoder_tolerance(gguf)
    std::function<void(const std::vector<runtime::NodePlacement> &)> on_placement;
};

struct EncoderReport {
    std::vector<int32_t> tokens;  // the first sequence (the second is its first half)
    std::string pooling;          // "none", "mean", "cls" or "last"
    EncoderTolerance tolerance;
    EncoderDiff tokens_diff;  // last_hidden_state against the per-token embeddings
    EncoderDiff pooled_diff;  // sentence_embedding against the pooled ones (vectors 0: no pooling)
    bool pass = false;
};

// Throws gguftool::Error (a file that cannot be read, libllama missing, a graph that does not run
// or lacks its outputs).
EncoderReport verify_encoder(const std::string &gguf_path, const std::string &package_dir,
                             const EncoderVerifyOptions &options);

}  // namespace gguftool::verify
