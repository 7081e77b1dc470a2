// Models (tokenizers/src/models): BPE, WordPiece and Unigram.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>

#include "gguftool/error.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer::interp {
namespace {

constexpr int64_t kMaxId = INT32_MAX - 1;

// {"token": id, ...}
void read_vocab_map(const Node &v, Model &m) {
    if (!v.json().is_object()) v.fail("not an object");
    m.ids.reserve(v.json().size());
    for (const auto &[token, id] : v.json().items()) {
        const bool ok = id.is_number_unsigned() && id.get<uint64_t>() <= uint64_t(kMaxId);
        const auto i = ok ? int32_t(id.get<uint64_t>())
                          : int32_t(Node(id, v.file(), v.path() + "/" + token).integer(0, kMaxId));
        m.ids[token] = i;
        m.tokens[i] = token;
    }
    m.size = m.ids.size();
}

// ---------------------------------------------------------------------------------------------
// BPE (bpe/model.rs merge_word, bpe/word.rs merge_all): the piece's characters as symbols (unknown
// ones as byte tokens <0xXX> with byte_fallback, else the unknown token, fused when fuse_unk), then
// the lowest-ranked adjacent pair merged first (leftmost on a tie) until no pair is a merge.
struct Bpe {
    std::unordered_map<uint64_t, std::pair<uint32_t, int32_t>> merges;  // pair -> rank, new id
    std::string prefix, suffix;  // continuing_subword_prefix, end_of_word_suffix
    std::optional<std::string> unk;
    bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
    std::string where;

    static uint64_t key(int32_t a, int32_t b) { return uint64_t(uint32_t(a)) << 32 | uint32_t(b); }

    void tokenize(const Model &m, std::string_view w, std::vector<int32_t> &out) const {
        if (ignore_merges)
            if (const auto it = m.ids.find(w); it != m.ids.end()) {
                out.push_back(it->second);
                return;
            }
        struct Symbol {
            int32_t id;
            int64_t prev, next;
            size_t len;
        };
        std::vector<Symbol> sym;
        const auto add = [&](int32_t id, size_t len) {
            const int64_t n = int64_t(sym.size());
            if (n) sym.back().next = n;
            sym.push_back({id, n - 1, -1, len});
        };
        int32_t unk_id = -1;  // a pending unknown token, and its bytes
        size_t unk_len = 0;
        for (size_t i = 0; i < w.size();) {
            const size_t len = char_len(uint8_t(w[i]));
            std::string_view s = w.substr(i, len);
            std::string buf;
            if ((i > 0 && !prefix.empty()) || (i + len == w.size() && !suffix.empty())) {
                buf.assign(i > 0 ? prefix : "").append(s).append(i + len == w.size() ? suffix : "");
                s = buf;
            }
            i += len;
            if (const auto it = m.ids.find(s); it != m.ids.end()) {
                if (unk_id >= 0) add(unk_id, unk_len), unk_id = -1;
                add(it->second, len);
                continue;
            }
            if (byte_fallback) {
                std::vector<int32_t> bytes;
                for (const char c : s) {
                    char code[8];
                    std::snprintf(code, sizeof code, "<0x%02X>", unsigned(uint8_t(c)));
                    const auto it = m.ids.find(code);
                    if (it == m.ids.end()) break;
                    bytes.push_back(it->second);
                }
                if (bytes.size() == s.size()) {  // as the Rust code: a pending unknown waits
                    for (const int32_t b : bytes) add(b, 1);
                    continue;
                }
            }
            if (!unk) continue;
            const auto it = m.ids.find(*unk);
            if (it == m.ids.end())
                throw Error(where, std::nullopt, "unk_token \"" + *unk + "\" is not in the vocab");
            if (unk_id >= 0 && fuse_unk) {
                unk_len += len;
            } else {
                if (unk_id >= 0) add(unk_id, unk_len);
                unk_id = it->second, unk_len = len;
            }
        }
        if (unk_id >= 0) add(unk_id, unk_len);

        struct Merge {
            size_t pos;
            uint32_t rank;
            int32_t id;
            bool operator<(const Merge &o) const {  // the queue's top: lowest rank, then position
                return rank != o.rank ? rank > o.rank : pos > o.pos;
            }
        };
        std::priority_queue<Merge> queue;
        const auto merge_of = [&](int32_t a, int32_t b) {
            const auto it = merges.find(key(a, b));
            return it == merges.end() ? nullptr : &it->second;
        };
        for (size_t i = 0; i + 1 < sym.size(); ++i)
            if (const auto *mg = merge_of(sym[i].id, sym[i + 1].id))
                queue.push({i, mg->first, mg->second});
        while (!queue.empty()) {
            const Merge top = queue.top();
            queue.pop();
            Symbol &cur = sym[top.pos];
            if (cur.len == 0 || cur.next == -1) continue;
            const size_t next = size_t(cur.next);
            const Symbol right = sym[next];
            const auto *mg = merge_of(cur.id, right.id);
            if (!mg || mg->second != top.id) continue;  // an expired entry
            cur.id = top.id, cur.len += right.len, cur.next = right.next;
            sym[next].len = 0;
            if (right.next > -1 && size_t(right.next) < sym.size())
                sym[size_t(right.next)].prev = int64_t(top.pos);
            if (cur.prev >= 0)
                if (const auto *p = merge_of(sym[size_t(cur.prev)].id, cur.id))
                    queue.push({size_t(cur.prev), p->first, p->second});
            if (cur.next >= 0 && size_t(cur.next) < sym.size())
                if (const auto *p = merge_of(cur.id, sym[size_t(cur.next)].id))
                    queue.push({top.pos, p->first, p->second});
        }
        for (const Symbol &s : sym)
            if (s.len) out.push_back(s.id);
    }
};

Model bpe(const Node &n) {
    Model m;
    read_vocab_map(n.at("vocab"), m);
    auto b = std::make_shared<Bpe>();
    b->where = n.file() + ": " + n.path();
    if (n.has("dropout") && n.at("dropout").number() != 0)
        n.at("dropout").fail("BPE dropout is not implemented (it samples)");
    if (n.has("unk_token")) b->unk = n.at("unk_token").str();
    b->prefix = n.str_or("continuing_subword_prefix", "");
    b->suffix = n.str_or("end_of_word_suffix", "");
    b->fuse_unk = n.bool_or("fuse_unk", false);
    b->byte_fallback = n.bool_or("byte_fallback", false);
    b->ignore_merges = n.bool_or("ignore_merges", false);
    const Node merges = n.at("merges");
    const nlohmann::json &list = merges.json();
    if (!list.is_array()) merges.fail("not an array");
    std::string joined;
    const auto id_of = [&](size_t i, std::string_view t) {
        const auto it = m.ids.find(t);
        if (it == m.ids.end())
            merges.at(i).fail("merge token \"" + std::string(t) + "\" is not in the vocab");
        return it->second;
    };
    b->merges.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json &e = list[i];
        std::string_view a, c;
        if (e.is_string()) {  // the legacy form "a b"
            const std::string_view s = e.get_ref<const std::string &>();
            const size_t sp = s.find(' ');
            if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
                merges.at(i).fail("not two parts separated by one space");
            a = s.substr(0, sp), c = s.substr(sp + 1);
        } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
            a = e[0].get_ref<const std::string &>(), c = e[1].get_ref<const std::string &>();
        } else {
            merges.at(i).fail("not a pair of strings");
        }
        if (c.substr(0, b->prefix.size()) != b->prefix)
            merges.at(i).fail("\"" + std::string(c) +
                              "\" does not start with the continuing_subword_prefix");
        joined.assign(a).append(c.substr(b->prefix.size()));
        const int32_t merged = id_of(i, joined);
        b->merges[Bpe::key(id_of(i, a), id_of(i, c))] = {uint32_t(i), merged};  // a later rank wins
    }
    m.tokenize = [b](const Model &self, std::string_view w, std::vector<int32_t> &out) {
        b->tokenize(self, w, out);
    };
    return m;
}

// ---------------------------------------------------------------------------------------------
// WordPiece (wordpiece/mod.rs): greedy longest-match-first, continuations with the prefix; a word
// with a part no token covers, or longer than max_input_chars_per_word, is the unknown token.
Model word_piece(const Node &n) {
    Model m;
    read_vocab_map(n.at("vocab"), m);
    const std::string unk = n.at("unk_token").str();
    const std::string prefix = n.str_or("continuing_subword_prefix", "##");
    const auto max_chars = n.has("max_input_chars_per_word")
                               ? size_t(n.at("max_input_chars_per_word").integer(0, INT64_MAX))
                               : size_t(100);
    size_t longest = 0;  // no longer substring can match: the search starts there
    for (const auto &kv : m.ids) longest = std::max(longest, kv.first.size());
    const std::string where = n.file() + ": " + n.path();
    m.tokenize = [=](const Model &self, std::string_view w, std::vector<int32_t> &out) {
        const auto *vocab = &self.ids;
        const auto unk_id = [&] {
            const auto it = vocab->find(unk);
            if (it == vocab->end())
                throw Error(where, std::nullopt, "unk_token \"" + unk + "\" is not in the vocab");
            return it->second;
        };
        size_t n_chars = 0;
        for (size_t i = 0; i < w.size(); i += char_len(uint8_t(w[i]))) ++n_chars;
        if (n_chars > max_chars) {
            out.push_back(unk_id());
            return;
        }
        std::vector<int32_t> sub;
        for (size_t start = 0; start < w.size();) {
            size_t end = start;  // the last character boundary within `longest` bytes
            for (size_t k = start; k < w.size() && k - start <= longest;
                 k += char_len(uint8_t(w[k])))
                end = k;
            if (w.size() - start <= longest) end = w.size();
            bool found = false;
            while (start < end) {
                std::string s(w.substr(start, end - start));
                if (start > 0) s = prefix + s;
                if (const auto it = vocab->find(s); it != vocab->end()) {
                    sub.push_back(it->second);
                    found = true;
                    break;
                }
                do --end;
                while ((uint8_t(w[end]) & 0xC0) == 0x80);
            }
            if (!found) {
                out.push_back(unk_id());
                return;
            }
            start = end;
        }
        out.insert(out.end(), sub.begin(), sub.end());
    };
    return m;
}

// ---------------------------------------------------------------------------------------------
// Unigram (unigram/model.rs encode_optimized): the best-scoring segmentation (Viterbi; a character
// no token starts with is the unknown token, scored the lowest score less 10), unknown runs fused.
struct Unigram {
    std::vector<std::string> pieces;
    std::vector<double> scores;
    std::vector<int32_t> sorted;  // ids of the distinct pieces, by text: the prefix search
    std::optional<int32_t> unk;
    bool byte_fallback = false;
    double unk_score = 0;
    std::string where;

    // The ids of the pieces that are prefixes of `s`, shortest first.
    template <class F>
    void prefixes(std::string_view s, const F &each) const {
        size_t lo = 0, hi = sorted.size();
        for (size_t k = 0; k < s.size() && lo < hi; ++k) {
            const auto c = uint8_t(s[k]);
            const auto byte = [&](int32_t id) { return uint8_t(pieces[size_t(id)][k]); };
            lo = size_t(std::partition_point(sorted.begin() + long(lo), sorted.begin() + long(hi),
                                             [&](int32_t id) { return byte(id) < c; }) -
                        sorted.begin());
            hi = size_t(std::partition_point(sorted.begin() + long(lo), sorted.begin() + long(hi),
                                             [&](int32_t id) { return byte(id) <= c; }) -
                        sorted.begin());
            if (lo < hi && pieces[size_t(sorted[lo])].size() == k + 1) each(sorted[lo++], k + 1);
        }
    }

    void tokenize(const Model &m, std::string_view s, std::vector<int32_t> &out) const {
        struct Best {
            int32_t id = 0;
            double score = 0;
            std::optional<size_t> from;
        };
        std::vector<Best> best(s.size() + 1);
        for (size_t at = 0; at < s.size();) {
            const double here = best[at].score;
            const size_t len = char_len(uint8_t(s[at]));
            bool single = false;
            prefixes(s.substr(at), [&](int32_t id, size_t n) {
                Best &b = best[at + n];
                const double cand = scores[size_t(id)] + here;
                if (!b.from || cand > b.score) b = {id, cand, at};
                single = single || n == len;
            });
            if (!single) {
                if (!unk)
                    throw Error(where, std::nullopt, "no unk_id for a character no piece covers");
                Best &b = best[at + len];
                if (!b.from || unk_score + here > b.score) b = {*unk, unk_score + here, at};
            }
            at += len;
        }
        // Back from the end: the pieces, unknown runs fused into one.
        std::vector<std::string_view> parts;
        std::vector<bool> is_unk;
        for (size_t end = s.size(); end > 0;) {
            const Best &b = best[end];
            const std::string_view part = s.substr(*b.from, end - *b.from);
            if (unk && b.id == *unk && !is_unk.empty() && is_unk.back())
                parts.back() = s.substr(*b.from, parts.back().size() + part.size());
            else
                parts.push_back(part), is_unk.push_back(unk && b.id == *unk);
            end = *b.from;
        }
        for (size_t i = parts.size(); i-- > 0;) {
            if (const auto it = m.ids.find(parts[i]); it != m.ids.end()) {
                out.push_back(it->second);
                continue;
            }
            if (byte_fallback) {
                std::vector<int32_t> bytes;
                for (const char c : parts[i]) {
                    char code[8];
                    std::snprintf(code, sizeof code, "<0x%02X>", unsigned(uint8_t(c)));
                    if (const auto it = m.ids.find(code); it != m.ids.end())
                        bytes.push_back(it->second);
                }
                if (bytes.size() == parts[i].size()) {
                    out.insert(out.end(), bytes.begin(), bytes.end());
                    continue;
                }
            }
            out.push_back(*unk);
        }
    }
};

Model unigram(const Node &n) {
    Model m;
    auto u = std::make_shared<Unigram>();
    u->where = n.file() + ": " + n.path();
    const Node vocab = n.at("vocab");
    double lowest = INFINITY;
    const size_t count = vocab.size();
    for (size_t i = 0; i < count; ++i) {
        const nlohmann::json &e = vocab.json()[i];
        if (!(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_number() &&
              std::isfinite(e[1].get<double>())))
            vocab.at(i).fail("not a [piece, finite score] pair");
        u->pieces.push_back(e[0].get<std::string>());
        u->scores.push_back(e[1].get<double>());
        lowest = std::min(lowest, u->scores.back());
        m.ids[u->pieces.back()] = int32_t(i);  // a later duplicate wins
        m.tokens[int32_t(i)] = u->pieces.back();
        if (u->pieces.back().empty()) vocab.at(i).fail("an empty piece");
    }
    if (vocab.size() > size_t(kMaxId)) vocab.fail("too many pieces");
    m.size = u->pieces.size();
    if (n.has("unk_id")) {
        if (vocab.size() == 0) n.fail("an unk_id with an empty vocab");
        u->unk = int32_t(n.at("unk_id").integer(0, int64_t(vocab.size()) - 1));
    }
    u->byte_fallback = n.bool_or("byte_fallback", false);
    u->unk_score = lowest - 10.0;  // K_UNK_PENALTY
    for (const auto &kv : m.ids) u->sorted.push_back(kv.second);
    std::sort(u->sorted.begin(), u->sorted.end(),
              [&](int32_t a, int32_t b) { return u->pieces[size_t(a)] < u->pieces[size_t(b)]; });
    m.tokenize = [u](const Model &self, std::string_view s, std::vector<int32_t> &out) {
        u->tokenize(self, s, out);
    };
    return m;
}

struct Row {
    const char *type;
    Model (*make)(const Node &);
};
const Row kModels[] = {{"BPE", bpe}, {"WordPiece", word_piece}, {"Unigram", unigram}};

}  // namespace

Model make_model(const Node &n) {
    // A model without "type" is read by its fields, as the Rust crate's untagged form.
    std::string type;
    if (n.has("type"))
        type = n.type();
    else if (n.has("merges"))
        type = "BPE";
    else if (n.has("continuing_subword_prefix") || n.has("max_input_chars_per_word"))
        type = "WordPiece";
    else if (n.has("vocab") && n.at("vocab").json().is_array())
        type = "Unigram";
    for (const Row &r : kModels)
        if (type == r.type) return r.make(n);
    n.fail("model \"" + type + "\" is not implemented");
}

}  // namespace gguftool::tokenizer::interp
