// The Tokenizer (gguftool/tokenizer.hpp): tokenizer.json read into components, and encode and
// decode as the Rust crate's TokenizerImpl runs them (tokenizers/src/tokenizer/mod.rs
// encode_single_sequence, post_process, decode; added_vocabulary.rs extract_and_normalize).
#include "gguftool/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "../tokenizer_impl.hpp"
#include "gguftool/error.hpp"
#include "interpreter.hpp"

namespace gguftool::tokenizer {

using interp::Node;
using interp::Piece;
using interp::Pieces;

namespace {

// An added token (added_vocabulary.rs AddedToken) with its id and the text it is matched as.
struct Added {
    std::string content, pattern;  // pattern: the content, normalized when `normalized`
    int32_t id = -1;
    bool special = false, lstrip = false, rstrip = false, normalized = false;
};

// The added tokens matched in a text leftmost-longest (the crate's Aho-Corasick automaton):
// tokens bucketed by first byte, longest first.
class Matcher {
public:
    void add(const Added *a) {
        if (!a->pattern.empty()) buckets_[uint8_t(a->pattern[0])].push_back(a);
    }
    void sort() {  // longest first in each bucket
        for (auto &b : buckets_)
            std::stable_sort(b.begin(), b.end(), [](const Added *x, const Added *y) {
                return x->pattern.size() > y->pattern.size();
            });
    }
    // find_matches: the text in pieces, each an added token (id set) or not.
    Pieces split(const Piece &p) const {
        const std::string_view s = p.text;
        const auto lead_space = [&](size_t from) {  // rightmost end of the spaces at `from`
            size_t i = from;
            while (i < s.size() && interp::is_whitespace(interp::char_at(s, i)))
                i += interp::char_len(uint8_t(s[i]));
            return i;
        };
        const auto trail_space = [&](size_t to) {  // leftmost start of the spaces ending at `to`
            size_t i = to;
            while (i > 0) {
                size_t k = i - 1;
                while ((uint8_t(s[k]) & 0xC0) == 0x80) --k;
                if (!interp::is_whitespace(interp::char_at(s, k))) break;
                i = k;
            }
            return i;
        };
        std::vector<std::tuple<int32_t, size_t, size_t>> splits;
        size_t start_offset = 0;
        for (size_t pos = 0; pos < s.size();) {
            const Added *hit = nullptr;
            size_t at = pos;
            for (; at < s.size() && !hit; ++at)
                for (const Added *a : buckets_[uint8_t(s[at])])
                    if (s.compare(at, a->pattern.size(), a->pattern) == 0) {
                        hit = a;
                        break;
                    }
            if (!hit) break;
            size_t start = at - 1, stop = start + hit->pattern.size();
            pos = stop;
            if (hit->lstrip) start = std::max(trail_space(start), start_offset);
            if (hit->rstrip) stop = lead_space(stop);
            if (start_offset < start) splits.emplace_back(-1, start_offset, start);
            splits.emplace_back(hit->id, start, stop);
            start_offset = stop;
        }
        if (start_offset != s.size()) splits.emplace_back(-1, start_offset, s.size());
        Pieces out;
        for (const auto &[id, b, e] : splits)
            if (e > b) out.push_back({std::string(s.substr(b, e - b)), id, p.at_start && b == 0});
        return out;
    }

private:
    std::array<std::vector<const Added *>, 256> buckets_;
};

// The post-processor as what it does to one sequence's ids when special tokens are added.
using PostProcessor = std::function<void(std::vector<int32_t> &)>;

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, std::nullopt, "cannot be read");
    std::ostringstream s;
    s << in.rdbuf();
    if (!in && !in.eof()) throw Error(path, std::nullopt, "cannot be read");
    return s.str();
}

}  // namespace

struct Tokenizer::Impl {
    std::string file;
    std::vector<std::unique_ptr<Added>> added;
    std::unordered_map<std::string, int32_t> added_ids;  // content -> id
    std::unordered_map<int32_t, const Added *> added_by_id;
    std::unordered_set<std::string> special;  // the special tokens' texts
    Matcher raw, normalized;
    interp::Normalizer normalizer;
    interp::PreTokenizer pre_tokenizer;
    interp::Model model;
    interp::Decoder decoder;
    std::vector<PostProcessor> post;
    std::vector<int32_t> eog;
    int32_t size = 0;

    int32_t id_of(const std::string &t) const {
        if (const auto it = added_ids.find(t); it != added_ids.end()) return it->second;
        if (const auto it = model.ids.find(t); it != model.ids.end()) return it->second;
        return -1;
    }

    void read(const Node &root);
    void read_added(const Node &list);
    PostProcessor read_post(const Node &n) const;
};

namespace {

// The single-sequence template of TemplateProcessing (template.rs): the sequence, or the ids of a
// special token of special_tokens.
PostProcessor template_processing(const Node &n) {
    std::unordered_map<std::string, std::vector<int32_t>> specials;
    if (n.has("special_tokens")) {
        const Node st = n.at("special_tokens");
        if (!st.json().is_object()) st.fail("not an object");
        for (const auto &[name, v] : st.json().items()) {
            const Node e(v, n.file(), st.path() + "/" + name);
            const Node ids = e.at("ids");
            for (size_t i = 0; i < ids.size(); ++i)
                specials[name].push_back(int32_t(ids.at(i).integer(0, INT32_MAX - 1)));
        }
    }
    // Each item: nullopt for the sequence, else the special token's ids.
    std::vector<std::optional<std::vector<int32_t>>> items;
    const Node single = n.at("single");
    const auto special = [&](const Node &where, const std::string &name) {
        const auto it = specials.find(name);
        if (it == specials.end())
            where.fail("special token \"" + name + "\" is not in special_tokens");
        items.emplace_back(it->second);
    };
    for (size_t i = 0; i < single.size(); ++i) {
        const Node p = single.at(i);
        if (p.has("Sequence"))
            items.emplace_back(std::nullopt);
        else if (p.has("SpecialToken"))
            special(p, p.at("SpecialToken").at("id").str());
        else
            p.fail("neither a Sequence nor a SpecialToken");
    }
    return [items](std::vector<int32_t> &ids) {
        std::vector<int32_t> out;
        for (const auto &item : items)
            out.insert(out.end(), item ? item->begin() : ids.begin(),
                       item ? item->end() : ids.end());
        ids = std::move(out);
    };
}

// BertProcessing and RobertaProcessing: cls, the sequence, sep.
PostProcessor cls_sep(const Node &n) {
    const auto id = [&](const char *key) {
        const Node p = n.at(key);
        if (p.size() != 2) p.fail("not a [token, id] pair");
        return int32_t(p.at(size_t(1)).integer(0, INT32_MAX - 1));
    };
    const int32_t cls = id("cls"), sep = id("sep");
    return [=](std::vector<int32_t> &ids) {
        ids.insert(ids.begin(), cls);
        ids.push_back(sep);
    };
}

}  // namespace

PostProcessor Tokenizer::Impl::read_post(const Node &n) const {
    const std::string type = n.type();
    if (type == "TemplateProcessing") return template_processing(n);
    if (type == "BertProcessing" || type == "RobertaProcessing") return cls_sep(n);
    if (type == "ByteLevel") return [](std::vector<int32_t> &) {};  // offsets only
    if (type == "Sequence") {
        const Node list = n.sequence("processors");
        std::vector<PostProcessor> each;
        for (size_t i = 0; i < list.size(); ++i) each.push_back(read_post(list.at(i)));
        return [each](std::vector<int32_t> &ids) {
            for (const PostProcessor &p : each) p(ids);
        };
    }
    n.fail("post-processor \"" + type + "\" is not implemented");
}

// added_vocabulary.rs add_tokens: a token takes the id its text already has (an added token's,
// then the model's) or the next one past the model's vocabulary; "id" in the file is not read.
void Tokenizer::Impl::read_added(const Node &list) {
    int32_t next = int32_t(model.size);
    for (size_t i = 0; i < list.size(); ++i) {
        const Node t = list.at(i);
        auto a = std::make_unique<Added>();
        a->content = t.at("content").str();
        if (a->content.empty()) continue;
        if (t.bool_or("single_word", false))
            t.at("single_word").fail("single_word is not implemented");
        a->special = t.bool_or("special", false);
        a->lstrip = t.bool_or("lstrip", false);
        a->rstrip = t.bool_or("rstrip", false);
        a->normalized = t.bool_or("normalized", !a->special);
        a->id = id_of(a->content);
        if (a->id < 0) a->id = next++;
        a->pattern = a->content;
        if (a->normalized && normalizer) normalizer(a->pattern);
        added_ids[a->content] = a->id;
        if (a->special) special.insert(a->content);
        added_by_id[a->id] = a.get();
        added.push_back(std::move(a));
    }
    for (const auto &[id, a] : added_by_id) (a->normalized ? normalized : raw).add(a);
    raw.sort();
    normalized.sort();
}

void Tokenizer::Impl::read(const Node &root) {
    if (!root.json().is_object()) root.fail("not an object");
    if (root.has("version") && root.at("version").str() != "1.0")
        root.at("version").fail("unknown tokenizer version \"" + root.at("version").str() + "\"");
    for (const char *unsupported : {"truncation", "padding"})
        if (root.has(unsupported)) root.at(unsupported).fail("not implemented (null expected)");
    if (const auto n = root.get("normalizer")) normalizer = interp::make_normalizer(*n);
    if (const auto n = root.get("pre_tokenizer")) pre_tokenizer = interp::make_pre_tokenizer(*n);
    model = interp::make_model(root.at("model"));
    if (const auto n = root.get("decoder")) decoder = interp::make_decoder(*n);
    if (const auto n = root.get("post_processor")) post.push_back(read_post(*n));
    if (const auto n = root.get("added_tokens")) read_added(*n);
    for (const auto &kv : model.tokens) size = std::max(size, kv.first + 1);
    for (const auto &kv : added_by_id) size = std::max(size, kv.first + 1);
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer &&) noexcept = default;
Tokenizer &Tokenizer::operator=(Tokenizer &&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_json(std::string_view text, const std::string &name) {
    auto impl = std::make_unique<Impl>();
    impl->file = name;
    const nlohmann::json j = interp::parse_json(text, name);
    impl->read(Node(j, name, ""));
    return Tokenizer(std::move(impl));
}

namespace {

// eos_token_id of a config: one id or a list.
std::optional<std::vector<int32_t>> eos_ids(const Node &config) {
    const auto e = config.get("eos_token_id");
    if (!e) return std::nullopt;
    std::vector<int32_t> out;
    if (e->json().is_array())
        for (size_t i = 0; i < e->size(); ++i)
            out.push_back(int32_t(e->at(i).integer(0, INT32_MAX - 1)));
    else
        out.push_back(int32_t(e->integer(0, INT32_MAX - 1)));
    return out;
}

// A special token's text in tokenizer_config.json: a string or an AddedToken object.
std::optional<std::string> token_text(const Node &config, const char *key) {
    const auto t = config.get(key);
    if (!t) return std::nullopt;
    return t->json().is_object() ? t->at("content").str() : t->str();
}

}  // namespace

Tokenizer Tokenizer::load(const std::string &dir) {
    namespace fs = std::filesystem;
    const std::string path = (fs::path(dir) / "tokenizer.json").string();
    Tokenizer t = from_json(read_file(path), path);
    Impl &m = *t.impl_;
    const auto read_json = [&](const char *name) -> std::optional<nlohmann::json> {
        const std::string p = (fs::path(dir) / name).string();
        std::error_code ec;
        if (!fs::exists(p, ec)) return std::nullopt;
        return interp::parse_json(read_file(p), p);
    };
    const auto config = read_json("tokenizer_config.json");
    const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
    if (config) {
        const Node c(*config, config_path, "");
        // BOS/EOS where tokenizer_config.json alone says to add them (no post-processor).
        if (m.post.empty()) {
            const auto specials = [&](const char *flag, const char *token) {
                std::vector<int32_t> ids;
                if (!c.bool_or(flag, false)) return ids;
                const auto text = token_text(c, token);
                if (!text) c.at(flag).fail(std::string("is true but ") + token + " is unset");
                const int32_t id = m.id_of(*text);
                if (id < 0) c.at(token).fail("\"" + *text + "\" is not a token");
                ids.push_back(id);
                return ids;
            };
            const std::vector<int32_t> bos = specials("add_bos_token", "bos_token");
            const std::vector<int32_t> eos = specials("add_eos_token", "eos_token");
            if (!bos.empty() || !eos.empty())
                m.post.push_back([bos, eos](std::vector<int32_t> &ids) {
                    ids.insert(ids.begin(), bos.begin(), bos.end());
                    ids.insert(ids.end(), eos.begin(), eos.end());
                });
        }
    }
    // Where generation stops: generation_config.json, else config.json, else the EOS token.
    std::optional<std::vector<int32_t>> stop;
    for (const char *name : {"generation_config.json", "config.json"}) {
        if (stop) break;
        if (const auto j = read_json(name))
            stop = eos_ids(Node(*j, (fs::path(dir) / name).string(), ""));
    }
    if (!stop && config)
        if (const auto text = token_text(Node(*config, config_path, ""), "eos_token"))
            if (const int32_t id = m.id_of(*text); id >= 0) stop = std::vector<int32_t>{id};
    if (stop) {
        std::sort(stop->begin(), stop->end());
        stop->erase(std::unique(stop->begin(), stop->end()), stop->end());
        m.eog = *stop;
    }
    return t;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
    const Impl &m = *impl_;
    if (const size_t ok = detail::utf8_valid_prefix(text); ok != text.size())
        throw Error("text to encode", ok, "not valid UTF-8");
    // Added tokens matched as they are, then in each other piece after normalizing it.
    Pieces pieces = m.raw.split({std::string(text), -1, true});
    Pieces normalized;
    for (Piece &p : pieces) {
        if (p.id >= 0) {
            normalized.push_back(std::move(p));
            continue;
        }
        if (m.normalizer) m.normalizer(p.text);
        for (Piece &q : m.normalized.split(p)) normalized.push_back(std::move(q));
    }
    if (m.pre_tokenizer) m.pre_tokenizer(normalized);
    std::vector<int32_t> ids;
    for (const Piece &p : normalized) {
        if (p.id >= 0)
            ids.push_back(p.id);
        else if (!p.text.empty())
            m.model.tokenize(m.model, p.text, ids);
    }
    if (add_special)
        for (const PostProcessor &post : m.post) post(ids);
    return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
    const Impl &m = *impl_;
    std::vector<std::string> tokens;
    for (const int32_t id : ids) {
        std::string t;
        if (const auto a = m.added_by_id.find(id); a != m.added_by_id.end())
            t = a->second->normalized ? a->second->pattern : a->second->content;
        else if (const auto it = m.model.tokens.find(id); it != m.model.tokens.end())
            t = it->second;
        else
            throw Error(m.file, std::nullopt,
                        "decode: id " + std::to_string(id) + " is not in the vocabulary");
        if (skip_special && m.special.count(t)) continue;
        tokens.push_back(std::move(t));
    }
    if (!m.decoder) {
        std::string out;
        for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
        return out;
    }
    m.decoder(tokens);
    std::string out;
    for (const std::string &t : tokens) out += t;
    return out;
}

int32_t Tokenizer::token_id(std::string_view token) const {
    return impl_->id_of(std::string(token));
}

std::string Tokenizer::token(int32_t id) const {
    const Impl &m = *impl_;
    if (const auto a = m.added_by_id.find(id); a != m.added_by_id.end()) return a->second->content;
    if (const auto it = m.model.tokens.find(id); it != m.model.tokens.end()) return it->second;
    return "";
}

int32_t Tokenizer::vocab_size() const {
    return impl_->size;
}

const std::vector<int32_t> &Tokenizer::end_of_generation_ids() const {
    return impl_->eog;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
    return std::binary_search(impl_->eog.begin(), impl_->eog.end(), id);
}

}  // namespace gguftool::tokenizer
