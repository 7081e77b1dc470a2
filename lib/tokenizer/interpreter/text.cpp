// The interpreter's JSON reader and its UTF-8 and Unicode helpers (utf8proc).
#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "gguftool/error.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {

// ---------------------------------------------------------------------------------------------
// JSON

void Node::fail(const std::string &what) const {
    throw Error(file_, std::nullopt, (path_.empty() ? "/" : path_) + ": " + what);
}

bool Node::has(const char *key) const {
    return j_->is_object() && j_->contains(key) && !(*j_)[key].is_null();
}

Node Node::at(const char *key) const {
    if (!j_->is_object()) fail("not an object");
    const auto it = j_->find(key);
    if (it == j_->end()) fail(std::string("has no \"") + key + "\"");
    return Node(*it, file_, path_ + "/" + key);
}

Node Node::at(size_t i) const {
    if (!j_->is_array() || i >= j_->size()) fail("has no element " + std::to_string(i));
    return Node((*j_)[i], file_, path_ + "/" + std::to_string(i));
}

std::optional<Node> Node::get(const char *key) const {
    if (!has(key)) return std::nullopt;
    return at(key);
}

std::string Node::str() const {
    if (!j_->is_string()) fail("not a string");
    return j_->get<std::string>();
}

bool Node::boolean() const {
    if (!j_->is_boolean()) fail("not a boolean");
    return j_->get<bool>();
}

int64_t Node::integer(int64_t lo, int64_t hi) const {
    if (!j_->is_number_integer()) fail("not an integer");
    if (j_->is_number_unsigned() && j_->get<uint64_t>() > uint64_t(INT64_MAX)) fail("out of range");
    const int64_t v = j_->get<int64_t>();
    if (v < lo || v > hi)
        fail(std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]");
    return v;
}

double Node::number() const {
    if (!j_->is_number()) fail("not a number");
    const double v = j_->get<double>();
    if (!std::isfinite(v)) fail("not finite");
    return v;
}

size_t Node::size() const {
    if (!j_->is_array()) fail("not an array");
    return j_->size();
}

std::string Node::type() const {
    return at("type").str();
}

uint32_t Node::one_char() const {
    const std::string s = str();
    if (s.empty() || char_len(uint8_t(s[0])) != s.size()) fail("not a single character");
    return char_at(s, 0);
}

std::string Node::str_or(const char *key, const std::string &dflt) const {
    return has(key) ? at(key).str() : dflt;
}

bool Node::bool_or(const char *key, bool dflt) const {
    return has(key) ? at(key).boolean() : dflt;
}

Node Node::sequence(const char *key) const {
    if (std::count(path_.begin(), path_.end(), '/') > 2 * 64) fail("Sequence nested too deep");
    return at(key);
}

nlohmann::json parse_json(std::string_view text, const std::string &file) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error &e) {
        throw Error(file, e.byte ? std::optional<uint64_t>(e.byte - 1) : std::nullopt,
                    "not valid JSON: " + std::string(e.what()));
    }
}

// ---------------------------------------------------------------------------------------------
// UTF-8

size_t char_len(uint8_t lead) {
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

uint32_t char_at(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return uint32_t(uint8_t(s[i + k])); };
    switch (char_len(uint8_t(s[i]))) {
        case 1:
            return b(0);
        case 2:
            return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
        case 3:
            return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
        default:
            return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
    }
}

void append_char(std::string &out, uint32_t cp) {
    uint8_t buf[4];
    out.append(reinterpret_cast<const char *>(buf),
               size_t(utf8proc_encode_char(utf8proc_int32_t(cp), buf)));
}

std::vector<uint32_t> chars(std::string_view s) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < s.size(); i += char_len(uint8_t(s[i]))) out.push_back(char_at(s, i));
    return out;
}

std::string from_chars(const std::vector<uint32_t> &cps) {
    std::string out;
    for (const uint32_t c : cps) append_char(out, c);
    return out;
}

std::string utf8_lossy(std::string_view s) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        const auto c = uint8_t(s[i]);
        // The well-formed sequences (Unicode Table 3-7): the length and the second byte's range.
        size_t n = 0;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            n = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        }
        if (n == 0) {  // not a lead byte: one U+FFFD for it
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        size_t k = 1;
        for (; k < n && i + k < s.size(); ++k) {
            const auto d = uint8_t(s[i + k]);
            if (k == 1 ? (d < lo || d > hi) : (d & 0xC0) != 0x80) break;
        }
        if (k == n)
            out.append(s.substr(i, n));
        else
            out += "\xEF\xBF\xBD";  // the maximal subpart, one U+FFFD
        i += k;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Unicode

namespace {

utf8proc_category_t category(uint32_t cp) {
    return utf8proc_category(utf8proc_int32_t(cp));
}

}  // namespace

bool is_whitespace(uint32_t cp) {
    // White_Space: the separators (Zs, Zl, Zp) and the controls U+0009..U+000D and U+0085.
    const utf8proc_category_t c = category(cp);
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || c == UTF8PROC_CATEGORY_ZS ||
           c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_punctuation(uint32_t cp) {
    const utf8proc_category_t c = category(cp);
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool is_other(uint32_t cp) {
    const utf8proc_category_t c = category(cp);
    return c == UTF8PROC_CATEGORY_CN || c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF ||
           c == UTF8PROC_CATEGORY_CO || c == UTF8PROC_CATEGORY_CS;
}

bool is_mark_nonspacing(uint32_t cp) {
    return category(cp) == UTF8PROC_CATEGORY_MN;
}

bool is_combining_mark(uint32_t cp) {
    const utf8proc_category_t c = category(cp);
    return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}

std::string normalize(std::string_view s, Form form) {
    if (s.empty()) return {};
    int options = UTF8PROC_STABLE;
    options |= form == Form::nfc || form == Form::nfkc ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE;
    if (form == Form::nfkc || form == Form::nfkd) options |= UTF8PROC_COMPAT;
    utf8proc_uint8_t *out = nullptr;
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(s.data()),
                     utf8proc_ssize_t(s.size()), &out, utf8proc_option_t(options));
    if (n < 0) throw Error(std::string("Unicode normalization: ") + utf8proc_errmsg(n));
    std::string r(reinterpret_cast<const char *>(out), size_t(n));
    std::free(out);
    return r;
}

std::string lowercase(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i += char_len(uint8_t(s[i]))) {
        const uint32_t c = char_at(s, i);
        // SpecialCasing.txt's one unconditional lowercase mapping to more than one character
        // (utf8proc has the simple mappings): U+0130 to "i" U+0307.
        if (c == 0x130) {
            out += "i\xCC\x87";
            continue;
        }
        append_char(out, uint32_t(utf8proc_tolower(utf8proc_int32_t(c))));
    }
    return out;
}

std::vector<size_t> grapheme_lengths(std::string_view s) {
    std::vector<size_t> out;
    utf8proc_int32_t state = 0;
    size_t start = 0;
    for (size_t i = 0; i < s.size();) {
        const size_t n = char_len(uint8_t(s[i]));
        if (i + n < s.size() &&
            utf8proc_grapheme_break_stateful(utf8proc_int32_t(char_at(s, i)),
                                             utf8proc_int32_t(char_at(s, i + n)), &state)) {
            out.push_back(i + n - start);
            start = i + n;
        }
        i += n;
    }
    if (start < s.size()) out.push_back(s.size() - start);
    return out;
}

const std::vector<uint32_t> &byte_chars() {
    // tokenizers/src/pre_tokenizers/byte_level.rs bytes_char (GPT-2's bytes_to_unicode): printable
    // bytes as themselves, the others as U+0100 + n in byte order.
    static const std::vector<uint32_t> table = [] {
        std::vector<uint32_t> t(256);
        uint32_t n = 0;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable =
                (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            t[b] = printable ? b : 256 + n++;
        }
        return t;
    }();
    return table;
}

}  // namespace gguftool::tokenizer::interp
