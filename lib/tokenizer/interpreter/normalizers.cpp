// Normalizers (tokenizers/src/normalizers/*.rs), on the text alone: the interpreter tracks no
// offsets, so NormalizedString's alignments have no counterpart here.
#include <algorithm>

#include "../tokenizer_impl.hpp"
#include "gguftool/error.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {
namespace {

// Replace: every match of the pattern (a string or an Oniguruma regex) by the content.
Regex pattern_of(const Node &n) {
    const Node p = n.at("pattern");
    if (p.has("String")) return Regex(p.at("String").str(), true, n.file() + ": " + p.path());
    if (p.has("Regex")) return Regex(p.at("Regex").str(), false, n.file() + ": " + p.path());
    p.fail("neither {\"String\": ...} nor {\"Regex\": ...}");
}

Normalizer replace(const Node &n) {
    return [re = pattern_of(n), content = n.at("content").str()](std::string &s) {
        std::string out;
        size_t last = 0;
        for (const auto &[b, e] : re.find_all(s)) {
            out.append(s, last, b - last);
            out += content;
            last = e;
        }
        out.append(s, last);
        s = std::move(out);
    };
}

Normalizer prepend(const Node &n) {
    return [p = n.at("prepend").str()](std::string &s) {
        if (!s.empty()) s.insert(0, p);
    };
}

// Removes the characters `drop` says to drop.
void filter(std::string &s, const std::function<bool(uint32_t)> &drop) {
    std::string out;
    for (size_t i = 0; i < s.size(); i += char_len(uint8_t(s[i])))
        if (const uint32_t c = char_at(s, i); !drop(c)) append_char(out, c);
    s = std::move(out);
}

// bert.rs: clean_text (drops NUL, U+FFFD and the other-category characters but \t \n \r; every
// whitespace to a space), CJK ideographs padded with spaces, accents stripped (NFD, then the
// nonspacing marks dropped), lowercase.
bool is_chinese_char(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

Normalizer bert(const Node &n) {
    const bool clean = n.bool_or("clean_text", true);
    const bool chinese = n.bool_or("handle_chinese_chars", true);
    const bool lower = n.bool_or("lowercase", true);
    const bool strip = n.bool_or("strip_accents", lower);
    return [=](std::string &s) {
        if (clean) {
            filter(s, [](uint32_t c) {
                return c == 0 || c == 0xFFFD ||
                       (c != '\t' && c != '\n' && c != '\r' && is_other(c));
            });
            std::string out;
            for (size_t i = 0; i < s.size(); i += char_len(uint8_t(s[i]))) {
                const uint32_t c = char_at(s, i);
                append_char(out, c == '\t' || c == '\n' || c == '\r' || is_whitespace(c) ? ' ' : c);
            }
            s = std::move(out);
        }
        if (chinese) {
            std::string out;
            for (size_t i = 0; i < s.size(); i += char_len(uint8_t(s[i]))) {
                const uint32_t c = char_at(s, i);
                if (is_chinese_char(c)) out += ' ';
                append_char(out, c);
                if (is_chinese_char(c)) out += ' ';
            }
            s = std::move(out);
        }
        if (strip) {
            s = normalize(s, Form::nfd);
            filter(s, is_mark_nonspacing);
        }
        if (lower) s = lowercase(s);
    };
}

// strip.rs: leading and trailing whitespace.
Normalizer strip(const Node &n) {
    const bool left = n.bool_or("strip_left", true), right = n.bool_or("strip_right", true);
    return [=](std::string &s) {
        size_t b = 0, e = s.size();
        while (left && b < e && is_whitespace(char_at(s, b))) b += char_len(uint8_t(s[b]));
        while (right && e > b) {
            size_t k = e - 1;
            while ((uint8_t(s[k]) & 0xC0) == 0x80) --k;
            if (!is_whitespace(char_at(s, k))) break;
            e = k;
        }
        s = s.substr(b, e - b);
    };
}

Normalizer form(Form f) {
    return [f](std::string &s) { s = normalize(s, f); };
}

// byte_level.rs (normalizer): every byte as its GPT-2 character.
Normalizer byte_level(const Node &) {
    return [](std::string &s) {
        std::string out;
        for (const char c : s) append_char(out, byte_chars()[uint8_t(c)]);
        s = std::move(out);
    };
}

// precompiled.rs and the spm_precompiled crate: SentencePiece's charsmap (a u32 trie size, a
// darts-clone double array of u32 units, NUL-terminated replacements). Each grapheme cluster under
// 6 bytes whose shortest prefix is a key becomes that key's replacement (the whole cluster); the
// others go character by character.
class Charsmap {
public:
    explicit Charsmap(const Node &n) : where_(n.file() + ": " + n.path()) {
        const std::string blob = base64(n.at("precompiled_charsmap"));
        if (blob.size() < 4)
            n.fail("precompiled_charsmap: " + std::to_string(blob.size()) + " bytes");
        const uint32_t trie = u32(blob, 0);
        if (uint64_t(trie) + 4 > blob.size())
            n.fail("precompiled_charsmap: the trie size " + std::to_string(trie) + " is past its " +
                   std::to_string(blob.size()) + " bytes");
        for (size_t i = 0; i + 4 <= trie; i += 4) units_.push_back(u32(blob, 4 + i));
        strings_ = blob.substr(4 + trie);
        if (!detail::valid_utf8(strings_))
            n.fail("precompiled_charsmap: its replacement strings are not valid UTF-8");
    }

    // The replacement of the shortest key that is a prefix of `s`, if any.
    std::optional<std::string_view> transform(std::string_view s) const {
        size_t node = offset(unit(0));
        for (const char ch : s) {
            const auto c = uint8_t(ch);
            if (c == 0) break;
            node ^= c;
            const uint32_t u = unit(node);
            if ((u & ((1u << 31) | 0xFF)) != c) return std::nullopt;
            node ^= offset(u);
            if ((u >> 8) & 1) {
                const size_t at = unit(node) & ((1u << 31) - 1);
                if (at > strings_.size() ||
                    (at < strings_.size() && (uint8_t(strings_[at]) & 0xC0) == 0x80))
                    bad("replacement offset " + std::to_string(at) +
                        " is not at a character of the strings");
                const size_t end = strings_.find('\0', at);
                return std::string_view(strings_).substr(at,
                                                         end == std::string::npos ? end : end - at);
            }
        }
        return std::nullopt;
    }

    void operator()(std::string &s) const {
        std::string out;
        size_t at = 0;
        for (const size_t len : grapheme_lengths(s)) {
            const std::string_view g = std::string_view(s).substr(at, len);
            at += len;
            if (len < 6)
                if (const auto r = transform(g)) {
                    out += *r;
                    continue;
                }
            for (size_t i = 0; i < g.size(); i += char_len(uint8_t(g[i]))) {
                const std::string_view c = g.substr(i, char_len(uint8_t(g[i])));
                const auto r = transform(c);
                out += r ? *r : c;
            }
        }
        s = std::move(out);
    }

private:
    static uint32_t u32(const std::string &b, size_t at) {
        return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 |
               uint32_t(uint8_t(b[at + 2])) << 16 | uint32_t(uint8_t(b[at + 3])) << 24;
    }
    static size_t offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
    [[noreturn]] void bad(const std::string &what) const {
        throw Error(where_, std::nullopt, "Precompiled charsmap: " + what);
    }
    uint32_t unit(size_t i) const {
        if (i >= units_.size())
            bad("trie unit " + std::to_string(i) + " is past its " + std::to_string(units_.size()) +
                " units");
        return units_[i];
    }
    static std::string base64(const Node &n) {
        const std::string t = n.str();
        std::string out;
        uint32_t acc = 0;
        int bits = 0;
        for (const char c : t) {
            int v;
            if (c >= 'A' && c <= 'Z')
                v = c - 'A';
            else if (c >= 'a' && c <= 'z')
                v = c - 'a' + 26;
            else if (c >= '0' && c <= '9')
                v = c - '0' + 52;
            else if (c == '+')
                v = 62;
            else if (c == '/')
                v = 63;
            else if (c == '=')
                break;
            else
                n.fail("not base64");
            acc = acc << 6 | uint32_t(v);
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out += char((acc >> bits) & 0xFF);
            }
        }
        return out;
    }

    std::string where_;
    std::vector<uint32_t> units_;
    std::string strings_;
};

Normalizer precompiled(const Node &n) {
    auto map = std::make_shared<const Charsmap>(n);
    return [map](std::string &s) { (*map)(s); };
}

Normalizer sequence(const Node &n) {
    const Node list = n.sequence("normalizers");
    std::vector<Normalizer> each;
    for (size_t i = 0; i < list.size(); ++i) each.push_back(make_normalizer(list.at(i)));
    return [each](std::string &s) {
        for (const Normalizer &f : each) f(s);
    };
}

struct Row {
    const char *type;
    Normalizer (*make)(const Node &);
};
const Row kNormalizers[] = {
    {"Sequence", sequence},
    {"Replace", replace},
    {"Prepend", prepend},
    {"Precompiled", precompiled},
    {"BertNormalizer", bert},
    {"Strip", strip},
    {"StripAccents",
     [](const Node &) -> Normalizer {
         return [](std::string &s) { filter(s, is_combining_mark); };
     }},
    {"Lowercase",
     [](const Node &) -> Normalizer { return [](std::string &s) { s = lowercase(s); }; }},
    {"NFC", [](const Node &) { return form(Form::nfc); }},
    {"NFD", [](const Node &) { return form(Form::nfd); }},
    {"NFKC", [](const Node &) { return form(Form::nfkc); }},
    {"NFKD", [](const Node &) { return form(Form::nfkd); }},
    {"ByteLevel", byte_level},
};

}  // namespace

Normalizer make_normalizer(const Node &n) {
    const std::string type = n.type();
    for (const Row &r : kNormalizers)
        if (type == r.type) return r.make(n);
    n.fail("normalizer \"" + type + "\" is not implemented");
}

}  // namespace gguftool::tokenizer::interp
