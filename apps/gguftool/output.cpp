#include "output.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gguftool::cli {

bool Out::flush() {
    // Straight to the file descriptor, after whatever stdio holds: stdio would cut each block
    // into several writes.
    if (std::fflush(f_) != 0) failed_ = true;
    const char *p = buf_.data();
    size_t n = buf_.size();
    while (n > 0 && !failed_) {
        const ssize_t w = ::write(fileno(f_), p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) failed_ = true;
        if (w > 0) p += w, n -= size_t(w);
    }
    buf_.clear();
    return !failed_ && !std::ferror(f_);
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (s[i] >= 0x80), or 0 if it is not one.
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
    const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = at(i);
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return 0;
    }
    if (i + len > s.size()) return 0;
    if (at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (size_t k = 2; k < len; ++k)
        if ((at(i + k) & 0xC0) != 0x80) return 0;
    return len;
}

// Bytes that a JSON string can hold as they are (printable ASCII other than '"' and '\\').
constexpr auto kJsonPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
}();

}  // namespace

bool json_plain_long(std::string_view s) {
    unsigned special = json_special16(s.data() + s.size() - 16);
    for (size_t i = 0; i + 16 < s.size(); i += 16) special |= json_special16(s.data() + i);
    return special == 0;
}

void put_json_string_escaped(Out &out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out.put('"');
    size_t run = 0;  // start of the bytes not yet copied
    size_t i = 0;
    const auto copy_run = [&] { out.append(s.data() + run, i - run); };
    while (i < s.size()) {
        if (i + 8 <= s.size() && json_plain8(load_u64(s.data() + i))) {
            i += 8;
            continue;
        }
        const auto c = static_cast<unsigned char>(s[i]);
        if (kJsonPlain[c]) {
            ++i;
            continue;
        }
        if (c >= 0x80) {
            if (size_t len = utf8_sequence_length(s, i)) {
                i += len;
                continue;
            }
            copy_run();
            out.put("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        } else {
            copy_run();
            switch (c) {
                case '"':
                    out.put("\\\"");
                    break;
                case '\\':
                    out.put("\\\\");
                    break;
                case '\n':
                    out.put("\\n");
                    break;
                case '\t':
                    out.put("\\t");
                    break;
                case '\r':
                    out.put("\\r");
                    break;
                case '\b':
                    out.put("\\b");
                    break;
                case '\f':
                    out.put("\\f");
                    break;
                default: {
                    const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                    out.append(esc, 6);
                }
            }
        }
        run = ++i;
    }
    copy_run();
    out.put('"');
}

namespace {

// Walks `s` as put_display_string shows it, calling emit(piece, columns) per character.
// Terminal columns of code point `cp`: 2 for the East Asian wide ranges (CJK, Hangul, full-width
// forms, emoji), 1 otherwise. A short table, not full wcwidth: enough to keep columns aligned for
// the names found in models.
size_t code_point_columns(uint32_t cp) {
    static constexpr uint32_t kWide[][2] = {
        {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF}, {0x3400, 0x4DBF},
        {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
        {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
        {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
    };
    for (const auto &r : kWide)
        if (cp >= r[0] && cp <= r[1]) return 2;
    return 1;
}

uint32_t decode_utf8(std::string_view seq) {
    const auto b = [&](size_t k) { return uint32_t(static_cast<unsigned char>(seq[k])); };
    switch (seq.size()) {
        case 2:
            return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
        case 3:
            return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
        default:
            return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
    }
}

// Walks `s` as put_display_string shows it, calling emit(piece, columns, end) per character
// (`end`: the input offset after it); stops when emit returns false.
template <class Emit>
void walk_display(std::string_view s, bool quoted, Emit &&emit) {
    static constexpr char kHex[] = "0123456789abcdef";
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (quoted && (c == '"' || c == '\\')) {
            const char esc[2] = {'\\', char(c)};
            if (!emit(std::string_view(esc, 2), 2, i + 1)) return;
            ++i;
        } else if (c >= 0x20 && c < 0x7F) {
            if (!emit(s.substr(i, 1), 1, i + 1)) return;
            ++i;
        } else if (const size_t len = c >= 0x80 ? utf8_sequence_length(s, i) : 0; len > 0) {
            const std::string_view seq = s.substr(i, len);
            if (!emit(seq, code_point_columns(decode_utf8(seq)), i + len)) return;
            i += len;
        } else {
            char esc[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
            size_t n = 4;
            if (c == '\n') esc[1] = 'n', n = 2;
            if (c == '\t') esc[1] = 't', n = 2;
            if (c == '\r') esc[1] = 'r', n = 2;
            if (!emit(std::string_view(esc, n), n, i + 1)) return;
            ++i;
        }
    }
}

// True when none of the 8 bytes of x is outside printable ASCII (0x20-0x7E); the bit tricks of
// json_plain8 (output.hpp).
inline bool printable8(uint64_t x) {
    constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
    const uint64_t below_space = (x - kOnes * 0x20) & ~x & kHigh;
    const uint64_t y = x ^ (kOnes * 0x7F);
    const uint64_t del = (y - kOnes) & ~y & kHigh;
    return ((x & kHigh) | below_space | del) == 0;
}

bool printable_ascii(std::string_view s) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8)
        if (!printable8(load_u64(s.data() + i))) return false;
    for (; i < s.size(); ++i)
        if (const auto u = static_cast<unsigned char>(s[i]); u < 0x20 || u >= 0x7F) return false;
    return true;
}

}  // namespace

size_t put_display_string(Out &out, std::string_view s, size_t max_bytes, bool quoted) {
    if (s.size() <= max_bytes && printable_ascii(s) &&
        (!quoted || s.find_first_of("\"\\") == std::string_view::npos)) {
        out.put(s);
        return s.size();
    }
    size_t columns = 0;
    bool cut = false;
    walk_display(s, quoted, [&](std::string_view piece, size_t cols, size_t end) {
        if (end > max_bytes) {
            cut = true;
            return false;
        }
        out.put(piece);
        columns += cols;
        return true;
    });
    if (cut) {
        out.put("...");
        columns += 3;
    }
    return columns;
}

size_t display_width(std::string_view s) {
    if (printable_ascii(s)) return s.size();
    size_t columns = 0;
    walk_display(s, false, [&](std::string_view, size_t cols, size_t) {
        columns += cols;
        return true;
    });
    return columns;
}

// Negative zero keeps a decimal point: JSON readers take "-0" for the integer 0.
void put_float(Out &out, float v) {
    if (v == 0 && std::signbit(v))
        out.put("-0.0");
    else
        out.print("{}", v);
}

void put_double(Out &out, double v) {
    if (v == 0 && std::signbit(v))
        out.put("-0.0");
    else
        out.print("{}", v);
}

Style style_for(std::FILE *f) {
    Style s;
    const char *no_color = std::getenv("NO_COLOR");
    if (!isatty(fileno(f)) || (no_color && *no_color)) return s;
    s.bold = "\033[1m";
    s.dim = "\033[2m";
    s.key = "\033[36m";
    s.type = "\033[33m";
    s.reset = "\033[0m";
    return s;
}

std::string human_bytes(double bytes) {
    static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    for (; bytes >= 1024 && u < 4; ++u) bytes /= 1024;
    return u == 0 ? fmt::format("{:.0f} {}", bytes, kUnits[u])
                  : fmt::format("{:.2f} {}", bytes, kUnits[u]);
}

}  // namespace gguftool::cli
