// Inside lib/tokenizer: the tokenizer.ggml.pre table (pre_tokenizers.cpp) and the UTF-8 check.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gguftool::tokenizer::detail {

// What llama.cpp's loader sets for a pre-tokenizer name (llama_vocab::impl::load), beyond the BPE
// defaults (clean_spaces on, add_bos off, merges applied, GPT-2 byte-level encoding).
struct PreFlags {
    bool clean_spaces = true;
    bool ignore_merges = false;
    bool add_bos = false;  // true: add_bos defaults to true (the add_bos_token key still wins)
    bool add_sep = false;
    bool no_bos = false;              // the default BOS id is unset (glm4)
    bool raw_utf8 = false;            // no byte-level encoding; spaces escaped as U+2581
    bool newline_runs_whole = false;  // a newline-only piece that is a token is kept whole
    bool force_add_bos = false;       // add_bos on whatever the key says (Gemma 4)
};

struct PreRow {
    std::vector<std::string_view> names;
    const std::vector<std::string_view> *regexes;  // llama.cpp's regex_exprs, verbatim
    PreFlags flags;
    std::string_view refused = {};  // non-empty: why no tokenizer.json reproduces it
};

// The row whose names include `name` (the empty name: a GGUF without tokenizer.ggml.pre, which
// llama.cpp reads as "default"); nullptr for a name llama.cpp 0.5.0 does not know.
const PreRow *find_pre(std::string_view name);
// Its Split regexes, as llama.cpp reads them.
std::vector<std::string> split_regexes(const PreRow &row);
const std::vector<PreRow> &pre_rows();

// The length of the longest well-formed UTF-8 prefix of `s` (no overlong forms, surrogates or code
// points past U+10FFFF): s.size() when all of it is (vocab.cpp).
size_t utf8_valid_prefix(std::string_view s);
inline bool valid_utf8(std::string_view s) {
    return utf8_valid_prefix(s) == s.size();
}

}  // namespace gguftool::tokenizer::detail
