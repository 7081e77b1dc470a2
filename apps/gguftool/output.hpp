// Output helpers for the CLI: a buffered writer for stdout, JSON and human string escaping,
// number formatting and terminal colours.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace gguftool::cli {

// Collects output in memory and writes it in large blocks: formatting straight into one buffer is
// what keeps `dump --json` of a 150,000-entry vocabulary fast.
class Out {
public:
    explicit Out(std::FILE *f) : f_(f) {}
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
    void put_uint(uint64_t v) {
        const fmt::format_int f(v);
        append(f.data(), f.size());
    }
    void put_int(int64_t v) {
        const fmt::format_int f(v);
        append(f.data(), f.size());
    }
    // Raw bytes; one memcpy (fmt's buffer append copies in a loop, slow for short pieces).
    void append(const char *p, size_t n) {
        const size_t at = buf_.size();
        buf_.resize(at + n);
        std::memcpy(buf_.data() + at, p, n);
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
        const fmt::format_int f(v);
        put_right(std::string_view(f.data(), f.size()), width);
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
    fmt::memory_buffer buf_;
};

// Appends `s` as a JSON string literal: quotes, backslashes and control characters escaped;
// bytes that are not valid UTF-8 are replaced by U+FFFD so the document is always valid JSON.
void put_json_string(Out &out, std::string_view s);

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
