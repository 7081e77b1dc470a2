// Text generation from a decoder package (to-onnx --graph decoder): the prompt through the
// executor's session, then one token at a time through the KV cache (present.* fed back as
// past_key_values.*), each token chosen from the last position's logits, until an
// end-of-generation id (the package's generation_config.json: llama.cpp's llama_vocab_is_eog set)
// or the token budget. Prompts as text are encoded, and the generated ids decoded, by the
// package's tokenizer.json (gguftool/tokenizer.hpp).
//
// Sampling follows llama.cpp's default chain in its order (common/sampling.cpp: top-k, top-p,
// temperature, then a draw): temperature 0 is greedy (the first largest logit, as
// llama_sampler_greedy); else the top_k largest logits (0: all), the smallest set of those whose
// softmax reaches top_p (1: all), the logits divided by the temperature, softmax, and one draw
// from std::mt19937_64 seeded with `seed` (a uniform double from its top 53 bits: the same seed,
// the same tokens, on every standard library).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/runtime/session.hpp"

namespace gguftool::generate {

struct Sampling {
    float temperature = 0;  // 0: greedy
    int top_k = 0;          // 0: every token
    float top_p = 1;        // 1: every token
    uint64_t seed = 0;
};

struct Options {
    std::vector<int32_t> ids;  // the prompt as ids, or
    std::string prompt;        // as text (encoded with the package's special tokens)
    int max_new = 128;         // tokens to generate at most
    Sampling sampling;
    std::string backend = "cpu";
    int device = 0;
    unsigned threads = 0;
    // Called with each piece of text as the generated ids decode to it (whole UTF-8 characters;
    // text that may still change with the next token is held back until it cannot).
    std::function<void(std::string_view)> on_text;
    // Called once the session is made, with where its nodes run.
    std::function<void(const std::vector<runtime::NodePlacement> &)> on_placement;
};

struct Result {
    std::vector<int32_t> prompt_ids;
    std::vector<int32_t> ids;  // generated, the end-of-generation id included when it came
    std::string text;          // the generated ids decoded (special tokens left out); "" without
                               // a tokenizer.json
    bool stopped = false;      // at an end-of-generation id (else the budget ran out)
    double prompt_s = 0;       // the prefill's time
    double decode_s = 0;       // the single-token steps' time
    int steps = 0;             // single-token steps run
    double prompt_tokens_per_s() const { return prompt_s > 0 ? prompt_ids.size() / prompt_s : 0; }
    double tokens_per_s() const { return decode_s > 0 ? steps / decode_s : 0; }
};

// Throws gguftool::Error: a package that cannot be read (no onnx/model.onnx, a graph without
// input_ids or logits, a tokenizer.json that cannot be read when the prompt is text), an id
// outside the vocabulary, a prompt longer than the model's context.
Result generate(const std::string &package_dir, const Options &options);

// The choice of `sampling` among `logits` (n_vocab values), drawing from `rng` (unused when
// greedy): exposed for tests.
int32_t sample(const float *logits, int64_t n_vocab, const Sampling &sampling,
               std::mt19937_64 &rng);

}  // namespace gguftool::generate
