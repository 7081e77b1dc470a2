// Inside lib/tokenizer: a GGUF vocabulary as llama.cpp 0.5.0 loads it (llama_vocab::impl::load):
// the keys read and checked, the defaults per model type and pre-tokenizer applied, and every
// token's final attributes after llama.cpp's load-time overrides.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gguftool/gguf.hpp"
#include "tokenizer_impl.hpp"

namespace gguftool::tokenizer::detail {

// llama_token_attr bits (llama.h).
enum Attr : uint32_t {
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrLstrip = 1u << 7,
    kAttrRstrip = 1u << 8,
};

enum class Kind { spm, bpe, wpm, ugm };

struct Vocab {
    std::string file;
    std::string model;  // tokenizer.ggml.model
    std::string pre;    // tokenizer.ggml.pre as written ("" when absent)
    Kind kind = Kind::spm;
    const PreRow *pre_row = nullptr;  // BPE only
    std::vector<std::string> tokens;  // empty ones as llama.cpp renames them: [EMPTY_<i>]
    std::vector<float> scores;
    std::vector<uint32_t> attrs;                              // final llama_token_attr
    std::vector<std::pair<std::string, std::string>> merges;  // BPE
    std::map<std::string, int64_t> ids;  // "bos", "eos", "unk", ...: the set ones
    // llama.cpp's end-of-generation set (special_eog_ids: llama_vocab_is_eog), ascending.
    std::vector<int64_t> eog;
    bool add_bos = false, add_eos = false, add_sep = false, add_space_prefix = false;
    bool clean_spaces = false, ignore_merges = false;
    bool remove_extra_whitespaces = false;  // UGM's whitespace handling
    std::string charsmap;  // UGM: tokenizer.ggml.precompiled_charsmap's bytes ("" when absent)
    bool lowercase = false, strip_accents = false;  // WPM's normalizer
    std::string chat_template;                      // "" when absent
    std::vector<std::pair<std::string, std::string>> named_templates;
    std::optional<uint64_t> context_length;

    int64_t id(const std::string &name) const {
        const auto it = ids.find(name);
        return it == ids.end() ? -1 : it->second;
    }
};

// UGM: the token's score in llama.cpp's Viterbi lattice (llm_tokenizer_ugm holds the NORMAL,
// USER_DEFINED and UNUSED tokens, a USER_DEFINED one scored 0), nullopt for a token outside it.
inline std::optional<double> ugm_lattice_score(const Vocab &v, size_t i) {
    if (v.attrs[i] & kAttrUserDefined) return 0.0;
    if (v.attrs[i] & (kAttrNormal | kAttrUnused)) return double(v.scores[i]);
    return std::nullopt;
}

// Reads and checks the vocabulary. Throws gguftool::Error naming the file, key and index, also
// for a model type or pre-tokenizer no tokenizer.json reproduces (saying why).
Vocab read_vocab(const gguf::File &file);
// Only what needs no token's text: the model, the pre-tokenizer, the special ids from the
// defaults and the keys, the add flags and normalizer options (tokens, scores, merges and the
// overrides by text left out). Throws Error as read_vocab does for those.
Vocab read_settings(const gguf::File &file);

// The documents (JSON text).
std::string tokenizer_json(const Vocab &v);
std::string tokenizer_config_json(const Vocab &v);
std::string special_tokens_map_json(const Vocab &v);

}  // namespace gguftool::tokenizer::detail
