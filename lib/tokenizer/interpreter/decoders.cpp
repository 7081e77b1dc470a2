// Decoders (tokenizers/src/decoders/*.rs, and the Decoder halves of byte_level.rs, metaspace.rs
// and replace.rs): each maps the list of token texts to a new list; decode joins the last one.
#include <unordered_map>

#include "../tokenizer_impl.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {
namespace {

// byte_level.rs: each token's characters back to bytes (a token with a character outside the
// table kept as its UTF-8), all joined, then read as UTF-8 with U+FFFD for what is not.
Decoder byte_level(const Node &) {
    return [](std::vector<std::string> &tokens) {
        static const std::unordered_map<uint32_t, char> to_byte = [] {
            std::unordered_map<uint32_t, char> m;
            for (uint32_t b = 0; b < 256; ++b) m[byte_chars()[b]] = char(b);
            return m;
        }();
        std::string bytes;
        for (const std::string &t : tokens) {
            std::string mine;
            bool all = true;
            for (size_t i = 0; i < t.size() && all; i += char_len(uint8_t(t[i]))) {
                const auto it = to_byte.find(char_at(t, i));
                if (it == to_byte.end())
                    all = false;
                else
                    mine += it->second;
            }
            bytes += all ? mine : t;
        }
        tokens = {utf8_lossy(bytes)};
    };
}

// replace.rs: the pattern's matches in each token replaced by the content.
Decoder replace(const Node &n) {
    const Node p = n.at("pattern");
    std::shared_ptr<const Regex> re;
    if (p.has("String"))
        re = std::make_shared<Regex>(p.at("String").str(), true, n.file() + ": " + p.path());
    else if (p.has("Regex"))
        re = std::make_shared<Regex>(p.at("Regex").str(), false, n.file() + ": " + p.path());
    else
        p.fail("neither {\"String\": ...} nor {\"Regex\": ...}");
    return [re, content = n.at("content").str()](std::vector<std::string> &tokens) {
        for (std::string &t : tokens) {
            std::string out;
            size_t last = 0;
            for (const auto &[b, e] : re->find_all(t)) {
                out.append(t, last, b - last);
                out += content;
                last = e;
            }
            out.append(t, last);
            t = std::move(out);
        }
    };
}

// byte_fallback.rs: runs of <0xXX> tokens as their bytes, or one U+FFFD per byte when the run is
// not UTF-8.
Decoder byte_fallback(const Node &) {
    return [](std::vector<std::string> &tokens) {
        std::vector<std::string> out;
        std::string run;
        size_t run_tokens = 0;
        const auto flush = [&] {
            if (!run_tokens) return;
            if (detail::valid_utf8(run))
                out.push_back(run);
            else
                for (size_t i = 0; i < run_tokens; ++i) out.emplace_back("\xEF\xBF\xBD");
            run.clear(), run_tokens = 0;
        };
        for (std::string &t : tokens) {
            // u8::from_str_radix(&t[3..5], 16): two hex digits, or a '+' and one.
            int v = -1;
            if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
                const auto hex = [](char c) {
                    return c >= '0' && c <= '9'   ? c - '0'
                           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : -1;
                };
                if (t[3] == '+' && hex(t[4]) >= 0)
                    v = hex(t[4]);
                else if (hex(t[3]) >= 0 && hex(t[4]) >= 0)
                    v = hex(t[3]) * 16 + hex(t[4]);
            }
            if (v >= 0) {
                run += char(v), ++run_tokens;
                continue;
            }
            flush();
            out.push_back(std::move(t));
        }
        flush();
        tokens = std::move(out);
    };
}

Decoder fuse(const Node &) {
    return [](std::vector<std::string> &tokens) {
        std::string all;
        for (const std::string &t : tokens) all += t;
        tokens = {all};
    };
}

// strip.rs: up to `start` leading and `stop` trailing `content` characters off each token.
Decoder strip(const Node &n) {
    const uint32_t content = n.at("content").one_char();
    const auto start = size_t(n.at("start").integer(0, INT64_MAX));
    const auto stop = size_t(n.at("stop").integer(0, INT64_MAX));
    return [=](std::vector<std::string> &tokens) {
        for (std::string &t : tokens) {
            const std::vector<uint32_t> c = chars(t);
            size_t b = 0, e = c.size();
            while (b < start && b < c.size() && c[b] == content) ++b;
            for (size_t i = 0; i < stop && e > b && c[e - 1] == content; ++i) --e;
            t = from_chars(std::vector<uint32_t>(c.begin() + long(b), c.begin() + long(e)));
        }
    };
}

// metaspace.rs: the replacement character back to a space, dropped in the first token unless
// prepend_scheme is never.
Decoder metaspace(const Node &n) {
    const uint32_t rep = n.at("replacement").one_char();
    std::string scheme = n.str_or("prepend_scheme", "always");
    if (n.has("add_prefix_space") && !n.at("add_prefix_space").boolean()) scheme = "never";
    return [=](std::vector<std::string> &tokens) {
        for (size_t i = 0; i < tokens.size(); ++i) {
            std::string out;
            for (const uint32_t c : chars(tokens[i])) {
                if (c != rep)
                    append_char(out, c);
                else if (i != 0 || scheme == "never")
                    out += ' ';
            }
            tokens[i] = std::move(out);
        }
    };
}

// wordpiece.rs: the prefix off continuations, a space before the other tokens (not the first),
// and with cleanup the spaces before punctuation and English contractions removed.
Decoder word_piece(const Node &n) {
    const std::string prefix = n.str_or("prefix", "##");
    const bool cleanup = n.bool_or("cleanup", true);
    return [=](std::vector<std::string> &tokens) {
        static const std::pair<const char *, const char *> kCleanup[] = {
            {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
            {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
            {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (size_t i = 0; i < tokens.size(); ++i) {
            std::string &t = tokens[i];
            if (i != 0)
                t = t.compare(0, prefix.size(), prefix) == 0 ? t.substr(prefix.size()) : " " + t;
            if (!cleanup) continue;
            for (const auto &[from, to] : kCleanup) {
                std::string out;
                const std::string_view f = from;
                size_t last = 0;
                for (size_t at; (at = t.find(f, last)) != std::string::npos; last = at + f.size())
                    out.append(t, last, at - last) += to;
                out.append(t, last);
                t = std::move(out);
            }
        }
    };
}

Decoder sequence(const Node &n) {
    const Node list = n.sequence("decoders");
    std::vector<Decoder> each;
    for (size_t i = 0; i < list.size(); ++i) each.push_back(make_decoder(list.at(i)));
    return [each](std::vector<std::string> &tokens) {
        for (const Decoder &d : each) d(tokens);
    };
}

struct Row {
    const char *type;
    Decoder (*make)(const Node &);
};
const Row kDecoders[] = {
    {"Sequence", sequence},   {"ByteLevel", byte_level},
    {"Replace", replace},     {"ByteFallback", byte_fallback},
    {"Fuse", fuse},           {"Strip", strip},
    {"Metaspace", metaspace}, {"WordPiece", word_piece},
};

}  // namespace

Decoder make_decoder(const Node &n) {
    const std::string type = n.type();
    for (const Row &r : kDecoders)
        if (type == r.type) return r.make(n);
    n.fail("decoder \"" + type + "\" is not implemented");
}

}  // namespace gguftool::tokenizer::interp
