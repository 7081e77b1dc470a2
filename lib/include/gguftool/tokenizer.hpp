// A tokenizer.json interpreter: encodes text to ids and decodes ids to text in C++ as Hugging
// Face's tokenizers library (its Rust crate, the reference of the format) does, from a package's
// tokenizer.json (with tokenizer_config.json, and generation_config.json for where generation
// stops). It implements the components gguftool's exporter writes (gguftool/tokenizer_export.hpp)
// and the common ones beside them:
//
//   normalizers      Sequence, Prepend, Replace (string or regex), Precompiled (SentencePiece's
//                    charsmap), BertNormalizer, Strip, StripAccents, Lowercase, NFC, NFD, NFKC,
//                    NFKD, ByteLevel;
//   pre-tokenizers   Sequence, Split (string or regex; every behaviour; invert), ByteLevel,
//                    Metaspace, BertPreTokenizer;
//   models           BPE (merges, byte_fallback, ignore_merges, unk fusing, continuing-subword
//                    prefix and end-of-word suffix), WordPiece, Unigram (Viterbi);
//   post-processors  TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence;
//   decoders         Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace,
//                    WordPiece;
//   added tokens     special or not, lstrip, rstrip, normalized (single_word is refused).
//
// Anything else (another type, a truncation or padding setting) is refused with an Error naming the
// file and the JSON path of the component. Regexes run in PCRE2 (UTF, Unicode properties, JIT where
// available) with Oniguruma's meaning, as the Rust crate runs them: ^ and $ at line ends, .
// matching a newline, \s with U+0085, \w with marks and all numbers, \h a hex digit; every match is
// bounded (PCRE2's match and depth limits: an Error, never a hang). Unicode categories,
// normalization forms and grapheme clusters come from utf8proc.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguftool::tokenizer {

class Tokenizer {
public:
    // The tokenizer of a package directory: DIR/tokenizer.json, DIR/tokenizer_config.json (if
    // present: add_bos_token/add_eos_token where tokenizer.json has no post-processor) and the
    // end-of-generation ids of DIR/generation_config.json (else config.json, else
    // tokenizer_config.json's eos_token). Throws gguftool::Error naming the file and the JSON path
    // (a syntax error: the byte offset) for what it cannot read or does not implement.
    static Tokenizer load(const std::string &package_dir);
    // From a tokenizer.json document alone (`name`: the file named in errors).
    static Tokenizer from_json(std::string_view tokenizer_json, const std::string &name);

    Tokenizer(Tokenizer &&) noexcept;
    Tokenizer &operator=(Tokenizer &&) noexcept;
    ~Tokenizer();

    // The ids of `text` (UTF-8), with the post-processor's special tokens when `add_special`.
    // Added tokens in the text are recognized (llama.cpp's parse_special). Throws gguftool::Error
    // for text that is not UTF-8 (naming the byte offset) and when a regex exceeds its limits.
    std::vector<int32_t> encode(std::string_view text, bool add_special) const;
    // The text of `ids`; `skip_special`: special added tokens left out. Throws gguftool::Error for
    // an id that is in neither the model nor the added tokens.
    std::string decode(std::span<const int32_t> ids, bool skip_special) const;

    // The id of a token's text (added tokens first, then the model), -1 if none.
    int32_t token_id(std::string_view token) const;
    // The text of id `id` in the vocabulary (an added token's content, else the model's token),
    // "" if none.
    std::string token(int32_t id) const;
    // One past the highest id.
    int32_t vocab_size() const;

    // Where generation stops (eos_token_id of generation_config.json: llama.cpp's end-of-generation
    // set in gguftool's packages), ascending; empty when the package does not say.
    const std::vector<int32_t> &end_of_generation_ids() const;
    bool is_end_of_generation(int32_t id) const;

    struct Impl;

private:
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace gguftool::tokenizer
