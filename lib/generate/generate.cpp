// generate: the prompt, then single-token steps through the package's KV cache, sampled as
// llama.cpp's default chain does (generate.hpp).
#include "gguftool/generate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "gguftool/error.hpp"
#include "gguftool/runtime.hpp"
#include "gguftool/tokenizer.hpp"

namespace gguftool::generate {
namespace {

namespace fs = std::filesystem;
using runtime::Shape;
using runtime::Tensor;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A JSON file of the package, or nullopt when it is not there.
std::optional<nlohmann::json> read_json(const fs::path &path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw Error(path.string(), std::nullopt, "not valid JSON");
    return j;
}

// eos_token_id of generation_config.json (else config.json): one id or a list.
std::vector<int32_t> stop_ids(const fs::path &dir) {
    for (const char *name : {"generation_config.json", "config.json"}) {
        const std::optional<nlohmann::json> j = read_json(dir / name);
        if (!j || !j->contains("eos_token_id")) continue;
        const nlohmann::json &e = (*j)["eos_token_id"];
        std::vector<int32_t> out;
        if (e.is_number_integer()) out.push_back(e.get<int32_t>());
        if (e.is_array())
            for (const nlohmann::json &v : e)
                if (v.is_number_integer()) out.push_back(v.get<int32_t>());
        return out;
    }
    return {};
}

// Decodes the generated ids as they come, giving out only text the next id cannot change: not
// the text of a trailing run of byte-fallback tokens (<0xE2>...: tokenizers' ByteFallback decodes
// a run whole, every byte of an invalid run becoming U+FFFD), and not a trailing U+FFFD (a
// ByteLevel character that may complete).
class Streamer {
public:
    Streamer(const tokenizer::Tokenizer *tok, std::function<void(std::string_view)> out)
        : tok_(tok), out_(std::move(out)) {}
    void add(const std::vector<int32_t> &ids, bool last) {
        if (!tok_) return;
        size_t settled = ids.size();
        if (!last)
            while (settled > 0 && is_byte(ids[settled - 1])) --settled;
        text_ = tok_->decode(std::span(ids.data(), settled), true);
        size_t end = text_.size();
        if (!last) {
            static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
            while (end >= kReplacement.size() &&
                   std::string_view(text_).substr(end - kReplacement.size(), kReplacement.size()) ==
                       kReplacement)
                end -= kReplacement.size();
        }
        // Only text that extends what was given goes out (a decoder could rewrite the start).
        if (end > given_.size() && text_.compare(0, given_.size(), given_) == 0) {
            if (out_) out_(std::string_view(text_).substr(given_.size(), end - given_.size()));
            given_.assign(text_, 0, end);
        }
    }
    const std::string &text() const { return text_; }

private:
    bool is_byte(int32_t id) {
        auto [it, fresh] = byte_.try_emplace(id, false);
        if (fresh) {
            const std::string t = tok_->token(id);
            it->second = t.size() == 6 && t.starts_with("<0x") && t.back() == '>' &&
                         std::isxdigit(static_cast<unsigned char>(t[3])) &&
                         std::isxdigit(static_cast<unsigned char>(t[4]));
        }
        return it->second;
    }

    const tokenizer::Tokenizer *tok_;
    std::unordered_map<int32_t, bool> byte_;
    std::function<void(std::string_view)> out_;
    std::string text_, given_;
};

Tensor ids_tensor(const std::vector<int64_t> &v) {
    return Tensor::from_values(DataType::int64, Shape{1, int64_t(v.size())}, v);
}

}  // namespace

int32_t sample(const float *logits, int64_t n_vocab, const Sampling &s, std::mt19937_64 &rng) {
    if (n_vocab <= 0) throw Error("sample: no logits");
    if (s.temperature <= 0) return int32_t(std::max_element(logits, logits + n_vocab) - logits);
    // top-k: the k largest (ties broken by the lower id), in descending order.
    std::vector<int32_t> order(static_cast<size_t>(n_vocab));
    std::iota(order.begin(), order.end(), 0);
    const auto larger = [&](int32_t a, int32_t b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    };
    const size_t k = s.top_k > 0 ? std::min<size_t>(size_t(s.top_k), order.size()) : order.size();
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(), larger);
    order.resize(k);
    // top-p on the softmax of the raw logits: the smallest prefix whose probability reaches p.
    if (s.top_p < 1.0f) {
        const double max = logits[order[0]];
        double sum = 0;
        std::vector<double> p(k);
        for (size_t i = 0; i < k; ++i) sum += p[i] = std::exp(double(logits[order[i]]) - max);
        double cum = 0;
        size_t keep = k;
        for (size_t i = 0; i < k; ++i) {
            cum += p[i] / sum;
            if (cum >= double(s.top_p)) {
                keep = i + 1;
                break;
            }
        }
        order.resize(keep);
    }
    // temperature, softmax, one draw.
    const double max = double(logits[order[0]]) / s.temperature;
    std::vector<double> w(order.size());
    double sum = 0;
    for (size_t i = 0; i < order.size(); ++i)
        sum += w[i] = std::exp(double(logits[order[i]]) / s.temperature - max);
    const double u = double(rng() >> 11) * 0x1.0p-53 * sum;
    double cum = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        cum += w[i];
        if (u < cum) return order[i];
    }
    return order.back();
}

Result generate(const std::string &package_dir, const Options &o) {
    const fs::path dir(package_dir);
    const std::string model_path = (dir / "onnx" / "model.onnx").string();
    if (!fs::exists(model_path))
        throw Error(package_dir, std::nullopt,
                    "no onnx/model.onnx: not a decoder package (gguftool to-onnx --graph decoder)");
    std::unique_ptr<tokenizer::Tokenizer> tok;
    if (fs::exists(dir / "tokenizer.json"))
        tok = std::make_unique<tokenizer::Tokenizer>(tokenizer::Tokenizer::load(package_dir));
    else if (o.ids.empty())
        throw Error(package_dir, std::nullopt, "no tokenizer.json: give the prompt as ids (--ids)");
    std::vector<int32_t> stop = tok ? tok->end_of_generation_ids() : stop_ids(dir);

    Result r;
    r.prompt_ids = o.ids.empty() ? tok->encode(o.prompt, true) : o.ids;
    if (r.prompt_ids.empty()) throw Error("the prompt has no tokens");

    runtime::RunOptions ro;
    ro.backend = o.backend;
    ro.threads = o.threads;
    ro.device = o.device;
    runtime::Model model = runtime::Model::load(model_path);
    // The cache's inputs: past_key_values.<i>.key|value [batch, n_kv_heads, past, head_dim].
    runtime::Inputs past;
    runtime::Session::Carry carry;  // present.<i>.* feeds past_key_values.<i>.*, kept in place
    bool have_ids = false;
    for (const runtime::ValueInfo &v : model.inputs()) {
        have_ids |= v.name == "input_ids";
        if (!v.name.starts_with("past_key_values.")) continue;
        if (v.dims.size() != 4 || !v.dims[1] || !v.dims[3])
            throw Error(model_path, std::nullopt,
                        fmt::format("input {}: expected [batch, heads, past, head_dim] with fixed "
                                    "heads and head_dim",
                                    v.name));
        past[v.name] = Tensor::zeros(DataType::float32, Shape{1, *v.dims[1], 0, *v.dims[3]});
        carry.emplace_back("present." + v.name.substr(16), v.name);
    }
    if (!have_ids || past.empty())
        throw Error(model_path, std::nullopt,
                    "no input_ids or past_key_values: not a decoder package");
    int64_t n_ctx = 0;
    if (const std::optional<nlohmann::json> c = read_json(dir / "config.json"))
        n_ctx = c->value("max_position_embeddings", int64_t(0));
    if (n_ctx > 0 && int64_t(r.prompt_ids.size()) + o.max_new > n_ctx)
        throw Error(package_dir, std::nullopt,
                    fmt::format("{} prompt tokens and {} new ones are more than the model's "
                                "context of {}",
                                r.prompt_ids.size(), o.max_new, n_ctx));
    runtime::Session session(std::move(model), ro);
    if (o.on_placement) o.on_placement(session.placement());

    Streamer streamer(tok.get(), o.on_text);
    std::mt19937_64 rng(o.sampling.seed);
    runtime::Inputs in = std::move(past);
    std::vector<int32_t> feed = r.prompt_ids;
    int64_t pos = 0;
    while (int(r.ids.size()) < o.max_new) {
        const int64_t n = int64_t(feed.size());
        const std::vector<int64_t> ids(feed.begin(), feed.end());
        std::vector<int64_t> positions(static_cast<size_t>(n)),
            mask(static_cast<size_t>(pos + n), 1);
        std::iota(positions.begin(), positions.end(), pos);
        in["input_ids"] = ids_tensor(ids);
        in["position_ids"] = ids_tensor(positions);
        in["attention_mask"] = ids_tensor(mask);
        const auto t0 = Clock::now();
        // One step; the cache stays in the session (appended in place on the CPU).
        const runtime::NamedTensors out = session.run_step(in, carry);
        if (pos == 0)
            for (const auto &[output, input] : carry) in.erase(input);
        const Tensor *logits = nullptr;
        for (const auto &[name, t] : out)
            if (name == "logits") logits = &t;
        if (!logits || logits->dtype() != DataType::float32 || logits->shape().size() != 3 ||
            logits->shape()[1] != n)
            throw Error(model_path, std::nullopt, "the graph gave no float logits [1, S, vocab]");
        const int64_t V = logits->shape()[2];
        const int32_t next = sample(logits->data_as<float>() + (n - 1) * V, V, o.sampling, rng);
        (pos == 0 ? r.prompt_s : r.decode_s) += since(t0);
        if (pos > 0) ++r.steps;
        pos += n;
        r.ids.push_back(next);
        r.stopped = std::find(stop.begin(), stop.end(), next) != stop.end();
        const bool last = r.stopped || int(r.ids.size()) == o.max_new;
        streamer.add(r.ids, last);
        if (last) break;
        feed = {next};
    }
    r.text = streamer.text();
    return r;
}

}  // namespace gguftool::generate
