// A GGUF vocabulary (tokenizer.ggml.* metadata) as Hugging Face's tokenizer.json and
// tokenizer_config.json (plus special_tokens_map.json), built to tokenize exactly as llama.cpp
// does (its 0.5.0 release): llama.cpp's load-time rules applied (token-type overrides, default
// special ids and add flags per model and pre-tokenizer, lstrip/rstrip), then each model type in
// the tokenizer.json shape that reproduces its algorithm:
//
//   llama (SPM)  BPE with byte fallback, merges made from the scores (higher merged-token score
//                first), normalizer Prepend("▁") (if add_space_prefix) + Replace(" " -> "▁"),
//                no pre-tokenizer;
//   gpt2 (BPE)   one Split per llama.cpp regex of the tokenizer.ggml.pre (its adapted form),
//                then ByteLevel; ignore_merges where llama.cpp sets it;
//   gemma4       BPE over raw UTF-8 with byte fallback, spaces as "▁", split at newlines;
//   bert (WPM)   WordPiece ("##" continuations from llama.cpp's phantom-space form), BertNormalizer
//                and BertPreTokenizer;
//   t5 (UGM)     Unigram with llama.cpp's Viterbi scores, no byte fallback, normalizer Precompiled
//                (the GGUF's charsmap) and the whitespace rules as Replace, Split and Metaspace
//                (the differences no tokenizer.json avoids: man/gguftool-tokenizer.1).
//
// What no tokenizer.json can reproduce (RWKV, PLaMo-2, llama.cpp's custom splitters such as
// kimi-k2's, the whitespace model) is refused with an Error saying which and why; so is bad input
// (arrays of different lengths, a token that is not UTF-8, a duplicate token, a malformed merge, a
// special id out of range, an unknown pre-tokenizer, a charsmap that is not whole), naming the key
// and index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguftool/gguf.hpp"

namespace gguftool::tokenizer {

// The three documents, as JSON text (UTF-8). special_tokens_map is what Python transformers reads
// beside tokenizer_config.json; transformers.js needs only the first two.
struct TokenizerFiles {
    std::string tokenizer_json;
    std::string tokenizer_config_json;
    std::string special_tokens_map_json;
};

// Builds the documents from the model's metadata (its first shard; tensors are not read, so a
// vocab-only GGUF works). Throws gguftool::Error naming the file, the key and the index.
TokenizerFiles build_tokenizer_files(const gguf::Model &model);

// Writes tokenizer.json, tokenizer_config.json and special_tokens_map.json into `dir`, which must
// exist. Everything is built before anything is written; each file appears whole or not at all
// (gguftool::OutputFile). Throws gguftool::Error naming the file, key and index.
void write_tokenizer_files(const gguf::Model &model, const std::string &dir);
// The same with documents already built.
void write_tokenizer_files(const TokenizerFiles &files, const std::string &dir);

// llama.cpp's end-of-generation ids for the vocabulary (llama_vocab::impl::load's special_eog_ids,
// what llama_vocab_is_eog answers true for), ascending: the EOS, EOT and EOM ids, the FIM pad,
// repo and separator ids, and every token with an end-of-generation text (<|eot_id|>, <|im_end|>,
// <|endoftext|>, <end_of_turn>, ...), less <|end|> beside <|return|> and <|call|> (o200k_harmony)
// or <|calls|> and <|flush|> (solar-open), and less </s> beside <|tool_response> (gemma4).
// Throws gguftool::Error as build_tokenizer_files does.
std::vector<int32_t> end_of_generation_ids(const gguf::File &file);

// A vocabulary's summary, as llama.cpp resolves it (defaults applied): for dump and messages.
struct TokenizerSummary {
    std::string model;        // tokenizer.ggml.model
    std::string pre;          // tokenizer.ggml.pre ("" when absent)
    uint64_t vocab_size = 0;  // tokenizer.ggml.tokens
    std::vector<std::pair<std::string, int64_t>> special_ids;  // "bos", "eos", ...: set ones only
    bool add_bos = false, add_eos = false, add_sep = false, add_space_prefix = false;
    bool chat_template = false;  // tokenizer.chat_template is present
    // "" when the special ids and add flags above are known (llama.cpp's defaults for the model
    // and pre-tokenizer, then the keys), else why not (an unknown model, an id out of range...).
    std::string problem;
};
// nullopt when the file has no tokenizer.ggml.model; never throws: a problem goes into `problem`.
// Reads no token's text (fast on any vocabulary): whether `gguftool tokenizer` can export the
// vocabulary is its own question (build_tokenizer_files).
std::optional<TokenizerSummary> summarize_tokenizer(const gguf::File &file);

// The tokenizer.ggml.pre names `gguftool tokenizer` exports for model gpt2, and those it refuses
// with the reason (for the documentation and the tests).
std::vector<std::string> supported_pre_tokenizers();
std::vector<std::pair<std::string, std::string>> refused_pre_tokenizers();

}  // namespace gguftool::tokenizer
