// `gguftool verify MODEL.gguf --decoder DIR`: an exported decoder (decoder_export.hpp) run by the
// executor against llama.cpp itself (libllama, loaded at run time) on the same GGUF: a prefill of
// the prompt, then single-token steps through the KV cache. Both sides are fed the same tokens:
// the prompt, then llama.cpp's greedy choice at each step.
//
// llama.cpp runs with an F32 KV cache, flash attention off and no weight repacking; it still
// rounds activations to fp16 for F16 weights and quantizes them to Q8_0/Q8_K for quantized ones
// (the weight type's vec_dot_type in ggml/src/ggml-cpu/ggml-cpu.c), so the tolerance depends on the
// weights' types (Tolerance below).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gguftool/runtime/session.hpp"

namespace gguftool::verify {

// Per step: the logits of every position the step fed, compared row by row.
struct DecoderStep {
    int index = 0;        // 0: the prefill
    int positions = 0;    // rows compared
    double max_abs = 0;   // max |Δlogit|
    double spread = 0;    // smallest (max - min) of llama.cpp's rows
    double relative = 0;  // max over rows of max|Δ| / that row's spread
    double kl = 0;        // max over rows of KL(llama.cpp ‖ ours), nats
    int top1_agree = 0;   // rows whose argmax agrees
    bool pass = false;
};

// Bounds a step must keep: relative max |Δ| and KL divergence per row, and every argmax equal
// unless both logits are within `relative` of a tie.
struct Tolerance {
    std::string weights;  // "f32", "f16" (f16/bf16 weights), "quantized"
    double relative = 0;
    double kl = 0;
};
// The tolerance for a GGUF's weights: the loosest kind among its 2-D weights.
Tolerance decoder_tolerance(const std::string &gguf_path);

struct DecoderVerifyOptions {
    std::vector<int32_t> ids;  // the prompt as token ids; empty: `prompt` tokenized by llama.cpp
    std::string prompt;
    int steps = 4;         // single-token steps after the prefill
    unsigned threads = 0;  // both sides (0: all cores)
    std::string backend = "cpu";
    int device = 0;                      // for a backend with devices
    std::optional<Tolerance> tolerance;  // default: decoder_tolerance(gguf)
    // Called once the session is made, with where its nodes run (the CPU for what the backend
    // cannot run).
    std::function<void(const std::vector<runtime::NodePlacement> &)> on_placement;
};

struct DecoderReport {
    std::vector<int32_t> tokens;  // prompt, then the generated ones
    int prompt_tokens = 0;
    Tolerance tolerance;
    std::vector<DecoderStep> steps;
    bool pass = false;
};

// Throws gguftool::Error (a file that cannot be read, libllama missing, a graph that does not run).
DecoderReport verify_decoder(const std::string &gguf_path, const std::string &package_dir,
                             const DecoderVerifyOptions &options);

}  // namespace gguftool::verify
