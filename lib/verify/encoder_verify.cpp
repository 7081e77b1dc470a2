// verify_encoder: llama.cpp's embeddings (libllama) against the exported encoder's in the
// executor, per token and pooled.
#include "gguftool/encoder_verify.hpp"

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

// The tolerance rows, loosest last: measured on the tiny encoders of every architecture
// (tests/support/tiny_encoder.cpp, 18-22 tokens and the padded half in one batch) in the
// executor: F32 weights at most 7.4e-5 of the spread (bert: values at the fp16 GELU table's
// rounding boundaries), cosine 0.99999999; F16 (llama.cpp's fp16 activations) 4.3e-4, 0.9999996;
// quantized (its Q8 activations) 1.3e-2, 0.9995. The F32 bound is the 2e-4 asked of the export;
// the others about three times the worst seen. tests/decoder/encoder_test.cpp shows wrong exports
// fail them.
const EncoderTolerance kTolerances[] = {
    {"f32", 2e-4, 0.99999},
    {"f16", 1.5e-3, 0.99999},
    {"quantized", 4e-2, 0.998},
};

// Rows of E values compared: ours[i] against ref[i].
void compare(EncoderDiff &d, const std::vector<const float *> &ours,
             const std::vector<const float *> &ref, int64_t E) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < ref.size(); ++i) {
        double dot = 0, no = 0, nr = 0;
        for (int64_t j = 0; j < E; ++j) {
            const double o = ours[i][j], r = ref[i][j];
            lo = std::min(lo, r);
            hi = std::max(hi, r);
            const double delta = std::fabs(o - r);
            d.max_abs = std::max(d.max_abs, std::isnan(delta) ? INFINITY : delta);
            dot += o * r;
            no += o * o;
            nr += r * r;
        }
        const double c = no > 0 && nr > 0 ? dot / std::sqrt(no * nr) : (no == nr ? 1.0 : 0.0);
        d.min_cosine = std::min(d.min_cosine, std::isnan(c) ? -1.0 : c);
        ++d.vectors;
    }
    d.spread = std::max(hi - lo, 1e-30);
    d.relative = d.max_abs / d.spread;
}

}  // namespace

EncoderTolerance encoder_tolerance(const std::string &gguf_path) {
    const gguf::Model model = gguf::Model::open(gguf_path);
    size_t kind = 0;
    for (const gguf::TensorInfo &t : model.tensors()) {
        if (t.n_dims < 2 || t.name == "token_embd.weight" || t.name == "position_embd.weight" ||
            t.name == "token_types.weight")
            continue;
        if (traits(t.type).quantized)
            kind = std::max<size_t>(kind, 2);
        else if (t.type == GgmlType::f16 || t.type == GgmlType::bf16)
            kind = std::max<size_t>(kind, 1);
    }
    return kTolerances[kind];
}

EncoderReport verify_encoder(const std::string &gguf_path, const std::string &package_dir,
                             const EncoderVerifyOptions &opt) {
    EncoderReport report;
    report.tolerance = opt.tolerance ? *opt.tolerance : encoder_tolerance(gguf_path);
    const decoder::Hparams h =
        decoder::read_hparams(gguf::Model::open(gguf_path), decoder::Graph::encoder);
    static constexpr const char *kPooling[] = {"none", "mean", "cls", "last"};
    report.pooling = kPooling[int(h.pooling)];
    const std::string model_path =
        (std::filesystem::path(package_dir) / "onnx" / "model.onnx").string();
    if (!std::filesystem::exists(model_path))
        throw Error(package_dir, std::nullopt, "no onnx/model.onnx: not an encoder package");

    std::string why;
    std::shared_ptr<const reference::LlamaLib> lib = reference::load_llama(&why);
    if (!lib) throw Error(fmt::format("llama.cpp's libllama is not available: {}", why));
    reference::LlamaModel::Options lo;
    lo.threads = opt.threads;
    lo.embeddings = true;
    lo.pooling = 0;
    std::vector<int32_t> seq = opt.ids;
    lo.n_ctx = int(
        std::max<size_t>(64, ((seq.empty() ? opt.prompt.size() + 8 : seq.size()) + 63) / 64 * 64));
    lo.n_ctx = int(std::min<int64_t>(lo.n_ctx, h.n_ctx_train));
    reference::LlamaModel per_token(lib, gguf_path, lo);
    if (seq.empty()) seq = per_token.tokenize(opt.prompt, true, false);
    if (seq.empty()) throw Error("the prompt has no tokens");
    if (int64_t(seq.size()) > h.n_ctx_train)
        throw Error(fmt::format("{} tokens, more than the model's context of {}", seq.size(),
                                h.n_ctx_train));
    for (int32_t t : seq)
        if (t < 0 || t >= h.n_vocab)
            throw Error(
                fmt::format("token id {} is outside the vocabulary (0..{})", t, h.n_vocab - 1));
    report.tokens = seq;
    const int64_t E = h.n_embd;
    const std::vector<std::vector<int32_t>> seqs = {
        seq, std::vector<int32_t>(seq.begin(), seq.begin() + std::max<size_t>(1, seq.size() / 2))};

    // llama.cpp: each sequence alone, per token and (with the model's pooling) pooled.
    std::vector<std::vector<float>> ref_tokens, ref_pooled;
    for (const std::vector<int32_t> &s : seqs) {
        per_token.clear();
        ref_tokens.push_back(per_token.decode_embeddings(s));
    }
    if (h.pooling != decoder::Pooling::none) {
        lo.pooling = -1;
        reference::LlamaModel pooled(lib, gguf_path, lo);
        for (const std::vector<int32_t> &s : seqs) {
            pooled.clear();
            pooled.decode_embeddings(s);
            ref_pooled.push_back(pooled.pooled());
        }
    }

    // The graph: both sequences in one batch, the second padded (on the left for last-token
    // pooling, as the package's tokenizer pads, else on the right).
    runtime::RunOptions ro;
    ro.backend = opt.backend;
    ro.threads = opt.threads;
    ro.device = opt.device;
    runtime::Model m = runtime::Model::load(model_path);
    bool types = false;
    for (const runtime::ValueInfo &v : m.inputs()) types |= v.name == "token_type_ids";
    runtime::Session session(std::move(m), ro);
    if (opt.on_placement) opt.on_placement(session.placement());
    const int64_t S = int64_t(seqs[0].size());
    const bool left = h.pooling == decoder::Pooling::last;
    const int64_t pad = std::max<int64_t>(h.pad, 0);
    std::vector<int64_t> ids(size_t(2 * S), pad), mask(size_t(2 * S), 0);
    std::vector<int64_t> first(2);  // the column of each sequence's first token
    for (size_t b = 0; b < 2; ++b) {
        const int64_t n = int64_t(seqs[b].size());
        first[b] = left ? S - n : 0;
        for (int64_t i = 0; i < n; ++i) {
            ids[size_t(int64_t(b) * S + first[b] + i)] = seqs[b][size_t(i)];
            mask[size_t(int64_t(b) * S + first[b] + i)] = 1;
        }
    }
    runtime::Inputs in;
    in["input_ids"] = Tensor::from_values(DataType::int64, Shape{2, S}, ids);
    in["attention_mask"] = Tensor::from_values(DataType::int64, Shape{2, S}, mask);
    if (types)
        in["token_type_ids"] =
            Tensor::from_values(DataType::int64, Shape{2, S}, std::vector<int64_t>(2 * S, 0));
    const runtime::NamedTensors out = session.run(in);
    const Tensor *hidden = nullptr, *sentence = nullptr;
    for (const auto &[name, t] : out) {
        if (name == "last_hidden_state") hidden = &t;
        if (name == "sentence_embedding") sentence = &t;
    }
    if (!hidden || hidden->dtype() != DataType::float32 ||
        hidden->elements() != uint64_t(2 * S * E))
        throw Error(model_path, std::nullopt,
                    "the graph gave no float last_hidden_state [batch, sequence, hidden]");
    std::vector<const float *> ours, ref;
    for (size_t b = 0; b < 2; ++b)
        for (size_t i = 0; i < seqs[b].size(); ++i) {
            ours.push_back(hidden->data_as<float>() + (int64_t(b) * S + first[b] + int64_t(i)) * E);
            ref.push_back(ref_tokens[b].data() + i * size_t(E));
        }
    compare(report.tokens_diff, ours, ref, E);
    const EncoderTolerance &tol = report.tolerance;
    auto passes = [&](EncoderDiff &d) {
        d.pass = d.relative <= tol.relative && d.min_cosine >= tol.cosine;
        return d.pass;
    };
    report.pass = passes(report.tokens_diff);
    if (h.pooling != decoder::Pooling::none) {
        if (!sentence || sentence->dtype() != DataType::float32 ||
            sentence->elements() != uint64_t(2 * E))
            throw Error(model_path, std::nullopt,
                        "the graph gave no float sentence_embedding [batch, hidden]");
        compare(report.pooled_diff, {sentence->data_as<float>(), sentence->data_as<float>() + E},
                {ref_pooled[0].data(), ref_pooled[1].data()}, E);
        report.pass = passes(report.pooled_diff) && report.pass;
    }
    return report;
}

}  // namespace gguftool::verify
