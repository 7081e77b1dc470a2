// Reading a GGUF vocabulary as llama.cpp 0.5.0's llama_vocab::impl::load does.
#include "vocab.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>
#include <unordered_map>

#include "gguftool/error.hpp"

namespace gguftool::tokenizer::detail {
namespace {

using gguf::ValueType;

// Model types llama.cpp knows and no tokenizer.json reproduces, with the reason.
struct RefusedModel {
    std::string_view name, why;
};
constexpr RefusedModel kRefusedModels[] = {
    {"rwkv", "RWKV's greedy byte-trie tokenizer has no tokenizer.json model"},
    {"plamo2", "PLaMo-2's suffix-table tokenizer has no tokenizer.json model"},
    {"hybriddna", "llama.cpp tokenizes it with a custom k-mer session"},
    {"whitespace", "llama.cpp tokenizes it with a custom whitespace session (lowercasing)"},
    {"none", "the model has no tokenizer"},
    {"no_vocab", "the model has no tokenizer"},
    {"test", "llama.cpp's test vocabulary type is not a tokenizer"},
};

// Texts llama.cpp marks CONTROL when their slot's id is not set (load: "auto-detect special
// tokens by text"); the first one its hash map yields takes the slot.
struct Detected {
    std::string_view slot;
    std::vector<std::string_view> texts;
};
const std::vector<Detected> kDetected = {
    {"eot",
     {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
      "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
    {"eom", {"<|eom_id|>"}},
    {"fim_pre",
     {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
      "<|code_prefix|>", "<|prefix|>"}},
    {"fim_suf",
     {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
      "<|code_suffix|>", "<|suffix|>"}},
    {"fim_mid",
     {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
      "<|code_middle|>", "<|middle|>"}},
    {"fim_pad", {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
    {"fim_rep", {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
    {"fim_sep", {"<|file_sep|>"}},
};
// End-of-generation texts: always made CONTROL, and in the end-of-generation set.
const std::vector<std::string_view> kEogTexts = {"<|eot_id|>",
                                                 "<|im_end|>",
                                                 "<|end|>",
                                                 "<|return|>",
                                                 "<|call|>",
                                                 "<|flush|>",
                                                 "<|calls|>",
                                                 "<end_of_turn>",
                                                 "<|endoftext|>",
                                                 "</s>",
                                                 "<|eom_id|>",
                                                 "<EOT>",
                                                 "_<EOT>",
                                                 "[EOT]",
                                                 "[EOS]",
                                                 "<|end_of_text|>",
                                                 "<end_of_utterance>",
                                                 "<eos>",
                                                 "<turn|>",
                                                 "<|tool_response>",
                                                 "<｜end▁of▁sentence｜>",
                                                 "[e~["};
// gpt-oss: always rendered, so set to USER_DEFINED.
const std::vector<std::string_view> kUserDefinedTexts = {"<|channel|>", "<|message|>", "<|start|>",
                                                         "<|constrain|>"};

// The special-id keys, in llama.cpp's order (the deprecated FIM keys last, overriding).
struct SpecialKey {
    std::string_view name, key;
};
constexpr SpecialKey kSpecialKeys[] = {
    {"bos", "tokenizer.ggml.bos_token_id"},         {"eos", "tokenizer.ggml.eos_token_id"},
    {"eot", "tokenizer.ggml.eot_token_id"},         {"eom", "tokenizer.ggml.eom_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"},     {"sep", "tokenizer.ggml.seperator_token_id"},
    {"pad", "tokenizer.ggml.padding_token_id"},     {"mask", "tokenizer.ggml.mask_token_id"},
    {"fim_pre", "tokenizer.ggml.fim_pre_token_id"}, {"fim_suf", "tokenizer.ggml.fim_suf_token_id"},
    {"fim_mid", "tokenizer.ggml.fim_mid_token_id"}, {"fim_pad", "tokenizer.ggml.fim_pad_token_id"},
    {"fim_rep", "tokenizer.ggml.fim_rep_token_id"}, {"fim_sep", "tokenizer.ggml.fim_sep_token_id"},
    {"fim_pre", "tokenizer.ggml.prefix_token_id"},  {"fim_suf", "tokenizer.ggml.suffix_token_id"},
    {"fim_mid", "tokenizer.ggml.middle_token_id"},
};

class Reader {
public:
    explicit Reader(const gguf::File &f) : f_(f) {}

    [[noreturn]] void fail(std::string_view key, const std::string &what,
                           std::optional<uint64_t> index = std::nullopt) const {
        std::string k(key);
        if (index) k += "[" + std::to_string(*index) + "]";
        throw Error(f_.path(), std::nullopt, k + ": " + what);
    }
    const gguf::Value *find(std::string_view key) const {
        const gguf::MetadataEntry *e = f_.find(key);
        return e ? &e->value : nullptr;
    }
    std::optional<std::string> string(std::string_view key) const {
        const gguf::Value *v = find(key);
        if (!v) return std::nullopt;
        if (v->type() != ValueType::string) fail(key, "not a string");
        const std::string_view s = v->as_string();
        if (!valid_utf8(s)) fail(key, "not valid UTF-8");
        return std::string(s);
    }
    std::optional<bool> boolean(std::string_view key) const {
        const gguf::Value *v = find(key);
        if (!v) return std::nullopt;
        if (v->type() != ValueType::bool_) fail(key, "not a bool");
        return v->as_bool();
    }
    std::optional<uint64_t> unsigned_int(std::string_view key) const {
        const gguf::Value *v = find(key);
        if (!v) return std::nullopt;
        switch (v->type()) {
            case ValueType::int8:
            case ValueType::int16:
            case ValueType::int32:
            case ValueType::int64:
                if (v->as_int() < 0) fail(key, "negative");
                return uint64_t(v->as_int());
            case ValueType::uint8:
            case ValueType::uint16:
            case ValueType::uint32:
            case ValueType::uint64:
                return v->as_uint();
            default:
                fail(key, "not an integer");
        }
    }
    // An array of `type` (or of one of `alt`), or nullptr when absent.
    const gguf::Value *array(std::string_view key, std::initializer_list<ValueType> types) const {
        const gguf::Value *v = find(key);
        if (!v) return nullptr;
        if (v->type() != ValueType::array ||
            std::find(types.begin(), types.end(), v->array_type()) == types.end())
            fail(key, std::string("not an array of ") + gguf::value_type_name(*types.begin()));
        return v;
    }

private:
    const gguf::File &f_;
};

constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kScores = "tokenizer.ggml.scores";
constexpr std::string_view kTypes = "tokenizer.ggml.token_type";
constexpr std::string_view kMerges = "tokenizer.ggml.merges";
constexpr std::string_view kCharsmap = "tokenizer.ggml.precompiled_charsmap";

void read_tokens(const Reader &r, Vocab &v) {
    const gguf::Value *tokens = r.array(kTokens, {ValueType::string});
    if (!tokens) r.fail(kTokens, "missing: the model has no vocabulary");
    const uint64_t n = tokens->array_size();
    if (n == 0) r.fail(kTokens, "empty");
    if (n > uint64_t(INT32_MAX)) r.fail(kTokens, std::to_string(n) + " tokens: too many");
    v.tokens.reserve(n);
    uint64_t i = 0;
    tokens->for_each_element([&](const gguf::Value &e) {
        std::string_view s = e.as_string();
        if (!valid_utf8(s)) r.fail(kTokens, "not valid UTF-8: tokenizer.json cannot hold it", i);
        v.tokens.push_back(s.empty() ? "[EMPTY_" + std::to_string(i) + "]" : std::string(s));
        ++i;
    });

    v.scores.assign(n, 0.0f);
    if (const gguf::Value *s = r.array(kScores, {ValueType::float32, ValueType::int32})) {
        if (s->array_size() != n)
            r.fail(kScores, std::to_string(s->array_size()) + " scores for " + std::to_string(n) +
                                " tokens");
        const bool ints = s->array_type() == ValueType::int32;
        i = 0;
        s->for_each_element([&](const gguf::Value &e) {
            const double d = ints ? double(e.as_int()) : e.as_double();
            v.scores[i++] = std::isnan(d) ? -INFINITY : float(d);
        });
    }
    v.attrs.assign(n, kAttrNormal);
    if (const gguf::Value *t = r.array(kTypes, {ValueType::int32})) {
        if (t->array_size() != n)
            r.fail(kTypes,
                   std::to_string(t->array_size()) + " types for " + std::to_string(n) + " tokens");
        // llama_token_type -> llama_token_attr, 1:1 (an unknown type is UNDEFINED: no bit).
        constexpr uint32_t kTypeAttr[] = {
            0, kAttrNormal, kAttrUnknown, kAttrControl, kAttrUserDefined, kAttrUnused, kAttrByte};
        i = 0;
        t->for_each_element([&](const gguf::Value &e) {
            const int64_t type = e.as_int();
            v.attrs[i++] = type >= 0 && type < 7 ? kTypeAttr[type] : 0;
        });
    }
}

void refuse_duplicates(const Reader &r, const Vocab &v) {
    // llama.cpp 0.5.0 aborts on a duplicate (GGML_ASSERT(id_to_token.size() ==
    // token_to_id.size())): refused here, naming the later index.
    std::unordered_map<std::string_view, size_t> seen;
    seen.reserve(v.tokens.size());
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const auto [it, fresh] = seen.emplace(v.tokens[i], i);
        if (!fresh)
            r.fail(kTokens,
                   "duplicate of token " + std::to_string(it->second) +
                       " (llama.cpp refuses a vocabulary with duplicate tokens)",
                   i);
    }
}

void read_merges(const Reader &r, Vocab &v) {
    const gguf::Value *m = r.array(kMerges, {ValueType::string});
    if (!m) r.fail(kMerges, "missing: a " + v.model + " vocabulary needs its merges");
    v.merges.reserve(m->array_size());
    uint64_t i = 0;
    m->for_each_element([&](const gguf::Value &e) {
        const std::string_view s = e.as_string();
        const size_t at = s.size() > 1 ? s.find(' ', 1) : std::string_view::npos;
        if (at == std::string_view::npos)
            r.fail(kMerges, "malformed: no space separates the two parts", i);
        if (!valid_utf8(s)) r.fail(kMerges, "not valid UTF-8", i);
        v.merges.emplace_back(std::string(s.substr(0, at)), std::string(s.substr(at + 1)));
        ++i;
    });
}

// UGM's SentencePiece normalization rules: a u32 (little-endian) byte count, that many bytes of
// XCDA trie (darts-clone's double array: u32 units), then the NUL-terminated replacement strings.
// Checked as llama.cpp's load checks it, as Hugging Face's reader (spm_precompiled's
// Precompiled::from) needs it (the trie in whole units, the strings UTF-8), and walked: every unit
// a text can reach and every replacement a key names lie inside the blob (llama.cpp's
// normalize_prefix throws at tokenization, Hugging Face's panics, on one that does not).
void read_charsmap(const Reader &r, Vocab &v) {
    const gguf::Value *m = r.array(kCharsmap, {ValueType::uint8, ValueType::int8});
    if (!m) return;
    const uint64_t n = m->array_size();
    const auto *p = m->data();
    const auto u32 = [&](uint64_t at) {
        return uint32_t(p[at]) | uint32_t(p[at + 1]) << 8 | uint32_t(p[at + 2]) << 16 |
               uint32_t(p[at + 3]) << 24;
    };
    if (n < 4) r.fail(kCharsmap, std::to_string(n) + " bytes: too small for the trie size header");
    const uint64_t trie = u32(0);
    if (trie + 4 >= n)
        r.fail(kCharsmap, "the trie size " + std::to_string(trie) +
                              " leaves no replacement strings in its " + std::to_string(n) +
                              " bytes");
    if (trie % 4 != 0)
        r.fail(kCharsmap, "the trie size " + std::to_string(trie) + " is not a multiple of 4");
    v.charsmap.assign(reinterpret_cast<const char *>(p), n);
    const std::string_view strings = std::string_view(v.charsmap).substr(4 + trie);
    if (!valid_utf8(strings)) r.fail(kCharsmap, "its replacement strings are not valid UTF-8");

    const uint64_t units = trie / 4;
    if (units == 0) return;
    const auto unit = [&](uint64_t i) { return u32(4 + 4 * i); };
    const auto base = [](uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); };
    const auto bad = [&](uint64_t i, const std::string &what) {
        r.fail(kCharsmap, "trie unit " + std::to_string(i) + ": " + what);
    };
    std::vector<bool> seen(units);
    std::vector<uint64_t> todo = {base(unit(0))};
    while (!todo.empty()) {
        const uint64_t node = todo.back();
        todo.pop_back();
        if (node >= units) bad(node, "past the trie's " + std::to_string(units) + " units");
        if (seen[node]) continue;
        seen[node] = true;
        for (uint32_t c = 1; c < 256; ++c) {
            const uint64_t at = node ^ c;
            if (at >= units) bad(at, "past the trie's " + std::to_string(units) + " units");
            const uint32_t u = unit(at);
            if ((u & ((1u << 31) | 0xFF)) != c) continue;  // not a child of `node`
            const uint64_t child = at ^ base(u);
            if (child >= units) bad(child, "past the trie's " + std::to_string(units) + " units");
            if ((u >> 8) & 1) {  // a key ends here: the child holds its replacement's offset
                const uint64_t offset = unit(child) & ((1u << 31) - 1);
                if (offset >= strings.size() || strings.find('\0', offset) == std::string::npos)
                    bad(child, "its replacement string at " + std::to_string(offset) +
                                   " is not a NUL-terminated string inside the blob");
            }
            todo.push_back(child);
        }
    }
}

// llama.cpp's load-time attribute rules, after the types are read and the ids are known.
void apply_overrides(const Reader &r, const gguf::File &f, Vocab &v) {
    std::unordered_map<std::string_view, size_t> by_text;
    for (size_t i = 0; i < v.tokens.size(); ++i) by_text.emplace(v.tokens[i], i);
    const auto find = [&](std::string_view t) -> std::optional<size_t> {
        const auto it = by_text.find(t);
        return it == by_text.end() ? std::nullopt : std::optional<size_t>(it->second);
    };
    // A slot whose id is unset takes the first of its texts llama.cpp's hash map yields (here:
    // the lowest id) and, when it is not CONTROL, becomes CONTROL.
    for (const Detected &d : kDetected) {
        if (v.id(std::string(d.slot)) >= 0) continue;
        std::optional<size_t> first;
        for (const std::string_view t : d.texts)
            if (const auto id = find(t); id && (!first || *id < *first)) first = id;
        if (first) {
            v.attrs[*first] |= kAttrControl;
            v.ids[std::string(d.slot)] = int64_t(*first);
        }
    }
    // The end-of-generation set (special_eog_ids), in llama.cpp's order: the FIM pad, repo and
    // separator ids, every token with an end-of-generation text (made CONTROL), then the EOS, EOT
    // and EOM ids.
    std::set<int64_t> eog;
    for (const char *slot : {"fim_pad", "fim_rep", "fim_sep"})
        if (v.id(slot) >= 0) eog.insert(v.id(slot));
    for (const std::string_view t : kEogTexts)
        if (const auto id = find(t)) {
            v.attrs[*id] |= kAttrControl;
            eog.insert(int64_t(*id));
        }
    for (const std::string_view t : kUserDefinedTexts)
        if (const auto id = find(t)) v.attrs[*id] = kAttrUserDefined;
    for (const char *slot : {"eos", "eot", "eom"})
        if (v.id(slot) >= 0) eog.insert(v.id(slot));
    const auto in_eog = [&](std::string_view t) {
        const auto id = find(t);
        return id && eog.count(int64_t(*id)) ? id : std::nullopt;
    };
    // o200k_harmony and solar-open: <|end|> is no end of generation (and is USER_DEFINED) when
    // the set holds <|return|> and <|call|>, or <|call|> or <|calls|> and <|flush|>.
    const bool call = in_eog("<|call|>") || in_eog("<|calls|>");
    if (const auto end = in_eog("<|end|>");
        end && ((in_eog("<|return|>") && call) || (call && in_eog("<|flush|>")))) {
        eog.erase(int64_t(*end));
        v.attrs[*end] = kAttrUserDefined;
    }
    // gemma4 and paddleocr: </s> is no end of generation (and is NORMAL) when <|tool_response> is.
    if (const auto s = in_eog("</s>"); s && in_eog("<|tool_response>")) {
        eog.erase(int64_t(*s));
        v.attrs[*s] = kAttrNormal;
    }
    v.eog.assign(eog.begin(), eog.end());

    // Per-model lstrip/rstrip, by pre-tokenizer, architecture or lower-cased general.name.
    const auto contains_any = [](const std::string &s, std::initializer_list<std::string_view> l) {
        return std::any_of(l.begin(), l.end(),
                           [&](std::string_view x) { return s.find(x) != std::string::npos; });
    };
    std::string name = r.string("general.name").value_or("");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return char(std::tolower(uint8_t(c))); });
    const std::string arch = r.string("general.architecture").value_or("");
    (void)f;
    const auto require = [&](std::string_view t, const char *why) {
        const auto id = find(t);
        if (!id)
            r.fail(kTokens, "has no " + std::string(t) + " token, which llama.cpp requires for " +
                                why + " (it refuses the model)");
        return *id;
    };
    if (contains_any(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
        contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
        if (const auto id = find("<mask>")) v.attrs[*id] |= kAttrLstrip;
    } else if (contains_any(name, {"phi-3", "phi3"})) {
        for (uint32_t &a : v.attrs)
            if (a & (kAttrControl | kAttrUserDefined | kAttrUnknown)) a |= kAttrRstrip;
        v.attrs[require("</s>", "a phi-3 model")] |= kAttrRstrip;
        for (const std::string_view t : {"<unk>", "<s>", "<|endoftext|>"})
            v.attrs[require(t, "a phi-3 model")] &= ~kAttrRstrip;
    } else if (contains_any(name, {"modern-bert"})) {
        if (const auto id = find("[MASK]")) v.attrs[*id] |= kAttrLstrip;
    }
}

// The tokenizer models no tokenizer.json reproduces (llama.cpp tokenizes them).
void refuse_model(const Reader &r, const Vocab &v) {
    for (const RefusedModel &m : kRefusedModels)
        if (v.model == m.name)
            r.fail("tokenizer.ggml.model",
                   "\"" + v.model + "\" cannot be exported: " + std::string(m.why));
}

// The type of tokenizer and its defaults (llama_vocab::impl::load): special ids into `defaults`,
// add flags, the pre-tokenizer's row and flags. No token's text is read.
void read_kind(const Reader &r, Vocab &v, std::map<std::string, int64_t> &defaults) {
    if (v.model == "llama") {
        v.kind = Kind::spm;
        defaults = {{"bos", 1}, {"eos", 2}, {"unk", 0}};
        v.add_bos = true, v.add_space_prefix = true;
    } else if (v.model == "t5") {
        v.kind = Kind::ugm;
        defaults = {{"eos", 1}, {"unk", 2}, {"pad", 0}};
        v.add_eos = true;
    } else if (v.model == "bert") {
        v.kind = Kind::wpm;
        defaults = {{"bos", 101}, {"unk", 100}, {"sep", 102}, {"pad", 0}, {"mask", 103}};
        v.add_bos = true, v.add_sep = true, v.clean_spaces = true;
    } else if (v.model == "gpt2" || v.model == "gemma4") {
        v.kind = Kind::bpe;
        if (v.model == "gpt2") defaults = {{"bos", 11}, {"eos", 11}};
        if (v.model == "gemma4") v.pre = "gemma4";  // llama.cpp forces it
        v.pre_row = find_pre(v.pre);
        if (!v.pre_row)
            r.fail("tokenizer.ggml.pre",
                   "unknown pre-tokenizer \"" + v.pre + "\" (llama.cpp 0.5.0 refuses it too)");
        if (!v.pre_row->refused.empty())
            r.fail("tokenizer.ggml.pre", "\"" + v.pre + "\" cannot be exported exactly: " +
                                             std::string(v.pre_row->refused));
        const PreFlags &p = v.pre_row->flags;
        v.clean_spaces = p.clean_spaces, v.ignore_merges = p.ignore_merges;
        v.add_bos = p.add_bos, v.add_sep = p.add_sep;
        if (p.no_bos) defaults.erase("bos");
    } else {
        r.fail("tokenizer.ggml.model",
               "unknown tokenizer \"" + v.model + "\" (llama.cpp 0.5.0 refuses it too)");
    }
    if (v.kind != Kind::bpe) v.pre_row = nullptr;
}

// The special ids (the defaults in range, then the keys: one out of range is an error, where
// llama.cpp warns and keeps the default: the file is broken), the add flags and the normalizer
// options from the keys. `n` tokens.
void read_ids_and_flags(const Reader &r, Vocab &v, const std::map<std::string, int64_t> &defaults,
                        int64_t n) {
    for (const auto &[name, id] : defaults)
        if (id < n) v.ids[name] = id;
    for (const SpecialKey &k : kSpecialKeys) {
        const auto id = r.unsigned_int(k.key);
        if (!id) continue;
        if (*id >= uint64_t(n))
            r.fail(k.key, std::to_string(*id) + " is out of range: the vocabulary has " +
                              std::to_string(n) + " tokens");
        v.ids[std::string(k.name)] = int64_t(*id);
    }
    if (const auto b = r.boolean("tokenizer.ggml.add_bos_token")) v.add_bos = *b;
    if (const auto b = r.boolean("tokenizer.ggml.add_eos_token")) v.add_eos = *b;
    if (const auto b = r.boolean("tokenizer.ggml.add_sep_token")) v.add_sep = *b;
    if (v.pre_row && v.pre_row->flags.force_add_bos) v.add_bos = true;  // even over the key
    if (const auto b = r.boolean("tokenizer.ggml.add_space_prefix"))
        if (v.kind == Kind::spm || v.kind == Kind::ugm) v.add_space_prefix = *b;
    v.remove_extra_whitespaces =
        r.boolean("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
    // llama_vocab::normalizer_options: both on unless the keys say otherwise.
    v.lowercase = r.boolean("tokenizer.ggml.normalizer.lowercase").value_or(true);
    v.strip_accents = r.boolean("tokenizer.ggml.normalizer.strip_accents").value_or(v.lowercase);
}

}  // namespace

size_t utf8_valid_prefix(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        const auto c = uint8_t(s[i]);
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, cp = c & 0x07;
        } else {
            return i;
        }
        if (i + n >= s.size()) return i;
        for (size_t k = 1; k <= n; ++k) {
            const auto d = uint8_t(s[i + k]);
            if ((d & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (d & 0x3F);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n + 1;
    }
    return i;
}

Vocab read_settings(const gguf::File &f) {
    const Reader r(f);
    Vocab v;
    v.file = f.path();
    const auto model = r.string("tokenizer.ggml.model");
    if (!model) r.fail("tokenizer.ggml.model", "missing: the model has no tokenizer");
    v.model = *model;
    v.pre = r.string("tokenizer.ggml.pre").value_or("");
    refuse_model(r, v);
    const gguf::Value *tokens = r.array(kTokens, {ValueType::string});
    if (!tokens) r.fail(kTokens, "missing: the model has no vocabulary");
    std::map<std::string, int64_t> defaults;
    read_kind(r, v, defaults);
    read_ids_and_flags(r, v, defaults, int64_t(tokens->array_size()));
    return v;
}

Vocab read_vocab(const gguf::File &f) {
    const Reader r(f);
    Vocab v;
    v.file = f.path();
    const auto model = r.string("tokenizer.ggml.model");
    if (!model) r.fail("tokenizer.ggml.model", "missing: the model has no tokenizer");
    v.model = *model;
    v.pre = r.string("tokenizer.ggml.pre").value_or("");
    refuse_model(r, v);

    read_tokens(r, v);
    const int64_t n = int64_t(v.tokens.size());
    std::map<std::string, int64_t> defaults;
    read_kind(r, v, defaults);
    if (v.kind == Kind::ugm) read_charsmap(r, v);
    if (v.kind == Kind::bpe) read_merges(r, v);
    refuse_duplicates(r, v);
    read_ids_and_flags(r, v, defaults, n);

    apply_overrides(r, f, v);

    // What each type's tokenize needs (llama.cpp asserts: here an error).
    const auto need = [&](const char *name, const char *key, const char *why) {
        if (v.id(name) < 0) r.fail(key, std::string("unset, but ") + why);
    };
    if (v.kind == Kind::wpm) {
        need("bos", "tokenizer.ggml.bos_token_id", "a bert vocabulary adds [CLS] (its BOS)");
        need("sep", "tokenizer.ggml.seperator_token_id", "a bert vocabulary adds [SEP]");
        need("unk", "tokenizer.ggml.unknown_token_id", "a bert vocabulary needs [UNK]");
    } else {
        if (v.kind == Kind::ugm) {
            need("unk", "tokenizer.ggml.unknown_token_id",
                 "a t5 vocabulary needs its unknown token for characters no token covers");
            // Its Viterbi scores: JSON holds no infinity or NaN.
            for (size_t i = 0; i < v.tokens.size(); ++i)
                if (const auto s = ugm_lattice_score(v, i); s && !std::isfinite(*s))
                    r.fail(kScores, "not finite: tokenizer.json cannot hold the Unigram score", i);
        }
        if (v.add_bos) need("bos", "tokenizer.ggml.bos_token_id", "add_bos is on");
        if (v.add_eos) need("eos", "tokenizer.ggml.eos_token_id", "add_eos is on");
    }

    // Chat templates: the default, and the named ones (tokenizer.chat_templates lists them).
    v.chat_template = r.string("tokenizer.chat_template").value_or("");
    for (const gguf::MetadataEntry &e : f.metadata()) {
        constexpr std::string_view kPrefix = "tokenizer.chat_template.";
        if (e.key.substr(0, kPrefix.size()) == kPrefix && e.key.size() > kPrefix.size())
            v.named_templates.emplace_back(std::string(e.key.substr(kPrefix.size())),
                                           *r.string(e.key));
    }
    if (const auto arch = r.string("general.architecture"))
        v.context_length = r.unsigned_int(*arch + ".context_length");
    return v;
}

}  // namespace gguftool::tokenizer::detail
