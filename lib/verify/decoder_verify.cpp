// verify_decoder: llama.cpp's logits (libllama) against the exported decoder's in the executor,
// step by step through the KV cache.
#include "gguftool/decoder_verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gguftool/decoder_export.hpp"
#include "gguftool/error.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/runtime.hpp"
#include "gguftool/types.hpp"

namespace gguftool::verify {
namespace {

using runtime::Shape;
using runtime::Tensor;

// The tolerance rows, loosest last (the rounding is llama.cpp's: ggml-cpu's vec_dot_type of each
// weight type, ggml/src/ggml-cpu/ggml-cpu.c type_traits_cpu). Measured on the tiny models of every
// architecture (tools/make_tiny_decoder, 12-token prefill and a step, lowered to opset 21 and run
// in onnxruntime): F32 weights at most 3.1e-4 of the spread (gemma3: llama.cpp's fp16-table GELU;
// 9e-7 elsewhere), KL 4e-8; F16/BF16 (llama.cpp rounds activations to fp16/bf16) 4.0e-3, KL 7e-5;
// quantized (activations quantized to Q8_0/Q8_K) 2.0e-2, KL 2.1e-3. Each bound is about three
// times the worst seen; tests/decoder shows each still rejects a wrong export.
const Tolerance kTolerances[] = {
    {"f32", 1e-3, 1e-5},
    {"f16", 1.5e-2, 5e-4},
    {"quantized", 6e-2, 1e-2},
};

Tensor int64_tensor(Shape shape, const std::vector<int64_t> &v) {
    return Tensor::from_values(DataType::int64, std::move(shape), v);
}

// Compares rows of n_vocab logits: ours [rows][V] against llama.cpp's [rows][V].
DecoderStep compare(int index, const float *ours, const float *ref, int rows, int64_t V,
                    const Tolerance &tol) {
    DecoderStep s;
    s.index = index;
    s.positions = rows;
    s.spread = INFINITY;
    bool top1_ok = true;
    for (int r = 0; r < rows; ++r) {
        const float *o = ours + r * V, *e = ref + r * V;
        double lo = e[0], hi = e[0], max_abs = 0;
        int64_t arg_o = 0, arg_e = 0;
        for (int64_t i = 0; i < V; ++i) {
            lo = std::min<double>(lo, e[i]);
            hi = std::max<double>(hi, e[i]);
            max_abs = std::max(max_abs, std::fabs(double(o[i]) - double(e[i])));
            if (!(std::fabs(double(o[i]) - double(e[i])) <= 1e30)) max_abs = INFINITY;  // NaN
            if (o[i] > o[arg_o]) arg_o = i;
            if (e[i] > e[arg_e]) arg_e = i;
        }
        const double spread = std::max(hi - lo, 1e-30);
        s.spread = std::min(s.spread, spread);
        s.max_abs = std::max(s.max_abs, max_abs);
        s.relative = std::max(s.relative, max_abs / spread);
        // KL(llama.cpp ‖ ours) of the softmaxes, in double.
        double mo = o[arg_o], me = e[arg_e], zo = 0, ze = 0;
        for (int64_t i = 0; i < V; ++i) {
            zo += std::exp(double(o[i]) - mo);
            ze += std::exp(double(e[i]) - me);
        }
        double kl = 0;
        for (int64_t i = 0; i < V; ++i) {
            const double le = double(e[i]) - me - std::log(ze);
            const double lo_ = double(o[i]) - mo - std::log(zo);
            kl += std::exp(le) * (le - lo_);
        }
        if (!std::isfinite(kl)) kl = INFINITY;
        s.kl = std::max(s.kl, kl);
        if (arg_o == arg_e)
            ++s.top1_agree;
        else if (double(e[arg_e]) - double(e[arg_o]) > tol.relative * spread)
            top1_ok = false;  // not a near tie
    }
    s.pass = s.relative <= tol.relative && s.kl <= tol.kl && top1_ok;
    return s;
}

}  // namespace

Tolerance decoder_tolerance(const std::string &gguf_path) {
    const gguf::Model model = gguf::Model::open(gguf_path);
    size_t kind = 0;
    for (const gguf::TensorInfo &t : model.tensors()) {
        if (t.n_dims < 2) continue;
        if (traits(t.type).quantized)
            kind = std::max<size_t>(kind, 2);
        else if (t.type == GgmlType::f16 || t.type == GgmlType::bf16)
            kind = std::max<size_t>(kind, 1);
    }
    return kTolerances[kind];
}

DecoderReport verify_decoder(const std::string &gguf_path, const std::string &package_dir,
                             const DecoderVerifyOptions &opt) {
    DecoderReport report;
    report.tolerance = opt.tolerance ? *opt.tolerance : decoder_tolerance(gguf_path);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(gguf_path));
    const std::string model_path =
        (std::filesystem::path(package_dir) / "onnx" / "model.onnx").string();
    if (!std::filesystem::exists(model_path))
        throw Error(package_dir, std::nullopt, "no onnx/model.onnx: not a decoder package");

    std::string why;
    std::shared_ptr<const reference::LlamaLib> lib = reference::load_llama(&why);
    if (!lib) throw Error(fmt::format("llama.cpp's libllama is not available: {}", why));
    reference::LlamaModel::Options lo;
    lo.threads = opt.threads;
    std::vector<int32_t> prompt = opt.ids;
    {
        // A context for the prompt and the steps (rounded up as llama.cpp pads it).
        const size_t n = prompt.empty() ? opt.prompt.size() + 8 : prompt.size();
        lo.n_ctx = int(std::max<size_t>(256, (n + opt.steps + 255) / 256 * 256));
    }
    reference::LlamaModel llama(lib, gguf_path, lo);
    if (prompt.empty()) prompt = llama.tokenize(opt.prompt, true, false);
    if (prompt.empty()) throw Error("the prompt has no tokens");
    const int64_t V = llama.n_vocab();
    if (V != h.n_vocab)
        throw Error(package_dir, std::nullopt,
                    fmt::format("llama.cpp's vocabulary has {} tokens, the graph's logits {}", V,
                                h.n_vocab));
    for (int32_t t : prompt)
        if (t < 0 || t >= V)
            throw Error(fmt::format("token id {} is outside the vocabulary (0..{})", t, V - 1));

    runtime::RunOptions ro;
    ro.backend = opt.backend;
    ro.threads = opt.threads;
    ro.device = opt.device;
    runtime::Session session(runtime::Model::load(model_path), ro);
    if (opt.on_placement) opt.on_placement(session.placement());
    runtime::Inputs past;
    for (int64_t il = 0; il < h.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            past[fmt::format("past_key_values.{}.{}", il, kv)] =
                Tensor::zeros(DataType::float32, Shape{1, h.n_head_kv, 0, h.head_dim});

    report.prompt_tokens = int(prompt.size());
    report.tokens = prompt;
    std::vector<int32_t> feed = prompt;
    int64_t pos = 0;
    report.pass = true;
    for (int step = 0; step <= opt.steps; ++step) {
        const int n = int(feed.size());
        const std::vector<float> ref = llama.decode(feed, int32_t(pos));
        runtime::Inputs in = past;
        std::vector<int64_t> ids(feed.begin(), feed.end()), positions(n), mask(pos + n, 1);
        for (int i = 0; i < n; ++i) positions[i] = pos + i;
        in["input_ids"] = int64_tensor(Shape{1, n}, ids);
        in["position_ids"] = int64_tensor(Shape{1, n}, positions);
        in["attention_mask"] = int64_tensor(Shape{1, pos + n}, mask);
        runtime::NamedTensors out = session.run(in);
        const Tensor *logits = nullptr;
        for (auto &[name, t] : out) {
            if (name == "logits")
                logits = &t;
            else if (name.rfind("present.", 0) == 0)
                past["past_key_values." + name.substr(8)] = t;
        }
        if (!logits || logits->dtype() != DataType::float32 ||
            logits->elements() != uint64_t(n) * uint64_t(V))
            throw Error(model_path, std::nullopt, "the graph gave no float logits [1, S, vocab]");
        DecoderStep s = compare(step, logits->data_as<float>(), ref.data(), n, V, report.tolerance);
        report.pass = report.pass && s.pass;
        report.steps.push_back(s);
        // The next token: llama.cpp's greedy choice, fed to both.
        const float *last = ref.data() + size_t(n - 1) * V;
        const int32_t next = int32_t(std::max_element(last, last + V) - last);
        pos += n;
        feed = {next};
        if (step < opt.steps) report.tokens.push_back(next);
    }
    return report;
}

}  // namespace gguftool::verify
