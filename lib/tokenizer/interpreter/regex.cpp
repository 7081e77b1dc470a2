// Regexes in PCRE2 with Oniguruma's meaning (the Rust crate's SysRegex: the onig crate,
// tokenizers/src/utils/onig.rs), bounded by PCRE2's limits.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "gguftool/error.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {
namespace {

// A match may take this many steps of PCRE2's matcher (backtracks), nest this deep and take this
// much heap: far past what a tokenizer's regex takes on a piece, and reached in well under a second
// by one that backtracks catastrophically.
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kDepthLimit = 100'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;  // the interpreter's backtracking memory

// Oniguruma's classes (the onig crate's default syntax, Ruby's, on UTF-8; measured in the Rust
// client: \s matches U+0085, \w matches marks and every number, \h is a hex digit) written as PCRE2
// reads them. Outside a class and inside one; nullptr: not expressible inside a class.
struct Escape {
    char letter;
    const char *outside, *inside;
};
#define WORD "\\p{L}\\p{M}\\p{N}\\p{Pc}"
const Escape kEscapes[] = {
    {'s', "[\\s\\x{85}]", "\\s\\x{85}"},
    {'S', "[^\\s\\x{85}]", nullptr},
    {'w', "[" WORD "]", WORD},
    {'W', "[^" WORD "]", nullptr},
    {'h', "[0-9A-Fa-f]", "0-9A-Fa-f"},
    {'H', "[^0-9A-Fa-f]", nullptr},
    {'b', "(?:(?<=[" WORD "])(?![" WORD "])|(?<![" WORD "])(?=[" WORD "]))", "\\x{08}"},
    {'B', "(?:(?<=[" WORD "])(?=[" WORD "])|(?<![" WORD "])(?![" WORD "]))", nullptr},
};
#undef WORD

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string pcre2_pattern(std::string_view p, const std::string &where) {
    const auto fail = [&](size_t at, const std::string &what) {
        throw Error(where, std::nullopt,
                    "regex \"" + std::string(p) + "\" at " + std::to_string(at) + ": " + what);
    };
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\') {
            if (i + 1 == p.size()) fail(i, "ends with a backslash");
            const char e = p[++i];
            const Escape *x = nullptr;
            for (const Escape &k : kEscapes)
                if (k.letter == e) x = &k;
            if (x) {
                const char *s = in_class ? x->inside : x->outside;
                if (!s) fail(i - 1, std::string("\\") + e + " inside a character class");
                out += s;
            } else if (e == 'u' && i + 4 < p.size() && is_hex(p[i + 1]) && is_hex(p[i + 2]) &&
                       is_hex(p[i + 3]) && is_hex(p[i + 4])) {
                out += "\\x{" + std::string(p.substr(i + 1, 4)) + "}";
                i += 4;
            } else {
                out += '\\';
                out += e;
            }
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal.
            if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
            if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
            continue;
        }
        if (in_class && c == '[') {
            if (i + 1 < p.size() && p[i + 1] == ':') {  // a POSIX class: copied to its ":]"
                const size_t end = p.find(":]", i + 2);
                if (end == std::string_view::npos) fail(i, "unterminated POSIX class");
                out += p.substr(i, end + 2 - i);
                i = end + 1;
                continue;
            }
            fail(i, "a class inside a class (Oniguruma's set operations) is not supported");
        }
        if (in_class && c == ']') in_class = false;
        out += c;
    }
    return out;
}

struct Regex::Code {
    pcre2_code *code = nullptr;
    pcre2_match_context *context = nullptr;
    ~Code() {
        pcre2_match_context_free(context);
        pcre2_code_free(code);
    }
};

Regex::Regex(std::string_view pattern, bool literal, std::string where) : where_(std::move(where)) {
    const std::string translated = literal ? std::string(pattern) : pcre2_pattern(pattern, where_);
    auto code = std::make_shared<Code>();
    pcre2_compile_context *cc = pcre2_compile_context_create(nullptr);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    // Oniguruma (Ruby syntax): ^ and $ at every line's start and end, . matches a newline too;
    // Unicode properties for \d and the POSIX classes.
    const uint32_t options = PCRE2_UTF | PCRE2_NO_UTF_CHECK |
                             (literal ? PCRE2_LITERAL : PCRE2_UCP | PCRE2_MULTILINE | PCRE2_DOTALL);
    int err = 0;
    PCRE2_SIZE at = 0;
    code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                               options, &err, &at, cc);
    pcre2_compile_context_free(cc);
    if (!code->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        throw Error(where_, std::nullopt,
                    "regex \"" + std::string(pattern) +
                        "\": " + reinterpret_cast<const char *>(msg) + " (at " +
                        std::to_string(at) + " of its PCRE2 form \"" + translated + "\")");
    }
    pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE);  // where available; else interpreted
    code->context = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(code->context, kMatchLimit);
    pcre2_set_depth_limit(code->context, kDepthLimit);
    pcre2_set_heap_limit(code->context, kHeapLimitKiB);
    code_ = std::move(code);
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view s) const {
    std::vector<std::pair<size_t, size_t>> out;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code_->code, nullptr);
    if (!md) throw Error(where_, std::nullopt, "out of memory for a regex match");
    const auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
    size_t last_end = 0;
    std::optional<size_t> last_match_end;
    while (last_end <= s.size()) {
        int rc = pcre2_match(code_->code, subject, s.size(), last_end, PCRE2_NO_UTF_CHECK, md,
                             code_->context);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the JIT's stack: the interpreter has the heap
            rc = pcre2_match(code_->code, subject, s.size(), last_end,
                             PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, code_->context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            pcre2_match_data_free(md);
            throw Error(where_, std::nullopt,
                        "regex match from byte " + std::to_string(last_end) + " of a " +
                            std::to_string(s.size()) +
                            "-byte piece: " + reinterpret_cast<const char *>(msg));
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (b == e && last_match_end == e) {
            last_end += last_end < s.size() ? char_len(uint8_t(s[last_end])) : 1;
            continue;
        }
        last_end = e, last_match_end = e;
        out.emplace_back(b, e);
    }
    pcre2_match_data_free(md);
    return out;
}

}  // namespace gguftool::tokenizer::interp
