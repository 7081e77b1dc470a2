// Pre-tokenizers (tokenizers/src/pre_tokenizers/*.rs) and the splitting they share
// (tokenizers/src/tokenizer/pattern.rs find_matches, normalizer.rs NormalizedString::split,
// pre_tokenizer.rs PreTokenizedString::split).
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {

std::vector<Span> regex_spans(const Regex &re, std::string_view s) {
    if (s.empty()) return {{0, 0, false}};
    std::vector<Span> out;
    size_t prev = 0;
    for (const auto &[b, e] : re.find_all(s)) {
        if (prev != b) out.push_back({prev, b, false});
        out.push_back({b, e, true});
        prev = e;
    }
    if (prev != s.size()) out.push_back({prev, s.size(), false});
    return out;
}

std::vector<Span> char_spans(const std::function<bool(uint32_t)> &is, std::string_view s) {
    if (s.empty()) return {{0, 0, false}};
    std::vector<Span> out;
    size_t last = 0;
    for (size_t i = 0; i < s.size();) {
        const size_t n = char_len(uint8_t(s[i]));
        if (is(char_at(s, i))) {
            if (last < i) out.push_back({last, i, false});
            out.push_back({i, i + n, true});
            last = i + n;
        }
        i += n;
    }
    if (last < s.size()) out.push_back({last, s.size(), false});
    return out;
}

std::vector<std::pair<size_t, size_t>> split_ranges(std::vector<Span> spans, Behavior behavior) {
    std::vector<Span> kept;
    bool previous_match = false;
    switch (behavior) {
        case Behavior::isolated:
            for (Span &s : spans) s.match = false;
            kept = std::move(spans);
            break;
        case Behavior::removed:
            kept = std::move(spans);
            break;
        case Behavior::contiguous:
            for (const Span &s : spans) {
                if (s.match == previous_match && !kept.empty())
                    kept.back().end = s.end;
                else
                    kept.push_back({s.begin, s.end, false});
                previous_match = s.match;
            }
            break;
        case Behavior::merged_with_previous:
            for (const Span &s : spans) {
                if (s.match && !previous_match && !kept.empty())
                    kept.back().end = s.end;
                else
                    kept.push_back({s.begin, s.end, false});
                previous_match = s.match;
            }
            break;
        case Behavior::merged_with_next:
            for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
                if (it->match && !previous_match && !kept.empty())
                    kept.back().begin = it->begin;
                else
                    kept.push_back({it->begin, it->end, false});
                previous_match = it->match;
            }
            std::reverse(kept.begin(), kept.end());
            break;
    }
    std::vector<std::pair<size_t, size_t>> out;
    for (const Span &s : kept)
        if (!s.match) out.emplace_back(s.begin, s.end);
    return out;
}

void split_pieces(
    Pieces &pieces,
    const std::function<std::vector<std::pair<size_t, size_t>>(std::string &)> &ranges_of) {
    Pieces out;
    out.reserve(pieces.size());
    for (Piece &p : pieces) {
        if (p.id >= 0) {
            out.push_back(std::move(p));
            continue;
        }
        for (const auto &[b, e] : ranges_of(p.text))
            if (e > b) out.push_back({p.text.substr(b, e - b), -1, p.at_start && b == 0});
    }
    pieces = std::move(out);
}

namespace {

Behavior behavior_of(const Node &n) {
    static const std::pair<const char *, Behavior> kBehaviors[] = {
        {"Removed", Behavior::removed},
        {"Isolated", Behavior::isolated},
        {"MergedWithPrevious", Behavior::merged_with_previous},
        {"MergedWithNext", Behavior::merged_with_next},
        {"Contiguous", Behavior::contiguous}};
    const std::string b = n.str();
    for (const auto &[name, value] : kBehaviors)
        if (b == name) return value;
    n.fail("unknown behavior \"" + b + "\"");
}

// split.rs: the pattern's matches (or, inverted, what lies between them) as delimiters.
PreTokenizer split(const Node &n) {
    const Node p = n.at("pattern");
    std::shared_ptr<const Regex> re;
    if (p.has("String"))
        re = std::make_shared<Regex>(p.at("String").str(), true, n.file() + ": " + p.path());
    else if (p.has("Regex"))
        re = std::make_shared<Regex>(p.at("Regex").str(), false, n.file() + ": " + p.path());
    else
        p.fail("neither {\"String\": ...} nor {\"Regex\": ...}");
    const Behavior behavior = behavior_of(n.at("behavior"));
    const bool invert = n.at("invert").boolean();
    return [=](Pieces &pieces) {
        split_pieces(pieces, [&](std::string &s) {
            std::vector<Span> spans = regex_spans(*re, s);
            if (invert)
                for (Span &x : spans) x.match = !x.match;
            return split_ranges(std::move(spans), behavior);
        });
    };
}

// byte_level.rs: a space in front (add_prefix_space) of a piece not starting with one, GPT-2's
// regex (use_regex), then every byte as its character.
PreTokenizer byte_level(const Node &n) {
    const bool prefix = n.bool_or("add_prefix_space", true);
    std::shared_ptr<const Regex> re;
    if (n.bool_or("use_regex", true))
        re = std::make_shared<Regex>(
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
            false, n.file() + ": " + n.path() + " (GPT-2's regex)");
    return [=](Pieces &pieces) {
        split_pieces(pieces, [&](std::string &s) -> std::vector<std::pair<size_t, size_t>> {
            if (prefix && (s.empty() || s[0] != ' ')) s = " " + s;
            if (!re) return {{0, s.size()}};
            return split_ranges(regex_spans(*re, s), Behavior::isolated);
        });
        for (Piece &p : pieces) {
            if (p.id >= 0) continue;
            std::string out;
            for (const char c : p.text) append_char(out, byte_chars()[uint8_t(c)]);
            p.text = std::move(out);
        }
    };
}

// metaspace.rs: spaces as the replacement character, one in front per prepend_scheme (always;
// first: the piece at the input's start; never), then split before each (split).
PreTokenizer metaspace(const Node &n) {
    const uint32_t rc = n.at("replacement").one_char();
    std::string rep;
    append_char(rep, rc);
    std::string scheme = n.str_or("prepend_scheme", "always");
    if (n.has("add_prefix_space") && !n.at("add_prefix_space").boolean()) {
        if (scheme != "never") n.fail("add_prefix_space does not match declared prepend_scheme");
        scheme = "never";
    }
    if (scheme != "always" && scheme != "first" && scheme != "never")
        n.at("prepend_scheme").fail("unknown prepend_scheme \"" + scheme + "\"");
    const bool do_split = n.bool_or("split", true);
    return [=](Pieces &pieces) {
        for (Piece &p : pieces) {
            if (p.id >= 0) continue;
            std::string out;
            for (const char c : p.text) c == ' ' ? out += rep : out += c;
            if ((scheme == "always" || (scheme == "first" && p.at_start)) &&
                out.compare(0, rep.size(), rep) != 0)
                out = rep + out;
            p.text = std::move(out);
        }
        if (!do_split) return;
        split_pieces(pieces, [&](std::string &s) {
            return split_ranges(char_spans([&](uint32_t c) { return c == rc; }, s),
                                Behavior::merged_with_next);
        });
    };
}

// bert.rs: split at whitespace (removed), then around punctuation (ASCII's or Unicode's P*).
PreTokenizer bert(const Node &) {
    return [](Pieces &pieces) {
        split_pieces(pieces, [](std::string &s) {
            return split_ranges(char_spans(is_whitespace, s), Behavior::removed);
        });
        split_pieces(pieces, [](std::string &s) {
            return split_ranges(char_spans(
                                    [](uint32_t c) {
                                        return (c < 0x80 && std::ispunct(int(c))) ||
                                               is_punctuation(c);
                                    },
                                    s),
                                Behavior::isolated);
        });
    };
}

PreTokenizer sequence(const Node &n) {
    const Node list = n.sequence("pretokenizers");
    std::vector<PreTokenizer> each;
    for (size_t i = 0; i < list.size(); ++i) each.push_back(make_pre_tokenizer(list.at(i)));
    return [each](Pieces &pieces) {
        for (const PreTokenizer &f : each) f(pieces);
    };
}

struct Row {
    const char *type;
    PreTokenizer (*make)(const Node &);
};
const Row kPreTokenizers[] = {
    {"Sequence", sequence},   {"Split", split},           {"ByteLevel", byte_level},
    {"Metaspace", metaspace}, {"BertPreTokenizer", bert},
};

}  // namespace

PreTokenizer make_pre_tokenizer(const Node &n) {
    const std::string type = n.type();
    for (const Row &r : kPreTokenizers)
        if (type == r.type) return r.make(n);
    n.fail("pre-tokenizer \"" + type + "\" is not implemented");
}

}  // namespace gguftool::tokenizer::interp
