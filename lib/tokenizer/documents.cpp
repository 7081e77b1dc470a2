// tokenizer.json, tokenizer_config.json and special_tokens_map.json of a vocabulary (vocab.hpp).
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>

#include "gguftool/error.hpp"
#include "vocab.hpp"

namespace gguftool::tokenizer::detail {
namespace {

using json = nlohmann::ordered_json;

constexpr const char *kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

json string_pattern(const std::string &s) {
    return {{"String", s}};
}
json replace(const std::string &from, const std::string &to) {
    return {{"type", "Replace"}, {"pattern", string_pattern(from)}, {"content", to}};
}
json byte_level() {
    return {{"type", "ByteLevel"},
            {"add_prefix_space", false},
            {"trim_offsets", false},
            {"use_regex", false}};
}

bool special_cache(uint32_t attr) {
    return attr & (kAttrControl | kAttrUserDefined | kAttrUnknown);
}

std::string base64(std::string_view bytes) {
    static constexpr char kDigits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t n = std::min<size_t>(3, bytes.size() - i);
        uint32_t w = 0;
        for (size_t k = 0; k < 3; ++k) w = w << 8 | (k < n ? uint8_t(bytes[i + k]) : 0u);
        for (size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(w >> (18 - 6 * k)) & 63] : '=';
    }
    return out;
}

// The token texts as tokenizer.json's model holds them: WordPiece wants "##" continuations where
// llama.cpp's BERT vocabularies hold "▁word" starts and bare continuations (convert_hf_to_gguf's
// phantom space); every other model keeps the GGUF texts.
std::vector<std::string> model_texts(const Vocab &v) {
    if (v.kind != Kind::wpm) return v.tokens;
    std::vector<std::string> out;
    out.reserve(v.tokens.size());
    const std::string_view space = kSpace;
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const std::string &t = v.tokens[i];
        if (special_cache(v.attrs[i]))
            out.push_back(t);
        else if (t.size() > space.size() && t.compare(0, space.size(), space) == 0)
            out.push_back(t.substr(space.size()));
        else
            out.push_back("##" + t);
    }
    return out;
}

// JSON text of a string (UTF-8 checked when read).
void append_string(std::string &out, std::string_view s) {
    out += json(s).dump();
}

// The model's vocabulary and merges are written as text, not built as JSON objects: an
// ordered_json object of 256k keys takes minutes. Placeholders stand for them in the document.
constexpr const char *kVocabHere = "\x01vocab";
constexpr const char *kMergesHere = "\x01merges";

// {"text": id, ...} in id order. A text two ids share (possible only after WordPiece's respelling)
// keeps the first id.
std::string vocab_text(const std::vector<std::string> &texts) {
    std::string out = "{";
    std::unordered_map<std::string_view, bool> seen;
    seen.reserve(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
        if (!seen.emplace(texts[i], true).second) continue;
        out += out.size() > 1 ? ",\n      " : "\n      ";
        append_string(out, texts[i]);
        out += ": " + std::to_string(i);
    }
    return out + "\n    }";
}

// UGM: [[piece, score], ...] in id order, with the scores of llama.cpp's Viterbi lattice
// (ugm_lattice_score). Hugging Face's Unigram holds every piece, so those outside the lattice
// (control, unknown, byte) get the lattice's lowest score: they lower neither the unknown-token
// penalty (the lowest score less 10) nor win over a spelling of their text from the lattice's.
std::string unigram_vocab_text(const Vocab &v) {
    double lowest = INFINITY;
    for (size_t i = 0; i < v.tokens.size(); ++i)
        lowest = std::min(lowest, ugm_lattice_score(v, i).value_or(INFINITY));
    if (lowest == INFINITY) lowest = 0;  // no lattice: every token outside it
    std::string out = "[";
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        out += i ? ",\n      [" : "\n      [";
        append_string(out, v.tokens[i]);
        out += ", " + json(ugm_lattice_score(v, i).value_or(lowest)).dump() + "]";
    }
    return out + "\n    ]";
}

std::string merges_text(const std::vector<std::pair<std::string_view, std::string_view>> &merges) {
    std::string out = "[";
    for (const auto &[a, b] : merges) {
        out += out.size() > 1 ? ",\n      [" : "\n      [";
        append_string(out, a);
        out += ", ";
        append_string(out, b);
        out += "]";
    }
    return out + (merges.empty() ? "]" : "\n    ]");
}

// SPM: BPE merges from the scores. llama.cpp merges, at each step, the adjacent pair whose
// concatenation is the vocabulary's highest-scoring token (leftmost on a tie); BPE merges by
// rank. So every split (left, right) of every token t with both halves in the vocabulary is a
// merge, ranked by t's score, highest first (then by t's id, then by split position).
std::vector<std::pair<std::string_view, std::string_view>> spm_merges(const Vocab &v) {
    std::unordered_map<std::string_view, uint32_t> id;
    id.reserve(v.tokens.size());
    for (size_t i = 0; i < v.tokens.size(); ++i) id.emplace(v.tokens[i], uint32_t(i));
    struct Merge {
        uint32_t token;
        uint32_t split;
    };
    std::vector<Merge> merges;
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const std::string_view t = v.tokens[i];
        for (size_t k = 1; k < t.size(); ++k) {
            if ((uint8_t(t[k]) & 0xC0) == 0x80) continue;  // not at a character boundary
            if (id.count(t.substr(0, k)) && id.count(t.substr(k)))
                merges.push_back({uint32_t(i), uint32_t(k)});
        }
    }
    std::stable_sort(merges.begin(), merges.end(), [&](const Merge &a, const Merge &b) {
        return v.scores[a.token] > v.scores[b.token];
    });
    std::vector<std::pair<std::string_view, std::string_view>> out;
    out.reserve(merges.size());
    for (const Merge &m : merges) {
        const std::string_view t = v.tokens[m.token];
        out.emplace_back(t.substr(0, m.split), t.substr(m.split));
    }
    return out;
}

std::vector<std::pair<std::string_view, std::string_view>> bpe_merges(const Vocab &v) {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    out.reserve(v.merges.size());
    for (const auto &[a, b] : v.merges) out.emplace_back(a, b);
    return out;
}

json added_tokens(const Vocab &v) {
    json out = json::array();
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        const uint32_t a = v.attrs[i];
        if (!special_cache(a)) continue;
        out.push_back({{"id", i},
                       {"content", v.tokens[i]},
                       {"single_word", false},
                       {"lstrip", bool(a & kAttrLstrip)},
                       {"rstrip", bool(a & kAttrRstrip)},
                       {"normalized", false},
                       {"special", bool(a & (kAttrControl | kAttrUnknown))}});
    }
    return out;
}

// BOS/EOS (SPM, BPE) or [CLS] ... [SEP] (WPM), as llama_tokenize adds them with add_special.
json post_processor(const Vocab &v) {
    std::vector<int64_t> before, after;
    if (v.kind == Kind::wpm) {
        before = {v.id("bos")}, after = {v.id("sep")};
    } else {
        if (v.add_bos) before.push_back(v.id("bos"));
        if (v.add_eos) after.push_back(v.id("eos"));
    }
    json specials = json::object();
    const auto special = [&](int64_t id, int type_id) {
        const std::string &t = v.tokens[size_t(id)];
        specials[t] = {{"id", t}, {"ids", {id}}, {"tokens", {t}}};
        return json{{"SpecialToken", {{"id", t}, {"type_id", type_id}}}};
    };
    const auto sequence = [&](const char *name, int type_id, json &into) {
        for (const int64_t id : before) into.push_back(special(id, type_id));
        into.push_back({{"Sequence", {{"id", name}, {"type_id", type_id}}}});
        for (const int64_t id : after) into.push_back(special(id, type_id));
    };
    json single = json::array(), pair = json::array();
    sequence("A", 0, single);
    sequence("A", 0, pair);
    sequence("B", 1, pair);
    return {{"type", "TemplateProcessing"},
            {"single", single},
            {"pair", pair},
            {"special_tokens", specials}};
}

json unk_token(const Vocab &v) {
    const int64_t unk = v.id("unk");
    return unk >= 0 ? json(v.tokens[size_t(unk)]) : json(nullptr);
}

json bpe_model(const Vocab &v, bool byte_fallback, bool ignore_merges) {
    return {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", byte_fallback ? unk_token(v) : json(nullptr)},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", byte_fallback},
            {"byte_fallback", byte_fallback},
            {"ignore_merges", ignore_merges},
            {"vocab", kVocabHere},
            {"merges", kMergesHere}};
}

json unigram_model(const Vocab &v) {
    return {{"type", "Unigram"},
            {"unk_id", v.id("unk")},
            {"byte_fallback", false},  // llama.cpp's UGM has none: an unknown character is <unk>
            {"vocab", kVocabHere}};
}

// "▁" back to spaces, <0xXX> tokens to bytes, and the space add_space_prefix put in front dropped.
json spm_decoder(const Vocab &v) {
    json d = json::array({replace(kSpace, " "), {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    if (v.add_space_prefix)
        d.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    return {{"type", "Sequence"}, {"decoders", d}};
}

std::string dump(const json &j, const Vocab &v, const char *what) {
    try {
        return j.dump(2) + "\n";
    } catch (const json::exception &e) {  // every string was checked as UTF-8: not expected
        throw Error(v.file, std::nullopt, std::string(what) + ": " + e.what());
    }
}

// Where the placeholder `mark` is: its last occurrence at or before `before` (the model comes
// last in the document, its vocab and merges last in the model: nothing after them can hold it).
std::pair<size_t, size_t> placeholder(const std::string &doc, const char *mark, size_t before) {
    const std::string quoted = json(mark).dump();
    return {doc.rfind(quoted, before), quoted.size()};
}

}  // namespace

std::string tokenizer_json(const Vocab &v) {
    json normalizer = nullptr, pre_tokenizer = nullptr, model, decoder;
    std::string merges;  // none for WordPiece and Unigram
    std::string vocab;   // the model's vocab, as text
    switch (v.kind) {
        case Kind::spm: {
            // Prepend + Replace rather than Metaspace: Metaspace prepends only to a piece that does
            // not start with "▁" and only to the first piece; llama.cpp prepends a space to every
            // piece of text after a special token, whatever it starts with.
            json seq = json::array();
            if (v.add_space_prefix) seq.push_back({{"type", "Prepend"}, {"prepend", kSpace}});
            seq.push_back(replace(" ", kSpace));
            normalizer = {{"type", "Sequence"}, {"normalizers", seq}};
            model = bpe_model(v, true, false);
            merges = merges_text(spm_merges(v));
            decoder = spm_decoder(v);
            break;
        }
        case Kind::ugm: {
            // llm_tokenizer_ugm_session::normalize: the charsmap (longest match), then the spaces,
            // as "▁"; one "▁" before the text with add_space_prefix, before every word with
            // remove_extra_whitespaces. Metaspace puts it before each piece of text between special
            // tokens that does not start with "▁" (as llama.cpp normalizes each such piece), and
            // not before an empty one.
            json seq = json::array();
            if (!v.charsmap.empty())
                seq.push_back(
                    {{"type", "Precompiled"}, {"precompiled_charsmap", base64(v.charsmap)}});
            const bool prepend = v.add_space_prefix || v.remove_extra_whitespaces;
            pre_tokenizer = {{"type", "Metaspace"},
                             {"replacement", kSpace},
                             {"prepend_scheme", prepend ? "always" : "never"},
                             {"split", false}};
            if (v.remove_extra_whitespaces) {
                // Spaces dropped at both ends and each run inside made one "▁": then Metaspace's
                // "▁" in front makes one before every word.
                seq.push_back({{"type", "Replace"},
                               {"pattern", {{"Regex", "\\A +| +\\z"}}},
                               {"content", ""}});
                seq.push_back(
                    {{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", kSpace}});
            } else if (v.add_space_prefix) {
                // llama.cpp puts the "▁" before the first character that is not a space, so none
                // before a text of spaces only: leading spaces a piece of their own, which starts
                // with "▁" when Metaspace comes to it.
                pre_tokenizer = {{"type", "Sequence"},
                                 {"pretokenizers", json::array({{{"type", "Split"},
                                                                 {"pattern", {{"Regex", "\\A +"}}},
                                                                 {"behavior", "Isolated"},
                                                                 {"invert", false}},
                                                                pre_tokenizer})}};
            }
            if (!seq.empty()) normalizer = {{"type", "Sequence"}, {"normalizers", seq}};
            model = unigram_model(v);
            vocab = unigram_vocab_text(v);
            decoder = spm_decoder(v);
            break;
        }
        case Kind::bpe: {
            json splits = json::array();
            for (const std::string &re : split_regexes(*v.pre_row))
                splits.push_back({{"type", "Split"},
                                  {"pattern", {{"Regex", re}}},
                                  {"behavior", "Isolated"},
                                  {"invert", false}});
            if (v.pre_row->flags.raw_utf8) {
                // Gemma 4's shape: BPE over UTF-8 characters, spaces as "▁", bytes as <0xXX>.
                normalizer = replace(" ", kSpace);
                model = bpe_model(v, true, v.ignore_merges);
                decoder = {{"type", "Sequence"},
                           {"decoders", json::array({replace(kSpace, " "),
                                                     {{"type", "ByteFallback"}},
                                                     {{"type", "Fuse"}}})}};
            } else {
                splits.push_back(byte_level());
                model = bpe_model(v, false, v.ignore_merges);
                decoder = byte_level();
            }
            pre_tokenizer = {{"type", "Sequence"}, {"pretokenizers", splits}};
            merges = merges_text(bpe_merges(v));
            break;
        }
        case Kind::wpm:
            normalizer = {{"type", "BertNormalizer"},
                          {"clean_text", true},
                          {"handle_chinese_chars", true},
                          {"strip_accents", v.strip_accents},
                          {"lowercase", v.lowercase}};
            pre_tokenizer = {{"type", "BertPreTokenizer"}};
            model = {{"type", "WordPiece"},
                     {"unk_token", v.tokens[size_t(v.id("unk"))]},
                     {"continuing_subword_prefix", "##"},
                     {"max_input_chars_per_word", 1 << 30},  // llama.cpp has no limit
                     {"vocab", kVocabHere}};
            decoder = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", v.clean_spaces}};
            break;
    }
    const json doc = {{"version", "1.0"},
                      {"truncation", nullptr},
                      {"padding", nullptr},
                      {"added_tokens", added_tokens(v)},
                      {"normalizer", normalizer},
                      {"pre_tokenizer", pre_tokenizer},
                      {"post_processor", post_processor(v)},
                      {"decoder", decoder},
                      {"model", model}};
    std::string text = dump(doc, v, "tokenizer.json");
    const auto m = merges.empty() ? std::pair<size_t, size_t>{std::string::npos, 0}
                                  : placeholder(text, kMergesHere, std::string::npos);
    const auto at = placeholder(text, kVocabHere, m.first);
    if (!merges.empty()) text.replace(m.first, m.second, merges);  // the later one first
    text.replace(at.first, at.second, vocab.empty() ? vocab_text(model_texts(v)) : vocab);
    return text;
}

namespace {

// The special tokens both configs name: HF's name -> llama.cpp's id slot.
std::vector<std::pair<std::string, std::string>> named_specials(const Vocab &v) {
    std::vector<std::pair<std::string, std::string>> out = {
        {"bos_token", "bos"}, {"eos_token", "eos"}, {"unk_token", "unk"},
        {"sep_token", "sep"}, {"pad_token", "pad"}, {"mask_token", "mask"}};
    if (v.kind == Kind::wpm) out.push_back({"cls_token", "bos"});
    return out;
}

}  // namespace

std::string tokenizer_config_json(const Vocab &v) {
    json doc = {{"tokenizer_class", "PreTrainedTokenizerFast"}};
    for (const auto &[hf, slot] : named_specials(v))
        if (v.id(slot) >= 0) doc[hf] = v.tokens[size_t(v.id(slot))];
    doc["add_bos_token"] = v.kind == Kind::wpm || v.add_bos;
    doc["add_eos_token"] = v.kind != Kind::wpm && v.add_eos;
    doc["clean_up_tokenization_spaces"] = v.clean_spaces;
    if (v.context_length) doc["model_max_length"] = *v.context_length;
    if (!v.named_templates.empty()) {
        json list = json::array();
        if (!v.chat_template.empty())
            list.push_back({{"name", "default"}, {"template", v.chat_template}});
        for (const auto &[name, tmpl] : v.named_templates)
            list.push_back({{"name", name}, {"template", tmpl}});
        doc["chat_template"] = list;
    } else if (!v.chat_template.empty()) {
        doc["chat_template"] = v.chat_template;
    }
    return dump(doc, v, "tokenizer_config.json");
}

std::string special_tokens_map_json(const Vocab &v) {
    json doc = json::object();
    for (const auto &[hf, slot] : named_specials(v))
        if (v.id(slot) >= 0) doc[hf] = v.tokens[size_t(v.id(slot))];
    return dump(doc, v, "special_tokens_map.json");
}

}  // namespace gguftool::tokenizer::detail
