// Output helpers for the CLI: a buffered writer for stdout, JSON and human string escaping,
// number formatting and terminal colours.
#pragma once

#include <fmt/format.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace gguftool::cli {

inline uint64_t load_u64(const char *p) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
}
inline uint32_t load_u32(const char *p) {
    uint32_t x;
    std::memcpy(&x, p, 4);
    return x;
}

// Copies n bytes. Short copies are done here, as two overlapping loads and stores: a call to
// memcpy costs more than copying a token.
inline void copy_bytes(char *to, const char *from, size_t n) {
    if (n > 16 && n <= 32) {
        char a[16], b[16];
        std::memcpy(a, from, 16);
        std::memcpy(b, from + n - 16, 16);
        std::memcpy(to, a, 16);
        std::memcpy(to + n - 16, b, 16);
    } else if (n >= 8 && n <= 16) {
        const uint64_t a = load_u64(from), b = load_u64(from + n - 8);
        std::memcpy(to, &a, 8);
        std::memcpy(to + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        const uint32_t a = load_u32(from), b = load_u32(from + n - 4);
        std::memcpy(to, &a, 4);
        std::memcpy(to + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; ++i) to[i] = from[i];
    } else {
        std::memcpy(to, from, n);
    }
}

inline size_t decimal_digits(uint64_t v) {
    size_t n = 1;
    for (; v >= 100; v /= 100) n += 2;
    return n + (v >= 10);
}

// Writes the decimal_digits(v) digits of v at `to`, two at a time.
inline void write_decimal(char *to, uint64_t v) {
    static constexpr auto kPairs = [] {
        std::array<char, 200> t{};
        for (int i = 0; i < 100; ++i)
            t[2 * i] = char('0' + i / 10), t[2 * i + 1] = char('0' + i % 10);
        return t;
    }();
    char *end = to + decimal_digits(v);
    for (; v >= 100; v /= 100) end -= 2, std::memcpy(end, &kPairs[2 * (v % 100)], 2);
    if (v >= 10)
        std::memcpy(end - 2, &kPairs[2 * v], 2);
    else
        end[-1] = char('0' + v);
}

// Collects output in memory and writes it in large blocks: formatting straight into one buffer is
// what keeps `dump --json` of a 150,000-entry vocabulary fast.
class Out {
public:
    explicit Out(std::FILE *f) : f_(f) { buf_.reserve(2 * kFlushAt); }  // grown once, not by steps
    ~Out() { flush(); }
    Out(const Out &) = delete;
    Out &operator=(const Out &) = delete;

    template <class... A>
    void print(fmt::format_string<A...> format, A &&...args) {
        fmt::format_to(fmt::appender(buf_), format, std::forward<A>(args)...);
        maybe_flush();
    }
    void put(std::string_view s) {
        append(s.data(), s.size());
        maybe_flush();
    }
    void put(char c) { buf_.push_back(c); }
    // Decimal integers, written straight into the buffer (copying them from a scratch buffer
    // would read bytes back just after writing them, which stalls the CPU).
    void put_uint(uint64_t v) { write_decimal(extend(decimal_digits(v)), v); }
    void put_int(int64_t v) {
        if (v < 0) put('-');
        put_uint(v < 0 ? 0 - uint64_t(v) : uint64_t(v));
    }
    // Raw bytes (fmt's buffer append copies in a loop, slow for short pieces).
    void append(const char *p, size_t n) {
        const size_t at = buf_.size();
        buf_.resize(at + n);
        copy_bytes(buf_.data() + at, p, n);
    }
    // Room for n more bytes at the end, for the caller to fill.
    char *extend(size_t n) {
        const size_t at = buf_.size();
        buf_.resize(at + n);
        return buf_.data() + at;
    }
    // `s` between double quotes, as it is.
    void put_quoted(std::string_view s) {
        const size_t at = buf_.size();
        buf_.resize(at + s.size() + 2);
        char *p = buf_.data() + at;
        p[0] = '"';
        copy_bytes(p + 1, s.data(), s.size());
        p[s.size() + 1] = '"';
    }
    // `s` padded with spaces to `width` columns (s.size() columns: ASCII only).
    void put_left(std::string_view s, size_t width) {
        put(s);
        pad(s.size(), width);
    }
    void put_right(std::string_view s, size_t width) {
        pad(s.size(), width);
        put(s);
    }
    void put_right(uint64_t v, size_t width) {
        pad(decimal_digits(v), width);
        put_uint(v);
    }
    // Spaces from column `used` to column `width`.
    void pad(size_t used, size_t width) {
        if (used < width) append(kSpaces, std::min(width - used, sizeof kSpaces - 1));
        for (size_t i = used + sizeof kSpaces - 1; i < width; ++i) buf_.push_back(' ');
    }

    void maybe_flush() {
        if (buf_.size() >= kFlushAt) flush();
    }
    // Writes what is buffered; false if the stream reported an error (now or earlier).
    bool flush();

private:
    static constexpr size_t kFlushAt = 1 << 16;
    static constexpr char kSpaces[] = "                                ";
    std::FILE *f_;
    bool failed_ = false;
    fmt::memory_buffer buf_;
};

// The bytes of x that need attention in a JSON string (0 if none): all but printable ASCII other
// than '"' and '\\'. (Bit tricks from "Bit Twiddling Hacks": a byte is below n when (x - n)
// borrows into its top bit.)
inline uint64_t json_special8(uint64_t x) {
    constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
    const auto has_zero = [&](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
    const uint64_t below_space = (x - kOnes * 0x20) & ~x & kHigh;
    return (x & kHigh) | below_space | has_zero(x ^ (kOnes * '"')) | has_zero(x ^ (kOnes * '\\'));
}
inline bool json_plain8(uint64_t x) {
    return json_special8(x) == 0;
}

// The bytes of the 16 at p that need attention in a JSON string, one bit each (0 if none).
// SSE2 is part of x86-64; elsewhere two words of json_special8.
inline unsigned json_special16(const char *p) {
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    // Signed bytes: those of 0x80 and above are negative, so "below a space" finds them too.
    const __m128i special = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    return unsigned(_mm_movemask_epi8(special));
#else
    return (json_special8(load_u64(p)) | json_special8(load_u64(p + 8))) != 0;
#endif
}

bool json_plain_long(std::string_view s);  // json_plain of more than 32 bytes

// True when every byte of `s` can stand in a JSON string as it is. Words are read with
// overlapping loads, which cover every byte and read none outside the string.
inline bool json_plain(std::string_view s) {
    const char *p = s.data();
    const size_t n = s.size();
    if (n > 32) return json_plain_long(s);
    if (n >= 16) return (json_special16(p) | json_special16(p + n - 16)) == 0;
    if (n >= 8) return (json_special8(load_u64(p)) | json_special8(load_u64(p + n - 8))) == 0;
    if (n >= 4) return json_plain8(load_u32(p) | uint64_t(load_u32(p + n - 4)) << 32);
    uint64_t x = 0x2020202020202020;  // spaces, which are plain
    for (size_t k = 0; k < n; ++k) x = x << 8 | static_cast<unsigned char>(p[k]);
    return json_plain8(x);
}

void put_json_string_escaped(Out &out, std::string_view s);

// Appends `s` as a JSON string literal: quotes, backslashes and control characters escaped;
// bytes that are not valid UTF-8 are replaced by U+FFFD so the document is always valid JSON.
// The usual string needs no escape and is copied whole, inline: this runs once per vocabulary
// entry.
inline void put_json_string(Out &out, std::string_view s) {
    if (json_plain(s))
        out.put_quoted(s);
    else
        put_json_string_escaped(out, s);
    out.maybe_flush();
}

// Appends `s` for a terminal: control characters as \n, \t, \xNN, invalid UTF-8 bytes as \xNN,
// and, when `quoted` (for a string shown between double quotes), '"' and '\' as \" and \\.
// Cut after `max_bytes` bytes of input (at a character boundary) with "..." appended.
// Returns the number of terminal columns written.
size_t put_display_string(Out &out, std::string_view s, size_t max_bytes, bool quoted = false);

// Terminal columns `s` takes as put_display_string writes it (unquoted, not cut).
size_t display_width(std::string_view s);

// Shortest text that reads back as the same value ("0.1", "1e-05", "-0.0"); "nan", "inf", "-inf"
// for non-finite values. JSON writers must test std::isfinite first.
void put_float(Out &out, float v);
void put_double(Out &out, double v);

// A byte count for people: "512 B", "899.62 KiB", "1.00 MiB" (powers of 1024).
std::string human_bytes(double bytes);

// `noun` as it follows the count n: "1 tensor", "2 tensors" (nouns with a regular plural).
inline std::string plural(uint64_t n, std::string_view noun) {
    std::string s(noun);
    if (n != 1) s += 's';
    return s;
}

// ANSI styles; all empty when colour is off.
struct Style {
    const char *bold = "";
    const char *dim = "";
    const char *key = "";
    const char *type = "";
    const char *reset = "";
};

// Colour only when `f` is a terminal and NO_COLOR is not set (https://no-color.org).
Style style_for(std::FILE *f);

}  // namespace gguftool::cli
