// The tensors a decoder graph reads, with the shapes llama.cpp's loaders create them with
// (src/models/<arch>.cpp load_arch_tensors): each missing or misshapen one is named.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder.hpp"

namespace gguftool::decoder::detail {
namespace {

class Expect {
public:
    Expect(const gguf::Model &m) : m_(m) {}

    // Checks `name` has GGUF dims `ne` (fastest first) if present; false when absent (an error
    // when required).
    bool operator()(const std::string &name, std::vector<int64_t> ne, bool required) const {
        const gguf::TensorInfo *t = m_.find_tensor(name);
        if (!t) {
            if (required)
                throw Error(m_.first().path(), std::nullopt,
                            fmt::format("tensor {}: missing", name));
            return false;
        }
        std::vector<int64_t> have(t->ne.begin(), t->ne.begin() + t->n_dims);
        while (have.size() > ne.size() && have.back() == 1) have.pop_back();
        if (have != ne)
            throw Error(m_.shards().at(t->shard)->path(), t->file_offset,
                        fmt::format("tensor {}: shape [{}], expected [{}]", name,
                                    fmt::join(have, ", "), fmt::join(ne, ", ")));
        return true;
    }

    bool has(const std::string &name) const { return m_.find_tensor(name) != nullptr; }
    [[noreturn]] void fail(const std::string &name, const std::string &what) const {
        const gguf::TensorInfo *t = m_.find_tensor(name);
        throw Error(t ? m_.shards().at(t->shard)->path() : m_.first().path(),
                    t ? std::optional<uint64_t>(t->file_offset) : std::nullopt,
                    fmt::format("tensor {}: {}", name, what));
    }

private:
    const gguf::Model &m_;
};

// A layer's mixture of experts (load_arch_tensors): the router, the experts stacked on their
// last dimension, their biases, and qwen2moe's shared expert.
template <class Name>
void check_experts(const Expect &expect, const Name &n, const Hparams &h, const ArchRow &row) {
    const int64_t E = h.n_embd, X = h.n_expert, Fe = h.n_ff_exp, Fs = h.n_ff_shexp;
    expect(n("ffn_gate_inp.weight"), {E, X}, true);
    expect(n("ffn_gate_inp.bias"), {X}, false);
    // llama (Mixtral) creates ffn_gate_exps TENSOR_NOT_REQUIRED: without it, silu(up).
    expect(n("ffn_gate_exps.weight"), {E, Fe, X}, row.experts != Experts::counted);
    expect(n("ffn_up_exps.weight"), {E, Fe, X}, true);
    expect(n("ffn_down_exps.weight"), {Fe, E, X}, true);
    expect(n("ffn_gate_exps.bias"), {Fe, X}, false);
    expect(n("ffn_up_exps.bias"), {Fe, X}, false);
    expect(n("ffn_down_exps.bias"), {E, X}, false);
    if (row.shared_expert) {
        expect(n("ffn_gate_inp_shexp.weight"), {E}, true);
        expect(n("ffn_gate_shexp.weight"), {E, Fs}, true);
        expect(n("ffn_up_shexp.weight"), {E, Fs}, true);
        expect(n("ffn_down_shexp.weight"), {Fs, E}, true);
    } else if (expect.has(n("ffn_up_shexp.weight"))) {
        // Another architecture's shared expert (granite's, added ungated): not computed here.
        expect.fail(n("ffn_up_shexp.weight"),
                    fmt::format("a shared expert, which {} is not exported with", h.arch));
    }
}

}  // namespace

void check_tensors(const gguf::Model &model, const Hparams &h, const ArchRow &row) {
    const Expect expect(model);
    const int64_t E = h.n_embd, V = h.n_vocab, H = h.n_head, Hkv = h.n_head_kv, D = h.head_dim,
                  F = h.n_ff;
    expect("token_embd.weight", {E, V}, true);
    if (row.bert_layout) {  // the embeddings' LayerNorm, positions and token types; no final norm
        expect("token_embd_norm.weight", {E}, true);
        expect("token_embd_norm.bias", {E}, true);
        if (row.positions == Positions::absolute)
            expect("position_embd.weight", {E, h.n_ctx_train}, true);
        if (row.token_types) expect("token_types.weight", {E, h.n_token_types}, false);
    } else {
        expect("output_norm.weight", {E}, true);
    }
    if (h.graph == Graph::decoder) {
        if (!h.tied) expect("output.weight", {E, V}, true);
        expect("output.bias", {V}, false);
    } else if (const gguf::TensorInfo *d2 = model.find_tensor("dense_2.weight")) {
        // sentence-transformers' Dense modules after the pooling (build_dense_out), n_embd in and
        // out (gemma-embedding's load_arch_hparams asserts it).
        const int64_t mid = int64_t(d2->ne[1]);
        expect("dense_2.weight", {E, mid}, true);
        expect("dense_2.bias", {mid}, false);
        expect("dense_3.weight", {mid, E}, true);
    } else if (expect.has("dense_3.weight")) {
        expect.fail("dense_3.weight", "without dense_2.weight");
    }
    for (int64_t il = 0; il < h.n_layer; ++il) {
        auto n = [il](std::string_view what) { return fmt::format("blk.{}.{}", il, what); };
        expect(n("attn_norm.weight"), {E}, row.pre_norms);
        // Q, K and V fused or apart, for every architecture (create_tensor_qkv in
        // src/llama-model.cpp): a fused one may carry its own bias or the three separate ones.
        if (expect(n("attn_qkv.weight"), {E, (H + 2 * Hkv) * D}, false)) {
            if (!expect(n("attn_qkv.bias"), {(H + 2 * Hkv) * D}, false)) {
                expect(n("attn_q.bias"), {H * D}, false);
                expect(n("attn_k.bias"), {Hkv * D}, false);
                expect(n("attn_v.bias"), {Hkv * D}, false);
            }
        } else {
            expect(n("attn_q.weight"), {E, H * D}, true);
            expect(n("attn_k.weight"), {E, Hkv * D}, true);
            expect(n("attn_v.weight"), {E, Hkv * D}, true);
            expect(n("attn_q.bias"), {H * D}, false);
            expect(n("attn_k.bias"), {Hkv * D}, false);
            expect(n("attn_v.bias"), {Hkv * D}, false);
        }
        expect(n("attn_output.weight"), {H * D, E}, true);
        expect(n("attn_output.bias"), {E}, false);
        if (row.qk_norm == QkNorm::per_head) {
            expect(n("attn_q_norm.weight"), {D}, true);
            expect(n("attn_k_norm.weight"), {D}, true);
        } else if (row.qk_norm == QkNorm::whole) {
            expect(n("attn_q_norm.weight"), {H * D}, true);
            expect(n("attn_k_norm.weight"), {Hkv * D}, true);
        } else if (row.qk_norm == QkNorm::layer) {
            for (const char *w : {"attn_q_norm.weight", "attn_q_norm.bias"})
                expect(n(w), {H * D}, expect.has(n("attn_q_norm.weight")));
            for (const char *w : {"attn_k_norm.weight", "attn_k_norm.bias"})
                expect(n(w), {Hkv * D}, expect.has(n("attn_k_norm.weight")));
        }
        if (row.bert_layout) {  // LayerNorms after the residual adds (attn_norm_2: jina-bert-v2)
            for (const char *w : {"attn_output_norm.weight", "attn_output_norm.bias",
                                  "layer_output_norm.weight", "layer_output_norm.bias"})
                expect(n(w), {E}, true);
            for (const char *w : {"attn_norm_2.weight", "attn_norm_2.bias"})
                expect(n(w), {E}, expect.has(n("attn_norm_2.weight")));
        }
        expect(n("post_attention_norm.weight"), {E}, row.post_norms);
        expect(n("post_ffw_norm.weight"), {E}, row.post_norms);
        expect(n(row.ffn_norm), {E}, row.pre_norms);
        if (row.attn_sinks) expect(n("attn_sinks.weight"), {H}, true);
        if (h.n_expert > 0) {
            check_experts(expect, n, h, row);
        } else if (row.ffn == Ffn::gate_up) {
            expect(n("ffn_gate.weight"), {E, F}, true);
            expect(n("ffn_up.weight"), {E, F}, true);
            expect(n("ffn_gate.bias"), {F}, false);
            expect(n("ffn_up.bias"), {F}, false);
        } else if (row.ffn == Ffn::up ||
                   (row.ffn == Ffn::by_shape && expect.has(n("ffn_gate.weight")))) {
            expect(n("ffn_gate.weight"), {E, F}, row.ffn == Ffn::by_shape);
            expect(n("ffn_up.weight"), {E, F}, true);
            expect(n("ffn_up.bias"), {F}, false);
        } else if (row.ffn == Ffn::by_shape) {  // up alone, or [gate | up] (GEGLU)
            const gguf::TensorInfo *up = model.find_tensor(n("ffn_up.weight"));
            const int64_t rows = up && up->ne[1] == uint64_t(2 * F) ? 2 * F : F;
            expect(n("ffn_up.weight"), {E, rows}, true);
            expect(n("ffn_up.bias"), {rows}, false);
        } else {
            expect(n("ffn_up.weight"), {E, 2 * F}, true);
            expect(n("ffn_up.bias"), {2 * F}, false);
        }
        if (h.n_expert == 0) {
            expect(n("ffn_down.weight"), {F, E}, true);
            expect(n("ffn_down.bias"), {E}, false);
        }
        if (h.n_expert == 0)
            for (const char *moe : {"ffn_gate_inp.weight", "ffn_up_exps.weight"})
                if (model.find_tensor(n(moe)))
                    throw Error(model.first().path(), std::nullopt,
                                fmt::format("tensor {}: an expert tensor, but {}.expert_count "
                                            "is 0 or missing",
                                            n(moe), h.arch));
    }
    expect("rope_freqs.weight", {h.n_rot / 2}, false);
    expect("rope_factors_long.weight", {h.n_rot / 2}, false);
    expect("rope_factors_short.weight", {h.n_rot / 2}, false);
}

}  // namespace gguftool::decoder::detail
