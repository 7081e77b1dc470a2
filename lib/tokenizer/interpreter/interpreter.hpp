// Inside the tokenizer.json interpreter (gguftool/tokenizer.hpp): the JSON reader, the text and
// regex helpers, and the components, each a plain function object built from its JSON by the
// factory tables of normalizers.cpp, pre_tokenizers.cpp, models.cpp and decoders.cpp.
// Semantics: Hugging Face's tokenizers (Rust crate, tokenizers/src), cited per component.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gguftool::tokenizer::interp {

// ---------------------------------------------------------------------------------------------
// A JSON value with where it is (file and JSON pointer), for errors naming both.
class Node {
public:
    Node(const nlohmann::json &j, std::string file, std::string path)
        : j_(&j), file_(std::move(file)), path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string &what) const;
    const nlohmann::json &json() const { return *j_; }
    const std::string &file() const { return file_; }
    const std::string &path() const { return path_; }

    bool has(const char *key) const;                 // present and not null
    Node at(const char *key) const;                  // required member
    Node at(size_t i) const;                         // array element
    std::optional<Node> get(const char *key) const;  // member, nullopt if absent or null
    std::string str() const;                         // a string
    bool boolean() const;                            // a bool
    int64_t integer(int64_t lo, int64_t hi) const;   // an integer in [lo, hi]
    double number() const;                           // a finite number
    size_t size() const;                             // array length (fails if not an array)
    std::string type() const;                        // the "type" member, a string
    uint32_t one_char() const;                       // a string of exactly one character
    // Optional members with a default.
    std::string str_or(const char *key, const std::string &dflt) const;
    // The members of a Sequence component (`key`: "normalizers", ...), refusing one nested past
    // 64 levels (its components are built recursively).
    Node sequence(const char *key) const;
    bool bool_or(const char *key, bool dflt) const;

private:
    const nlohmann::json *j_;
    std::string file_, path_;
};

// Parses `text`; a syntax error throws gguftool::Error naming the file and the byte offset.
nlohmann::json parse_json(std::string_view text, const std::string &file);

// ---------------------------------------------------------------------------------------------
// UTF-8 and Unicode (utf8proc). Text here is well-formed UTF-8 (checked once at encode's entry).

size_t char_len(uint8_t lead);  // bytes of the character starting with `lead`
uint32_t char_at(std::string_view s, size_t i);
void append_char(std::string &out, uint32_t cp);
std::vector<uint32_t> chars(std::string_view s);
std::string from_chars(const std::vector<uint32_t> &cps);
// Rust's String::from_utf8_lossy: each maximal ill-formed subsequence becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);

bool is_whitespace(uint32_t cp);   // Rust char::is_whitespace (the White_Space property)
bool is_punctuation(uint32_t cp);  // P*
bool is_other(uint32_t cp);        // Cc, Cf, Cn, Co, Cs (unicode_categories' is_other)
bool is_mark_nonspacing(uint32_t cp);
bool is_combining_mark(uint32_t cp);  // M*
enum class Form { nfc, nfd, nfkc, nfkd };
std::string normalize(std::string_view s, Form form);
std::string lowercase(std::string_view s);  // Rust str::chars().flat_map(to_lowercase)
// Extended grapheme clusters (UAX #29), as byte lengths in order.
std::vector<size_t> grapheme_lengths(std::string_view s);

// ---------------------------------------------------------------------------------------------
// A compiled regex (PCRE2) with Oniguruma's meaning, or a literal string.
class Regex {
public:
    // `where`: file and JSON path, for errors (a pattern PCRE2 refuses; a match over its limits).
    Regex(std::string_view pattern, bool literal, std::string where);
    // The matches as the Rust crate's onig find_iter yields them: leftmost, non-overlapping; an
    // empty match right where the previous one ended is skipped (the search moves one character).
    std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;

private:
    struct Code;
    std::shared_ptr<const Code> code_;
    std::string where_;
};
// The Oniguruma pattern as PCRE2 reads it with the same meaning (exposed for the tests).
std::string pcre2_pattern(std::string_view oniguruma, const std::string &where);

// ---------------------------------------------------------------------------------------------
// Components.

// A piece of the text on its way through the pipeline: an added token's (id set) or text still to
// be normalized, split and tokenized.
struct Piece {
    std::string text;
    int32_t id = -1;
    bool at_start = false;  // begins at the input's first byte (Metaspace's prepend_scheme first)
};
using Pieces = std::vector<Piece>;

using Normalizer = std::function<void(std::string &)>;
using PreTokenizer = std::function<void(Pieces &)>;  // splits the pieces without an id
using Decoder = std::function<void(std::vector<std::string> &)>;

// A string-keyed map that finds by std::string_view too.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
template <class T>
using StringMap = std::unordered_map<std::string, T, StringHash, std::equal_to<>>;

struct Model {
    StringMap<int32_t> ids;  // token -> id
    std::unordered_map<int32_t, std::string> tokens;
    size_t size = 0;  // get_vocab_size: the vocab's entries (added tokens' ids start there)
    // The ids of a non-empty piece, appended (the model passed in: its maps).
    std::function<void(const Model &, std::string_view, std::vector<int32_t> &)> tokenize;
};

Normalizer make_normalizer(const Node &n);
PreTokenizer make_pre_tokenizer(const Node &n);
Model make_model(const Node &n);
Decoder make_decoder(const Node &n);

// Split delimiter behaviours (tokenizers/src/tokenizer/normalizer.rs, SplitDelimiterBehavior).
enum class Behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
// A piece of text's matches: ranges covering it, each flagged as a match or not.
struct Span {
    size_t begin, end;
    bool match;
};
std::vector<Span> regex_spans(const Regex &re, std::string_view s);
std::vector<Span> char_spans(const std::function<bool(uint32_t)> &is, std::string_view s);
// NormalizedString::split's ranges kept for `behavior`.
std::vector<std::pair<size_t, size_t>> split_ranges(std::vector<Span> spans, Behavior behavior);
// Every piece without an id replaced by its non-empty parts from `ranges_of`.
void split_pieces(
    Pieces &pieces,
    const std::function<std::vector<std::pair<size_t, size_t>>(std::string &)> &ranges_of);

// GPT-2's bytes_to_unicode: the character each byte is written as (ByteLevel).
const std::vector<uint32_t> &byte_chars();

}  // namespace gguftool::tokenizer::interp
