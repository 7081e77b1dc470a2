// The decoder graph: llama.cpp's forward pass (src/llama-graph.cpp build_norm, build_attn,
// build_ffn as src/models/<arch>.cpp call them) in standard ONNX operators.
//
// The hidden state is 2-D, [batch_size * sequence_length, n_embd], so every projection is one
// Gemm on the weight as stored (Y = X·Wᵀ + b, transB = 1) and norms reduce the last axis.
// Attention works on [B, S, heads, D]: RoPE by tables gathered at position_ids, K and V
// transposed to BNSH and concatenated to the past, Q grouped as [B, Hkv, r, S, D] so one batched
// MatMul with K [B, Hkv, 1, D, T] serves the r query heads of each KV head (GQA as ggml's
// broadcast: query head h uses KV head h / r). The additive mask [B, 1, 1, S, T] hides future
// keys (by index: the new tokens are the last S of the T), padding (attention_mask 0) and, for
// sliding-window layers, keys n_swa or more tokens back. Masked scores get the lowest float, not
// -inf, so that a fully masked row (a padding query) stays finite.
//
// The encoder graph (Graph::encoder) is the same pass without the cache and the head: the keys
// are the sequence itself, positions are counted from attention_mask (so left and right padding
// both work), the mask is causal only where {arch}.attention.causal says so, and the output is
// the final hidden state (and its pooling). The BERT layout (src/models/bert.cpp) adds absolute
// positions or ALiBi, token types and LayerNorms after the residual adds.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>

#include "decoder.hpp"
#include "gguftool/opset29.hpp"

namespace gguftool::decoder::detail {
namespace {

using onnx_export::detail::GraphBuilder;
using onnx_export::detail::set_attribute;
using onnx_export::detail::Sink;

// Node helpers: each returns the fresh value it computes, named "<scope>/<what>".
class Net {
public:
    Net(GraphBuilder &g, int opset) : g_(g), opset_(opset) {}

    std::string scope = "decoder";
    onnx::NodeProto *last = nullptr;  // the node op() appended last, for its attributes

    std::string op(const char *type, std::initializer_list<std::string> in, std::string_view what) {
        std::string out = g_.name(fmt::format("{}/{}", scope, what));
        last = &g_.node(scope, type, in, {out});
        return out;
    }
    // A node whose output has a given name (a graph output).
    void op_named(const char *type, std::initializer_list<std::string> in, const std::string &out) {
        last = &g_.node(scope, type, in, {out});
    }

    std::string add(const std::string &a, const std::string &b, std::string_view w = "add") {
        return op("Add", {a, b}, w);
    }
    std::string sub(const std::string &a, const std::string &b, std::string_view w = "sub") {
        return op("Sub", {a, b}, w);
    }
    std::string mul(const std::string &a, const std::string &b, std::string_view w = "mul") {
        return op("Mul", {a, b}, w);
    }
    std::string mul(const std::string &a, float b, std::string_view w = "mul") {
        return op("Mul", {a, f(b)}, w);
    }
    std::string f(float v) { return g_.float_scalar(v); }
    std::string i64(int64_t v) { return g_.int64_scalar(v); }
    std::string ints(const std::vector<int64_t> &v) { return g_.int64_vector("ints", v); }

    std::string unsqueeze(const std::string &x, const std::vector<int64_t> &axes,
                          std::string_view w = "unsqueeze") {
        return op("Unsqueeze", {x, ints(axes)}, w);
    }
    std::string reshape(const std::string &x, const std::string &shape,
                        std::string_view w = "reshape") {
        return op("Reshape", {x, shape}, w);
    }
    std::string transpose(const std::string &x, const std::vector<int64_t> &perm,
                          std::string_view w = "transpose") {
        std::string out = op("Transpose", {x}, w);
        set_attribute(*last, "perm", perm);
        return out;
    }
    // x[..., begin:end] on `axis`.
    std::string slice(const std::string &x, int64_t begin, int64_t end, int64_t axis,
                      std::string_view w = "slice") {
        return op("Slice", {x, ints({begin}), ints({end}), ints({axis})}, w);
    }
    std::string concat(std::initializer_list<std::string> in, int64_t axis,
                       std::string_view w = "concat") {
        std::string out = op("Concat", in, w);
        set_attribute(*last, "axis", axis);
        return out;
    }
    // Mean over the last axis, kept: ReduceMean-18 takes the axes as an input, -13 as attribute.
    std::string mean_last(const std::string &x) {
        if (opset_ >= 18) return op("ReduceMean", {x, ints({-1})}, "mean");
        std::string out = op("ReduceMean", {x}, "mean");
        set_attribute(*last, "axes", std::vector<int64_t>{-1});
        return out;
    }
    // Y = X·Wᵀ (+ b): X [N, in], W [out, in].
    std::string linear(const std::string &x, const std::string &w, const std::string &b,
                       std::string_view what) {
        std::string out = b.empty() ? op("Gemm", {x, w}, what) : op("Gemm", {x, w, b}, what);
        set_attribute(*last, "transB", int64_t{1});
        return out;
    }

    GraphBuilder &g() { return g_; }

private:
    GraphBuilder &g_;
    int opset_;
};

// The graph's inputs and outputs, with the dimension names transformers.js resolves (only
// batch_size; the KV heads and head size are fixed).
void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &list,
               const std::string &name, DataType type,
               const std::vector<std::variant<int64_t, std::string>> &dims) {
    onnx::ValueInfoProto &v = *list.Add();
    v.set_name(name);
    onnx::TypeProto_Tensor &t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(onnx_number(type));
    t.mutable_shape();  // a scalar's shape has no dimensions, but is known
    for (const auto &d : dims) {
        onnx::TensorShapeProto_Dimension &dim = *t.mutable_shape()->add_dim();
        if (std::holds_alternative<int64_t>(d))
            dim.set_dim_value(std::get<int64_t>(d));
        else
            dim.set_dim_param(std::get<std::string>(d));
    }
}

// Builds one decoder graph: the architecture's row says which quirks apply, the hparams their
// values.
class DecoderBuilder {
public:
    DecoderBuilder(GraphBuilder &g, const gguf::Model &model, const Hparams &h, const ArchRow &row,
                   const Options &o, int opset)
        : n_(g, opset),
          model_(model),
          h_(h),
          row_(row),
          weight_type_(o.weight_type),
          threads_(o.threads),
          nbits_(o.weights == Weights::nbits),
          accuracy_level_(o.accuracy_level),
          encoder_(h.graph == Graph::encoder) {}

    std::vector<int> build();
    std::map<std::string, size_t> forms;  // "<type> -> <form>": count

private:
    // The value of a GGUF tensor as float32, emitting its nodes on first use; "" when absent and
    // not required.
    std::string weight(const std::string &name, bool required = true);
    std::string layer_weight(int64_t il, std::string_view what, bool required = true) {
        return weight(fmt::format("blk.{}.{}", il, what), required);
    }
    // x·Wᵀ + b for the GGUF weight `w` (and bias `b`, if present): Gemm on the decoded weight,
    // or, with --weights nbits and a format that maps, MatMulNBits on the repacked blocks.
    std::string project(const std::string &x, const std::string &w, const std::string &b,
                        std::string_view what);
    std::string layer_project(const std::string &x, int64_t il, std::string_view w,
                              std::string_view what) {
        std::string bias(w);
        bias.replace(bias.size() - 6, 6, "bias");  // "....weight" -> "....bias"
        return project(x, fmt::format("blk.{}.{}", il, w), fmt::format("blk.{}.{}", il, bias),
                       what);
    }
    // The NBits operands of tensor `t` as payloads: B, scales and, for a format with a minimum,
    // the offsets transposed ([k_blocks, N], a MatMul's right side).
    struct NbitsOperands {
        std::string b, scales, offsets;
        NbitsForm form;
        int64_t n = 0, k = 0;
    };
    std::optional<NbitsOperands> nbits_operands(const gguf::TensorInfo &t);
    // x [T, K]'s sums over blocks of `block` along K: [T, K/block], made once per (x, block).
    std::string block_sums(const std::string &x, int64_t block);
    std::string embedding(const std::string &ids);
    std::string rms_norm(const std::string &x, const std::string &w);
    // ggml_norm then the weight and bias (build_norm's LLM_NORM): the BERT layout's LayerNorm.
    std::string layer_norm(const std::string &x, const std::string &w, const std::string &b);
    std::string layer_norm(const std::string &x, const std::string &name) {
        return layer_norm(x, weight(name + ".weight"), weight(name + ".bias", false));
    }
    std::string heads_shape(int64_t n);
    std::string rope(const std::string &x, int64_t heads, const std::string &cos,
                     const std::string &sin);
    std::string softcap(const std::string &x, float cap);
    void positions();
    void masks();
    // The encoder's positions (each row's count of attention_mask ones so far, less one) and
    // masks (padding, causal where the model is, sliding windows, ALiBi's distances).
    void encoder_positions();
    void encoder_masks();
    std::string layer(int64_t il, const std::string &x);
    std::string bert_layer(int64_t il, const std::string &x);
    std::vector<int> build_decoder();
    std::vector<int> build_encoder();
    // The pooled embedding of x [B, S, E] as llama.cpp's build_pooling computes it: [B, E].
    std::string pool(const std::string &x3);
    // sentence-transformers' Dense modules (build_dense_out): x unchanged when there are none.
    std::string dense(const std::string &x);
    std::string attention(int64_t il, const std::string &h);
    std::string ffn(int64_t il, const std::string &h);
    // silu(x·gateᵀ)·(x·upᵀ), projected by down: the dense FFN of build_ffn (LLM_FFN_PAR).
    std::string gated_ffn(const std::string &x, int64_t il, std::string_view gate,
                          std::string_view up, std::string_view down, std::string_view what);
    std::string activation(const std::string &gate);
    // The mixture of experts of layer il (build_moe_ffn): the router's top k per token, then a
    // Loop over the experts some token chose, each computing its tokens' rows only.
    std::string moe(int64_t il, const std::string &x);
    // The stacked expert tensor `name` ([X, rows, cols]) as an outer-scope value the Loop body
    // takes one expert of: its packed bytes [X, bytes per expert] or its float values.
    std::string expert_stack(const std::string &name);
    // Inside the body: expert `e`'s matrix of stack `name`, [rows, cols] float.
    std::string expert_matrix(const std::string &name, const std::string &e);
    // A [n_positions][n_rot/2] table as a payload initializer.
    std::string table(const std::string &name, std::shared_ptr<std::vector<float>> values,
                      int64_t rows, int64_t cols);
    std::vector<float> factors(const std::string &name);

    Net n_;
    const gguf::Model &model_;
    const Hparams &h_;
    const ArchRow &row_;
    DataType weight_type_;
    unsigned threads_;
    bool nbits_;
    int accuracy_level_;
    bool encoder_;
    std::map<std::string, std::string> weights_;
    std::map<std::string, NbitsOperands> nbits_done_;
    std::map<std::pair<std::string, int64_t>, std::string> block_sums_;
    std::vector<int> weight_nodes_;

    std::string batch_seq_;                        // Shape(input_ids): [B, S]
    std::string positions_ = "position_ids";       // [B, S]: the input, or the encoder's count
    std::string alibi_;                            // [B, 1, 1, S, S]: -|query pos - key pos|
    std::string cos_, sin_, cos_swa_, sin_swa_;    // [B, S, 1, n_rot/2]
    std::string temp_;                             // [B, S, 1, 1] (mistral3's temperature)
    std::map<int64_t, std::string> heads_shapes_;  // [B, S, n, head_dim] per head count n
    std::string mask_, mask_swa_;                  // [B, 1, 1, S, T]
};

// ggml_compute_forward_soft_max_f32's ALiBi slope of each head (max_bias > 0).
std::vector<float> alibi_slopes(int64_t n_head, float max_bias) {
    const uint32_t n_head_log2 = 1u << uint32_t(std::floor(std::log2(double(n_head))));
    const float m0 = powf(2.0f, -max_bias / float(n_head_log2));
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / float(n_head_log2));
    std::vector<float> out(static_cast<size_t>(n_head));
    for (int64_t h = 0; h < n_head; ++h)
        out[size_t(h)] = uint32_t(h) < n_head_log2
                             ? powf(m0, float(h + 1))
                             : powf(m1, float(2 * (h - int64_t(n_head_log2)) + 1));
    return out;
}

std::string DecoderBuilder::weight(const std::string &name, bool required) {
    if (auto it = weights_.find(name); it != weights_.end()) return it->second;
    const gguf::TensorInfo *t = model_.find_tensor(name);
    if (!t) {
        if (required)
            throw Error(model_.first().path(), std::nullopt,
                        fmt::format("tensor {}: missing", name));
        return weights_[name] = "";
    }
    onnx::GraphProto &graph = n_.g().plan().graph;
    const int before = graph.node_size();
    onnx_export::detail::emit_tensor(n_.g(), model_, *t, onnx_export::Mode::packed, weight_type_,
                                     weight_type_, threads_);
    for (int i = before; i < graph.node_size(); ++i) weight_nodes_.push_back(i);
    std::string value = name;
    if (weight_type_ != DataType::float32) {
        const std::string saved = n_.scope;
        n_.scope = name;
        value = n_.op("Cast", {name}, "float");
        set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
        n_.scope = saved;
    }
    return weights_[name] = value;
}

std::optional<DecoderBuilder::NbitsOperands> DecoderBuilder::nbits_operands(
    const gguf::TensorInfo &t) {
    const std::string name(t.name);
    if (auto it = nbits_done_.find(name); it != nbits_done_.end()) return it->second;
    const std::optional<NbitsForm> form = nbits_form(t.type);
    // A matrix [N, K], or a stack of experts' [X, N, K]: X·N rows of K.
    const int64_t K = int64_t(t.ne[0]), N = int64_t(t.ne[1]),
                  X = t.n_dims == 3 ? int64_t(t.ne[2]) : 1;
    if (!form || t.n_dims < 2 || t.n_dims > 3 || K % form->block != 0 ||
        model_.first().byte_order() != gguf::ByteOrder::little)
        return std::nullopt;
    NbitsOperands o;
    o.form = *form;
    o.n = N;
    o.k = K;
    const int64_t blocks = K / form->block, blob = form->block * form->bits / 8, R = X * N;
    const GgmlType type = t.type;
    const std::span<const uint8_t> data = t.data;
    const size_t in_row = data.size() / size_t(R);
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(K, 1));
    // Rows [r0, r0 + rows) repacked; an error names the tensor.
    const std::string path = model_.shards().at(t.shard)->path();
    const uint64_t at = t.file_offset;
    auto repack = [=](int64_t r0, int64_t rows, uint8_t *b, float *s, float *z) {
        try {
            nbits_rows(type, data.data() + size_t(r0) * in_row, rows, K, b, s, z);
        } catch (const Error &e) {
            throw Error(path, at, fmt::format("tensor {}: {}", name, e.problem()));
        }
    };
    // Codes and scales repack the rows again, a chunk at a time: memory stays bounded.
    auto writer = [=](bool codes) {
        return [=](Sink &sink) {
            std::vector<uint8_t> b;
            std::vector<float> s, z;
            for (int64_t r0 = 0; r0 < R; r0 += chunk) {
                const int64_t rows = std::min(chunk, R - r0);
                b.resize(size_t(rows * blocks * blob));
                s.resize(size_t(rows * blocks));
                z.resize(form->offsets ? size_t(rows * blocks) : 0);
                repack(r0, rows, b.data(), s.data(), z.empty() ? nullptr : z.data());
                if (codes)
                    sink.write(b.data(), b.size());
                else
                    sink.write(reinterpret_cast<const uint8_t *>(s.data()), s.size() * 4);
            }
        };
    };
    auto dims = [&](std::vector<int64_t> d) {
        if (t.n_dims == 3) d.insert(d.begin(), X);
        return d;
    };
    o.b = n_.g().payload(name + ":nbits", DataType::uint8, dims({N, blocks, blob}),
                         uint64_t(R * blocks * blob), writer(true));
    o.scales = n_.g().payload(name + ":scales", DataType::float32, dims({N, blocks}),
                              uint64_t(R * blocks * 4), writer(false));
    // The offsets, transposed per matrix ([k_blocks, N]): a matrix's at a time (an eighth of its
    // float values or less).
    if (form->offsets)
        o.offsets = n_.g().payload(
            name + ":offsets", DataType::float32, dims({blocks, N}), uint64_t(R * blocks * 4),
            [=](Sink &sink) {
                std::vector<uint8_t> b;
                std::vector<float> s, z(size_t(N * blocks)), column(static_cast<size_t>(N));
                for (int64_t e = 0; e < X; ++e) {
                    for (int64_t r0 = 0; r0 < N; r0 += chunk) {
                        const int64_t rows = std::min(chunk, N - r0);
                        b.resize(size_t(rows * blocks * blob));
                        s.resize(size_t(rows * blocks));
                        repack(e * N + r0, rows, b.data(), s.data(),
                               z.data() + size_t(r0 * blocks));
                    }
                    for (int64_t kb = 0; kb < blocks; ++kb) {
                        for (int64_t n = 0; n < N; ++n)
                            column[size_t(n)] = z[size_t(n * blocks + kb)];
                        sink.write(reinterpret_cast<const uint8_t *>(column.data()),
                                   column.size() * 4);
                    }
                }
            });
    return nbits_done_[name] = o;
}

std::string DecoderBuilder::block_sums(const std::string &x, int64_t block) {
    if (auto it = block_sums_.find({x, block}); it != block_sums_.end()) return it->second;
    const std::string blocks = n_.reshape(x, n_.ints({0, -1, block}), "blocks");
    std::string sums = n_.op("ReduceSum", {blocks, n_.ints({-1})}, "block_sums");
    set_attribute(*n_.last, "keepdims", int64_t{0});
    return block_sums_[{x, block}] = sums;
}

std::string DecoderBuilder::project(const std::string &x, const std::string &w,
                                    const std::string &b, std::string_view what) {
    const gguf::TensorInfo *t = model_.find_tensor(w);
    if (!t) throw Error(model_.first().path(), std::nullopt, fmt::format("tensor {}: missing", w));
    if (nbits_ && traits(t->type).quantized) {
        if (const std::optional<NbitsOperands> o = nbits_operands(*t)) {
            ++forms[fmt::format("{} -> MatMulNBits{}", type_name(t->type),
                                o->form.offsets ? " + offsets" : "")];
            const std::string bias = weight(b, false);
            std::string out = n_.g().name(fmt::format("{}/{}", n_.scope, what));
            onnx::NodeProto &node =
                n_.g().node(n_.scope, "MatMulNBits", {x, o->b, o->scales, "", "", bias}, {out});
            while (node.input_size() > 3 && node.input(node.input_size() - 1).empty())
                node.mutable_input()->RemoveLast();
            node.set_domain("com.microsoft");
            set_attribute(node, "K", o->k);
            set_attribute(node, "N", o->n);
            set_attribute(node, "bits", int64_t(o->form.bits));
            set_attribute(node, "block_size", int64_t(o->form.block));
            if (accuracy_level_) set_attribute(node, "accuracy_level", int64_t(accuracy_level_));
            if (o->form.offsets)  // + Σ_block x · offset
                return n_.add(out,
                              n_.op("MatMul", {block_sums(x, o->form.block), o->offsets},
                                    fmt::format("{}_min", what)),
                              what);
            return out;
        }
    }
    if (nbits_)
        ++forms[fmt::format("{} -> {}", type_name(t->type),
                            traits(t->type).quantized ? "DequantizePacked" : "plain")];
    return n_.linear(x, weight(w), weight(b, false), what);
}

// The token embedding's rows at `ids`: Gather on the decoded table, or with --weights nbits, the
// rows of the repacked blocks (which a tied head's MatMulNBits shares) gathered and decoded by
// standard operators, as MatMulNBits decodes them: (code - zero point) · scale (+ the block's
// offset). Every onnxruntime build runs these (onnxruntime-web has no GatherBlockQuantized).
std::string DecoderBuilder::embedding(const std::string &ids) {
    const gguf::TensorInfo *t = model_.find_tensor("token_embd.weight");
    if (nbits_ && t && traits(t->type).quantized) {
        if (const std::optional<NbitsOperands> o = nbits_operands(*t)) {
            ++forms[fmt::format("{} -> Gather + decode{}", type_name(t->type),
                                o->form.offsets ? " + offsets" : "")];
            const int64_t blocks = o->k / o->form.block;
            const std::string at = n_.reshape(ids, n_.ints({-1}), "embd_ids");  // [T]
            std::string codes = n_.op("Cast", {n_.op("Gather", {o->b, at}, "embd_bytes")},
                                      "embd_bytes64");  // [T, blocks, blob]
            set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::int64)));
            if (o->form.bits == 4) {  // element 2i: byte i's low nibble, 2i + 1: its high one
                const std::string sixteen = n_.i64(16);
                const std::string low = n_.unsqueeze(n_.op("Mod", {codes, sixteen}, "low"), {-1});
                const std::string high = n_.unsqueeze(n_.op("Div", {codes, sixteen}, "high"), {-1});
                codes = n_.reshape(n_.concat({low, high}, -1, "nibbles"),
                                   n_.ints({0, blocks, o->form.block}), "embd_codes");
            }
            std::string values =
                n_.op("Cast", {n_.sub(codes, n_.i64(1 << (o->form.bits - 1)), "centred")},
                      "embd_codes_f");
            set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
            const std::string scales = n_.op("Gather", {o->scales, at}, "embd_scales");
            values = n_.mul(values, n_.unsqueeze(scales, {-1}), "embd_scaled");
            if (o->form.offsets) {  // offsets [k_blocks, V] gathered on V: [blocks, T]
                std::string offsets = n_.op("Gather", {o->offsets, at}, "embd_offsets");
                set_attribute(*n_.last, "axis", int64_t{1});
                offsets = n_.unsqueeze(n_.transpose(offsets, {1, 0}), {-1});
                values = n_.add(values, offsets, "embd_shifted");
            }
            return n_.reshape(values, n_.ints({-1, o->k}), "rows");
        }
    }
    if (nbits_ && t)
        ++forms[fmt::format("{} -> {}", type_name(t->type),
                            traits(t->type).quantized ? "DequantizePacked" : "plain")];
    return n_.op("Gather", {weight("token_embd.weight"), ids}, "rows");
}

// The shape [B, S, n, head_dim], made once per head count for the whole graph.
std::string DecoderBuilder::heads_shape(int64_t n) {
    if (auto it = heads_shapes_.find(n); it != heads_shapes_.end()) return it->second;
    const std::string saved = n_.scope;
    n_.scope = "shapes";
    const std::string shape =
        n_.concat({batch_seq_, n_.ints({n, h_.head_dim})}, 0, fmt::format("heads{}", n));
    n_.scope = saved;
    return heads_shapes_[n] = shape;
}

std::string DecoderBuilder::rms_norm(const std::string &x, const std::string &w) {
    // ggml_rms_norm: scale = 1 / sqrtf(mean(x²) + eps); then the weight (a separate ggml_mul).
    const std::string ms = n_.mean_last(n_.mul(x, x, "square"));
    const std::string s = n_.op("Sqrt", {n_.add(ms, n_.f(h_.rms_eps), "var")}, "rms");
    const std::string r = n_.op("Div", {n_.f(1.0f), s}, "inv_rms");
    return n_.mul(n_.mul(x, r, "normed"), w, "norm");
}

std::string DecoderBuilder::layer_norm(const std::string &x, const std::string &w,
                                       const std::string &b) {
    // ggml_norm: x - mean, scaled by 1 / sqrtf(mean((x - mean)²) + eps); then weight and bias.
    const std::string d = n_.sub(x, n_.mean_last(x), "centred");
    const std::string var = n_.mean_last(n_.mul(d, d, "square"));
    const std::string s = n_.op("Sqrt", {n_.add(var, n_.f(h_.norm_eps), "var_eps")}, "std");
    std::string y = n_.mul(n_.mul(d, n_.op("Div", {n_.f(1.0f), s}, "inv_std"), "normed"), w, "ln");
    return b.empty() ? y : n_.add(y, b, "ln_bias");
}

std::string DecoderBuilder::softcap(const std::string &x, float cap) {
    const std::string t = n_.op("Tanh", {n_.mul(x, 1.0f / cap, "capped")}, "tanh");
    return n_.mul(t, cap, "softcap");
}

// x [B, S, heads, D] rotated on its first n_rot dimensions; cos, sin [B, S, 1, n_rot/2].
std::string DecoderBuilder::rope(const std::string &x, int64_t heads, const std::string &cos,
                                 const std::string &sin) {
    const int64_t R = h_.n_rot, half = R / 2, D = h_.head_dim;
    const std::string rot = R == D ? x : n_.slice(x, 0, R, -1, "rot");
    std::string x1, x2, c = cos, s = sin;
    if (row_.rope == Rope::neox) {  // pairs (i, i + n_rot/2)
        x1 = n_.slice(rot, 0, half, -1, "x1");
        x2 = n_.slice(rot, half, R, -1, "x2");
    } else {  // adjacent pairs (2i, 2i + 1): [B, S, heads, n_rot/2, 2]
        const std::string pairs = n_.reshape(rot, n_.ints({0, 0, heads, half, 2}), "pairs");
        x1 = n_.slice(pairs, 0, 1, -1, "x1");
        x2 = n_.slice(pairs, 1, 2, -1, "x2");
        c = n_.unsqueeze(cos, {-1}, "cos");
        s = n_.unsqueeze(sin, {-1}, "sin");
    }
    // ggml: x0' = x0·cos − x1·sin, x1' = x0·sin + x1·cos.
    const std::string o1 = n_.sub(n_.mul(x1, c), n_.mul(x2, s), "o1");
    const std::string o2 = n_.add(n_.mul(x1, s), n_.mul(x2, c), "o2");
    std::string out;
    if (row_.rope == Rope::neox) {
        out = n_.concat({o1, o2}, -1, "roped");
    } else {
        out =
            n_.reshape(n_.concat({o1, o2}, -1, "pairs_roped"), n_.ints({0, 0, heads, R}), "roped");
    }
    if (R < D) out = n_.concat({out, n_.slice(x, R, D, -1, "pass")}, -1, "rope");
    return out;
}

std::vector<float> DecoderBuilder::factors(const std::string &name) {
    const gguf::TensorInfo *t = model_.find_tensor(name);
    if (!t) return {};
    if (t->type != GgmlType::f32 || t->elements != uint64_t(h_.n_rot / 2) ||
        model_.first().byte_order() != gguf::ByteOrder::little)
        throw Error(
            model_.shards().at(t->shard)->path(), t->file_offset,
            fmt::format("tensor {}: expected {} little-endian f32 values", name, h_.n_rot / 2));
    std::vector<float> v(t->elements);
    std::memcpy(v.data(), t->data.data(), v.size() * sizeof(float));
    return v;
}

std::string DecoderBuilder::table(const std::string &name,
                                  std::shared_ptr<std::vector<float>> values, int64_t rows,
                                  int64_t cols) {
    const uint64_t bytes = values->size() * sizeof(float);
    return n_.g().payload(name, DataType::float32, {rows, cols}, bytes, [values](Sink &s) {
        s.write(reinterpret_cast<const uint8_t *>(values->data()), values->size() * sizeof(float));
    });
}

// cos/sin at position_ids, for the global layers and (if they differ) the sliding-window ones;
// mistral3's temperature.
void DecoderBuilder::positions() {
    n_.scope = "positions";
    const int64_t P = h_.n_ctx_train, half = h_.n_rot / 2;
    // Frequency factors (llama_model::get_rope_factors): rope_freqs (llama3) wins; else
    // rope_factors_short up to the original context and rope_factors_long beyond it (llama.cpp
    // picks by the context size, a whole run at a time; here by position).
    std::vector<float> ff = factors("rope_freqs.weight");
    std::vector<float> ff_long, ff_short;
    if (ff.empty()) {
        ff_long = factors("rope_factors_long.weight");
        ff_short = factors("rope_factors_short.weight");
    }
    auto make = [&](const RopeParams &p, const char *label, std::string &cos_out,
                    std::string &sin_out) {
        auto c = std::make_shared<std::vector<float>>(size_t(P * half));
        auto s = std::make_shared<std::vector<float>>(size_t(P * half));
        if (!ff_long.empty() || !ff_short.empty()) {
            const int64_t split = std::min<int64_t>(P, h_.n_ctx_orig);
            rope_tables(h_, p, ff_short, 0, split, c->data(), s->data());
            if (split < P)
                rope_tables(h_, p, ff_long.empty() ? ff_short : ff_long, split, P - split,
                            c->data() + split * half, s->data() + split * half);
        } else {
            rope_tables(h_, p, ff, 0, P, c->data(), s->data());
        }
        const std::string ct = table(fmt::format("gguftool:rope_cos{}", label), c, P, half);
        const std::string st = table(fmt::format("gguftool:rope_sin{}", label), s, P, half);
        cos_out = n_.unsqueeze(n_.op("Gather", {ct, positions_}, "cos"), {2}, "cos4");
        sin_out = n_.unsqueeze(n_.op("Gather", {st, positions_}, "sin"), {2}, "sin4");
    };
    bool any_rope = false, any_swa = false;
    for (int64_t il = 0; il < h_.n_layer; ++il) {
        any_rope |= bool(h_.rope_layers[il]);
        any_swa |= h_.rope_layers[il] && h_.swa[il];
    }
    if (!any_rope) return;  // no layer rotates (granite's switch)
    const RopeParams &g = h_.rope, &l = h_.rope_swa;
    make(g, "", cos_, sin_);
    if (any_swa && (l.freq_base != g.freq_base || l.freq_scale != g.freq_scale ||
                    l.ext_factor != g.ext_factor || l.attn_factor != g.attn_factor))
        make(l, "_swa", cos_swa_, sin_swa_);
    else {
        cos_swa_ = cos_;
        sin_swa_ = sin_;
    }
    if (h_.attn_temp_scale != 0.0f) {
        auto t = std::make_shared<std::vector<float>>(size_t(P));
        for (int64_t p = 0; p < P; ++p)  // llm_graph_input_attn_temp::set_input
            (*t)[p] = float(std::log(std::floor(float(p) / float(h_.attn_temp_floor)) + 1.0) *
                                h_.attn_temp_scale +
                            1.0);
        const std::string tt = n_.g().payload(
            "gguftool:attn_temperature", DataType::float32, {P}, P * sizeof(float), [t](Sink &s) {
                s.write(reinterpret_cast<const uint8_t *>(t->data()), t->size() * sizeof(float));
            });
        temp_ =
            n_.unsqueeze(n_.op("Gather", {tt, positions_}, "temperature"), {2, 3}, "temperature4");
    }
}

void DecoderBuilder::masks() {
    n_.scope = "mask";
    const std::string total =
        n_.op("Gather", {n_.op("Shape", {"attention_mask"}, "mask_shape"), n_.i64(1)}, "total");
    const std::string seq = n_.op("Gather", {batch_seq_, n_.i64(1)}, "seq");
    const std::string past = n_.sub(total, seq, "past");
    const std::string keys =
        n_.unsqueeze(n_.op("Range", {n_.i64(0), total, n_.i64(1)}, "keys"), {0}, "key_row");
    const std::string queries =
        n_.unsqueeze(n_.op("Range", {past, total, n_.i64(1)}, "queries"), {1}, "query_col");
    const std::string future = n_.op("Greater", {keys, queries}, "future");  // [S, T]
    const std::string pad = n_.unsqueeze(
        n_.op("Equal", {"attention_mask", n_.g().int64_vector("ints", {0})}, "padding"), {1},
        "padding3");                                                  // [B, 1, T]
    const std::string hidden = n_.op("Or", {future, pad}, "hidden");  // [B, S, T]
    const std::string lowest = n_.f(std::numeric_limits<float>::lowest());
    const std::string zero = n_.f(0.0f);
    auto additive = [&](const std::string &h, std::string_view what) {
        return n_.unsqueeze(n_.op("Where", {h, lowest, zero}, what), {1, 2},
                            fmt::format("{}5", what));
    };
    mask_ = additive(hidden, "additive");
    if (h_.n_swa > 0) {
        // llama.cpp (is_masked_swa, standard): hidden iff query position - key position >= n_swa.
        const std::string back = n_.sub(queries, keys, "distance");
        const std::string old = n_.op("GreaterOrEqual", {back, n_.i64(h_.n_swa)}, "too_old");
        mask_swa_ = additive(n_.op("Or", {hidden, old}, "hidden_swa"), "additive_swa");
    }
}

void DecoderBuilder::encoder_positions() {
    n_.scope = "positions";
    // Σ_{i <= j} mask[b, i] as a product with the upper triangle of ones (exact in float up to
    // 2^24 tokens), less one, from 0: llama.cpp's positions of each sequence's tokens.
    const std::string seq = n_.op("Gather", {batch_seq_, n_.i64(1)}, "seq");
    const std::string idx = n_.op("Range", {n_.i64(0), seq, n_.i64(1)}, "index");
    std::string upper =
        n_.op("LessOrEqual",
              {n_.unsqueeze(idx, {1}, "index_col"), n_.unsqueeze(idx, {0}, "index_row")}, "upper");
    upper = n_.op("Cast", {upper}, "upper_f");
    set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    std::string mask = n_.op("Cast", {"attention_mask"}, "mask_f");
    set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    std::string count = n_.op("Cast", {n_.op("MatMul", {mask, upper}, "count_f")}, "count");
    set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::int64)));
    const std::string pos = n_.sub(count, n_.i64(1), "pos_from_0");
    positions_ = n_.op("Where", {n_.op("Less", {pos, n_.i64(0)}, "before_first"), n_.i64(0), pos},
                       "position");
}

void DecoderBuilder::encoder_masks() {
    n_.scope = "mask";
    const std::string keys = n_.unsqueeze(positions_, {1}, "key_pos");       // [B, 1, S]
    const std::string queries = n_.unsqueeze(positions_, {2}, "query_pos");  // [B, S, 1]
    std::string hidden = n_.unsqueeze(
        n_.op("Equal", {"attention_mask", n_.g().int64_vector("ints", {0})}, "padding"), {1},
        "padding3");  // [B, 1, S]
    if (h_.causal)
        hidden = n_.op("Or", {hidden, n_.op("Greater", {keys, queries}, "future")}, "hidden");
    const std::string lowest = n_.f(std::numeric_limits<float>::lowest());
    const std::string zero = n_.f(0.0f);
    auto additive = [&](const std::string &h, std::string_view what) {
        return n_.unsqueeze(n_.op("Where", {h, lowest, zero}, what), {1, 2},
                            fmt::format("{}5", what));
    };
    mask_ = additive(hidden, "additive");
    const std::string back = n_.sub(queries, keys, "distance");  // p1 - p0 (is_masked_swa)
    if (h_.n_swa > 0) {
        std::string out;
        if (row_.swa == Swa::symmetric) {  // |p1 - p0| > n_swa / 2
            const int64_t half = int64_t(h_.n_swa / 2);
            out = n_.op("Or",
                        {n_.op("Less", {back, n_.i64(-half)}, "before_window"),
                         n_.op("Greater", {back, n_.i64(half)}, "after_window")},
                        "outside");
        } else {
            out = n_.op("GreaterOrEqual", {back, n_.i64(h_.n_swa)}, "too_old");
        }
        mask_swa_ = additive(n_.op("Or", {hidden, out}, "hidden_swa"), "additive_swa");
    }
    if (h_.max_alibi_bias > 0) {  // the mask's value where visible: -|p0 - p1|
        const std::string neg =
            n_.op("Where",
                  {n_.op("Less", {back, n_.i64(0)}, "behind"), back, n_.op("Neg", {back}, "minus")},
                  "minus_abs");
        std::string f = n_.op("Cast", {neg}, "minus_abs_f");
        set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
        alibi_ = n_.unsqueeze(f, {1, 2}, "alibi_distance");
    }
}

std::string DecoderBuilder::attention(int64_t il, const std::string &x) {
    const int64_t H = h_.n_head, Hkv = h_.n_head_kv, D = h_.head_dim, r = H / Hkv;
    std::string q, k, v;
    if (model_.find_tensor(fmt::format("blk.{}.attn_qkv.weight", il))) {
        const std::string all = layer_project(x, il, "attn_qkv.weight", "qkv");
        q = n_.slice(all, 0, H * D, 1, "q");
        k = n_.slice(all, H * D, (H + Hkv) * D, 1, "k");
        v = n_.slice(all, (H + Hkv) * D, (H + 2 * Hkv) * D, 1, "v");
        // No fused bias: the three separate ones, when all three are there (build_qkv).
        if (weight(fmt::format("blk.{}.attn_qkv.bias", il), false).empty()) {
            const std::string bq = layer_weight(il, "attn_q.bias", false),
                              bk = layer_weight(il, "attn_k.bias", false),
                              bv = layer_weight(il, "attn_v.bias", false);
            if (!bq.empty() && !bk.empty() && !bv.empty()) {
                q = n_.add(q, bq, "q_bias");
                k = n_.add(k, bk, "k_bias");
                v = n_.add(v, bv, "v_bias");
            }
        }
    } else {
        q = layer_project(x, il, "attn_q.weight", "q");
        k = layer_project(x, il, "attn_k.weight", "k");
        v = layer_project(x, il, "attn_v.weight", "v");
    }
    auto qk_norm = [&] {
        q = rms_norm(q, layer_weight(il, "attn_q_norm.weight"));
        k = rms_norm(k, layer_weight(il, "attn_k_norm.weight"));
    };
    if (row_.qk_norm == QkNorm::whole) qk_norm();
    if (row_.qk_norm == QkNorm::layer) {
        if (model_.find_tensor(fmt::format("blk.{}.attn_q_norm.weight", il)))
            q = layer_norm(q, fmt::format("blk.{}.attn_q_norm", il));
        if (model_.find_tensor(fmt::format("blk.{}.attn_k_norm.weight", il)))
            k = layer_norm(k, fmt::format("blk.{}.attn_k_norm", il));
    }
    auto heads = [&](const std::string &t, int64_t n, std::string_view what) {
        return n_.reshape(t, heads_shape(n), fmt::format("{}_heads", what));
    };
    q = heads(q, H, "q");
    k = heads(k, Hkv, "k");
    v = heads(v, Hkv, "v");
    if (row_.qk_norm == QkNorm::per_head) qk_norm();
    const bool swa = h_.swa[il];
    if (h_.rope_layers[il]) {
        q = rope(q, H, swa ? cos_swa_ : cos_, swa ? sin_swa_ : sin_);
        k = rope(k, Hkv, swa ? cos_swa_ : cos_, swa ? sin_swa_ : sin_);
    }
    if (h_.q_scale != 1.0f) q = n_.mul(q, h_.q_scale, "q_scaled");
    if (!temp_.empty()) q = n_.mul(q, temp_, "q_temperature");

    // The cache: BNSH, keys after RoPE (the encoder has none: the keys are the sequence's).
    std::string present_k = n_.transpose(k, {0, 2, 1, 3}, "k_t");
    std::string present_v = n_.transpose(v, {0, 2, 1, 3}, "v_t");
    if (!encoder_) {
        const std::string kt = present_k, vt = present_v;
        present_k = fmt::format("present.{}.key", il);
        present_v = fmt::format("present.{}.value", il);
        n_.op_named("Concat", {fmt::format("past_key_values.{}.key", il), kt}, present_k);
        set_attribute(*n_.last, "axis", int64_t{2});
        n_.op_named("Concat", {fmt::format("past_key_values.{}.value", il), vt}, present_v);
        set_attribute(*n_.last, "axis", int64_t{2});
    }

    const std::string q5 =
        n_.transpose(n_.reshape(q, n_.ints({0, 0, Hkv, r, D}), "q_groups"), {0, 2, 3, 1, 4}, "q5");
    const std::string k5 = n_.unsqueeze(n_.transpose(present_k, {0, 1, 3, 2}, "k_cols"), {2}, "k5");
    std::string scores = n_.op("MatMul", {q5, k5}, "scores");  // [B, Hkv, r, S, T]
    if (h_.kq_scale != 1.0f) scores = n_.mul(scores, h_.kq_scale, "scores_scaled");
    if (h_.attn_softcap != 0.0f) scores = softcap(scores, h_.attn_softcap);
    if (!alibi_.empty()) {  // + slope of the head · -|p0 - p1| (ggml_soft_max_ext's max_bias)
        const std::vector<float> slopes = alibi_slopes(H, h_.max_alibi_bias);
        const std::string s5 = n_.reshape(n_.g().float_table("alibi_slopes", slopes),
                                          n_.ints({1, Hkv, r, 1, 1}), "alibi_slopes5");
        scores = n_.add(scores, n_.mul(s5, alibi_, "alibi"), "scores_alibi");
    }
    scores = n_.add(scores, swa ? mask_swa_ : mask_, "scores_masked");
    // Attention sinks (ggml_soft_max_add_sinks): each head's sink logit joins its softmax's max
    // and sum as one more key, which has no value: a column appended, then dropped.
    const std::string sinks = row_.attn_sinks ? layer_weight(il, "attn_sinks.weight") : "";
    if (!sinks.empty()) {
        const std::string shape = n_.op("Shape", {scores}, "scores_shape");
        const std::string column =
            n_.concat({n_.slice(shape, 0, 4, 0, "scores_rows"), n_.ints({1})}, 0, "sink_shape");
        const std::string sink = n_.op(
            "Expand", {n_.reshape(sinks, n_.ints({1, Hkv, r, 1, 1}), "sinks5"), column}, "sink");
        scores = n_.concat({scores, sink}, -1, "scores_sinks");
    }
    std::string probs = n_.op("Softmax", {scores}, "probs");
    set_attribute(*n_.last, "axis", int64_t{-1});
    if (!sinks.empty())
        probs = n_.op("Slice", {probs, n_.ints({0}), n_.ints({-1}), n_.ints({-1})}, "probs_keys");
    const std::string o = n_.op("MatMul", {probs, n_.unsqueeze(present_v, {2}, "v5")}, "context");
    const std::string merged =
        n_.reshape(n_.transpose(o, {0, 3, 1, 2, 4}, "context_t"), n_.ints({-1, H * D}), "context2");
    return layer_project(merged, il, "attn_output.weight", "attn_out");
}

std::string DecoderBuilder::ffn(int64_t il, const std::string &x) {
    if (h_.n_expert > 0) return moe(il, x);
    const bool has_gate = model_.find_tensor(fmt::format("blk.{}.ffn_gate.weight", il)) != nullptr;
    if (row_.ffn == Ffn::gate_up || (row_.ffn == Ffn::by_shape && has_gate))
        return gated_ffn(x, il, "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", "ffn_out");
    const gguf::TensorInfo *up_w = model_.find_tensor(fmt::format("blk.{}.ffn_up.weight", il));
    if (row_.ffn == Ffn::up || (row_.ffn == Ffn::by_shape && up_w->ne[1] != uint64_t(2 * h_.n_ff)))
        // act(x·upᵀ + b), then down (LLM_FFN_SEQ, or PAR without a gate)
        return layer_project(activation(layer_project(x, il, "ffn_up.weight", "up")), il,
                             "ffn_down.weight", "ffn_out");
    // ffn_up holds gate then up (2·n_ff rows)
    const int64_t F = h_.n_ff;
    const std::string both = layer_project(x, il, "ffn_up.weight", "gate_up");
    const std::string gate = n_.slice(both, 0, F, 1, "gate"),
                      up = n_.slice(both, F, 2 * F, 1, "up");
    return layer_project(n_.mul(activation(gate), up, "gated"), il, "ffn_down.weight", "ffn_out");
}

std::string DecoderBuilder::gated_ffn(const std::string &x, int64_t il, std::string_view gate_w,
                                      std::string_view up_w, std::string_view down_w,
                                      std::string_view what) {
    const std::string gate = layer_project(x, il, gate_w, "gate");
    const std::string up = layer_project(x, il, up_w, "up");
    return layer_project(n_.mul(activation(gate), up, "gated"), il, down_w, what);
}

// The gate's activation (the product with up follows).
std::string DecoderBuilder::activation(const std::string &gate) {
    std::string act;
    if (row_.act == Act::gelu) {
        // ggml's CPU GELU (ggml_vec_gelu_f32 and ggml_vec_geglu_f32 with GGML_GELU_FP16, the
        // build's default): 0 at x <= -10, x at x >= 10, else a table of fp16 values looked up by
        // x in fp16: fp16(gelu(fp16(x))), gelu(x) = 0.5x(1 + tanh(sqrt(2/pi)·x·(1 + 0.044715x²))).
        auto fp16 = [&](const std::string &v, std::string_view what) {
            std::string h = n_.op("Cast", {v}, fmt::format("{}_f16", what));
            set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float16)));
            h = n_.op("Cast", {h}, what);
            set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
            return h;
        };
        const std::string x = fp16(gate, "gelu_x");
        const std::string ax2 = n_.mul(n_.mul(x, 0.044715f, "gelu_ax"), x, "gelu_ax2");
        const std::string inner = n_.mul(n_.mul(x, 0.7978845608028654f, "gelu_a"),
                                         n_.add(ax2, n_.f(1.0f), "gelu_c"), "gelu_in");
        const std::string t = n_.op("Tanh", {inner}, "gelu_tanh");
        const std::string g =
            fp16(n_.mul(n_.mul(x, 0.5f, "gelu_half"), n_.add(t, n_.f(1.0f), "gelu_one"), "gelu_f"),
                 "gelu_table");
        act = n_.op(
            "Where",
            {n_.op("LessOrEqual", {gate, n_.f(-10.0f)}, "gelu_low"), n_.f(0.0f),
             n_.op("Where", {n_.op("GreaterOrEqual", {gate, n_.f(10.0f)}, "gelu_high"), gate, g},
                   "gelu_mid")},
            "gelu");
    } else {  // silu(x) = x·sigmoid(x)
        act = n_.mul(gate, n_.op("Sigmoid", {gate}, "sigmoid"), "silu");
    }
    return act;
}

std::string DecoderBuilder::expert_stack(const std::string &name) {
    if (auto it = weights_.find(name); it != weights_.end()) return it->second;
    const gguf::TensorInfo *t = model_.find_tensor(name);
    if (!t) return weights_[name] = "";
    if (!traits(t->type).quantized) return weight(name);  // the float stack [X, rows, cols]
    if (model_.first().byte_order() != gguf::ByteOrder::little)
        throw Error(model_.shards().at(t->shard)->path(), t->file_offset,
                    fmt::format("tensor {}: {} data of a big-endian file cannot be converted", name,
                                type_name(t->type)));
    // The GGUF bytes as they are, one row per expert: experts are contiguous (ne[2] slowest).
    const int64_t X = int64_t(t->ne[2]), per = int64_t(t->bytes) / X;
    const gguf::TensorData source = gguf::TensorData::copy(*model_.shards().at(t->shard), *t);
    ++n_.g().plan().packed;
    return weights_[name] = n_.g().payload(name + ":packed", DataType::uint8, {X, per}, t->bytes,
                                           [source](Sink &sink) { sink.copy(source); });
}

std::string DecoderBuilder::expert_matrix(const std::string &name, const std::string &e) {
    const gguf::TensorInfo *t = model_.find_tensor(name);
    const std::string stack = expert_stack(name);
    const std::string one = n_.op("Gather", {stack, e}, "expert");  // [rows, cols] or [bytes]
    if (!traits(t->type).quantized) return one;
    const int64_t rows = int64_t(t->ne[1]), cols = int64_t(t->ne[0]);
    std::string w = n_.op("DequantizePacked", {one}, "expert_w");
    set_attribute(*n_.last, "format", opset29::format_name(t->type));
    set_attribute(*n_.last, "shape", std::vector<int64_t>{rows, cols});
    set_attribute(*n_.last, "output_dtype", int64_t(onnx_number(weight_type_)));
    if (weight_type_ != DataType::float32) {
        w = n_.op("Cast", {w}, "expert_f32");
        set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    }
    return w;
}

std::string DecoderBuilder::moe(int64_t il, const std::string &x) {
    const int64_t K = h_.n_expert_used, X = h_.n_expert;
    auto name = [il](std::string_view what) { return fmt::format("blk.{}.{}", il, what); };

    // The router: logits [N, X], the top k per token and their weights [N, k].
    const std::string logits = layer_project(x, il, "ffn_gate_inp.weight", "router");
    std::string weights, chosen;
    auto topk = [&](const std::string &v) {
        weights = n_.g().name(fmt::format("{}/topk_values", n_.scope));
        chosen = n_.g().name(fmt::format("{}/topk_experts", n_.scope));
        onnx::NodeProto &t = n_.g().node(n_.scope, "TopK", {v, n_.ints({K})}, {weights, chosen});
        set_attribute(t, "axis", int64_t{-1});
    };
    auto softmax = [&](const std::string &v, std::string_view what) {
        const std::string out = n_.op("Softmax", {v}, what);
        set_attribute(*n_.last, "axis", int64_t{-1});
        return out;
    };
    if (row_.gating == Gating::softmax) {
        topk(softmax(logits, "router_probs"));
    } else {  // the top k logits, then their softmax
        topk(logits);
        weights = softmax(weights, "router_weights");
    }
    if (row_.experts_norm) {  // w / max(sum w, 2^-14): the clamp is ggml_clamp's, not a Max
        std::string sum = n_.op("ReduceSum", {weights, n_.ints({-1})}, "weights_sum");
        const std::string floor = n_.f(6.103515625e-5f);
        sum = n_.op("Where", {n_.op("Less", {sum, floor}, "weights_small"), floor, sum},
                    "weights_sum_clamped");
        weights = n_.op("Div", {weights, sum}, "weights_norm");
    }

    // The experts any token chose, ascending: the Loop's iterations.
    const std::string hot =
        n_.op("OneHot", {chosen, n_.i64(X), n_.g().float_table("one_hot_01", {0, 1})},
              "chosen_one_hot");  // [N, k, X]
    set_attribute(*n_.last, "axis", int64_t{-1});
    const std::string counts = n_.op("ReduceSum", {hot, n_.ints({0, 1})}, "expert_tokens");
    set_attribute(*n_.last, "keepdims", int64_t{0});
    const std::string used = n_.reshape(
        n_.op("NonZero", {n_.op("Greater", {counts, n_.f(0.0f)}, "expert_used")}, "used_experts"),
        n_.ints({-1}), "used_list");
    const std::string trips =
        n_.op("Squeeze", {n_.op("Shape", {used}, "used_count"), n_.ints({0})}, "trips");
    const std::string zeros =
        n_.op("Expand", {n_.f(0.0f), n_.op("Shape", {x}, "x_shape")}, "moe_zero");
    // Every value the body reads from outside is made here, not in the body: each expert
    // stack's repacked MatMulNBits operands (--weights nbits, a format that maps) or its bytes.
    auto nbits_experts = [&](const std::string &w) -> std::optional<NbitsOperands> {
        const gguf::TensorInfo *t = model_.find_tensor(w);
        if (!nbits_ || !t || !traits(t->type).quantized) return std::nullopt;
        return nbits_operands(*t);
    };
    for (const char *w : {"ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight",
                          "ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias"}) {
        const gguf::TensorInfo *t = model_.find_tensor(name(w));
        if (!t) continue;
        const std::optional<NbitsOperands> o = nbits_experts(name(w));
        if (nbits_)
            ++forms[fmt::format("{} -> {} (experts)", type_name(t->type),
                                o ? (o->form.offsets ? "MatMulNBits + offsets" : "MatMulNBits")
                                : traits(t->type).quantized ? "DequantizePacked"
                                                            : "plain")];
        if (!o) expert_stack(name(w));
    }

    // The body: one expert e = used[i], its tokens' rows of x, its FFN, scattered back weighted.
    onnx::GraphProto body;
    body.set_name(fmt::format("blk.{}.experts", il));
    const std::string iter = n_.g().name(fmt::format("{}/i", n_.scope));
    const std::string cond_in = n_.g().name(fmt::format("{}/cond", n_.scope));
    const std::string acc_in = n_.g().name(fmt::format("{}/acc", n_.scope));
    add_value(*body.mutable_input(), iter, DataType::int64, {});
    add_value(*body.mutable_input(), cond_in, DataType::bool_, {});
    add_value(*body.mutable_input(), acc_in, DataType::float32, {std::string("tokens"), h_.n_embd});
    n_.g().subgraph = &body;
    const std::string e = n_.op("Gather", {used, iter}, "e");
    const std::string hit = n_.op("Equal", {chosen, e}, "hit");  // [N, k]
    const std::string w_tok =
        n_.op("ReduceSum", {n_.op("Where", {hit, weights, n_.f(0.0f)}, "w_hit"), n_.ints({-1})},
              "w_token");  // [N]: each token chooses e at most once
    set_attribute(*n_.last, "keepdims", int64_t{0});
    const std::string any = n_.op("Cast", {hit}, "hit_count");
    set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    std::string tokens = n_.op("ReduceSum", {any, n_.ints({-1})}, "hits");
    set_attribute(*n_.last, "keepdims", int64_t{0});
    tokens =
        n_.reshape(n_.op("NonZero", {n_.op("Greater", {tokens, n_.f(0.0f)}, "routed")}, "rows"),
                   n_.ints({-1}), "row_list");  // [n_e]
    const std::string xe = n_.op("Gather", {x, tokens}, "x_rows");
    auto project_e = [&](const std::string &in, std::string_view what, std::string_view tag) {
        const std::string w = name(fmt::format("{}.weight", what));
        std::string y;
        if (const std::optional<NbitsOperands> o = nbits_experts(w)) {
            y = n_.g().name(fmt::format("{}/{}", n_.scope, tag));
            const std::string b = n_.op("Gather", {o->b, e}, fmt::format("{}_b", tag));
            const std::string sc = n_.op("Gather", {o->scales, e}, fmt::format("{}_scales", tag));
            onnx::NodeProto &node = n_.g().node(n_.scope, "MatMulNBits", {in, b, sc}, {y});
            node.set_domain("com.microsoft");
            set_attribute(node, "K", o->k);
            set_attribute(node, "N", o->n);
            set_attribute(node, "bits", int64_t(o->form.bits));
            set_attribute(node, "block_size", int64_t(o->form.block));
            if (accuracy_level_) set_attribute(node, "accuracy_level", int64_t(accuracy_level_));
            if (o->form.offsets)
                y = n_.add(y,
                           n_.op("MatMul",
                                 {block_sums(in, o->form.block),
                                  n_.op("Gather", {o->offsets, e}, fmt::format("{}_offsets", tag))},
                                 fmt::format("{}_min", tag)),
                           fmt::format("{}_nbits", tag));
        } else {
            y = n_.linear(in, expert_matrix(w, e), "", tag);
        }
        if (const std::string b = expert_stack(name(fmt::format("{}.bias", what))); !b.empty())
            y = n_.add(y, n_.op("Gather", {b, e}, fmt::format("{}_bias", tag)),
                       fmt::format("{}_biased", tag));
        return y;
    };
    const std::string up = project_e(xe, "ffn_up_exps", "up");
    std::string act;
    if (!model_.find_tensor(name("ffn_gate_exps.weight"))) {  // llama without gates: silu(up)
        act = activation(up);
    } else if (row_.expert_act == ExpertAct::silu) {
        act = n_.mul(activation(project_e(xe, "ffn_gate_exps", "gate")), up, "gated");
    } else {  // ggml_swiglu_oai, alpha 1.702, limit 7 (llm_graph_context::build_moe_ffn)
        const std::string gate = project_e(xe, "ffn_gate_exps", "gate");
        const std::string g = n_.op("Min", {gate, n_.f(7.0f)}, "gate_clamped");
        const std::string u = n_.op(
            "Neg",
            {n_.op("Min",
                   {n_.op("Neg", {n_.op("Min", {up, n_.f(7.0f)}, "up_hi")}, "up_n"), n_.f(7.0f)},
                   "up_lo")},
            "up_clamped");  // max(min(up, 7), -7) as -min(-min(up, 7), 7)
        const std::string den =
            n_.add(n_.op("Exp", {n_.mul(g, -1.702f, "glu_a")}, "glu_e"), n_.f(1.0f), "glu_d");
        act = n_.mul(n_.op("Div", {g, den}, "glu"), n_.add(u, n_.f(1.0f), "up_one"), "swiglu");
    }
    std::string y = project_e(act, "ffn_down_exps", "down");
    y = n_.mul(y, n_.unsqueeze(n_.op("Gather", {w_tok, tokens}, "w_rows"), {1}), "weighted");
    const std::string acc_out = n_.op("ScatterND", {acc_in, n_.unsqueeze(tokens, {1}), y}, "acc");
    set_attribute(*n_.last, "reduction", std::string("add"));
    const std::string cond_out = n_.op("Identity", {cond_in}, "cond_out");
    n_.g().subgraph = nullptr;
    add_value(*body.mutable_output(), cond_out, DataType::bool_, {});
    add_value(*body.mutable_output(), acc_out, DataType::float32,
              {std::string("tokens"), h_.n_embd});

    std::string out = n_.op("Loop", {trips, "", zeros}, "moe_out");
    onnx::AttributeProto &a = *n_.last->add_attribute();
    a.set_name("body");
    a.set_type(onnx::AttributeProto::GRAPH);
    *a.mutable_g() = std::move(body);

    if (row_.shared_expert) {  // + shared expert · sigmoid(x · gate), as silu(g) / g
        // ffn_gate_inp_shexp is a vector [n_embd]: one logit per token
        const std::string g = n_.unsqueeze(
            n_.op("MatMul", {x, layer_weight(il, "ffn_gate_inp_shexp.weight")}, "shexp_logit"), {1},
            "shexp_gate_in");
        const std::string gate = n_.op("Div", {activation(g), g}, "shexp_gate");
        const std::string shared = gated_ffn(x, il, "ffn_gate_shexp.weight", "ffn_up_shexp.weight",
                                             "ffn_down_shexp.weight", "shexp");
        out = n_.add(out, n_.mul(shared, gate, "shexp_out"), "moe_shexp");
    }
    return out;
}

std::string DecoderBuilder::layer(int64_t il, const std::string &x) {
    n_.scope = fmt::format("blk.{}", il);
    auto pre = [&](const std::string &in, const char *norm) {
        return row_.pre_norms ? rms_norm(in, layer_weight(il, norm)) : in;
    };
    auto post = [&](std::string out, const char *norm) {
        if (row_.post_norms) out = rms_norm(out, layer_weight(il, norm));
        if (h_.residual_scale != 0.0f) out = n_.mul(out, h_.residual_scale, "residual_scaled");
        return out;
    };
    const std::string a =
        post(attention(il, pre(x, "attn_norm.weight")), "post_attention_norm.weight");
    const std::string x1 = n_.add(a, x, "attn_residual");
    const std::string f =
        post(ffn(il, pre(x1, std::string(row_.ffn_norm).c_str())), "post_ffw_norm.weight");
    return n_.add(f, x1, "ffn_residual");
}

// src/models/bert.cpp's layer: attention, + input, LayerNorm (again with attn_norm_2), FFN,
// + its input, LayerNorm.
std::string DecoderBuilder::bert_layer(int64_t il, const std::string &x) {
    n_.scope = fmt::format("blk.{}", il);
    auto name = [il](std::string_view what) { return fmt::format("blk.{}.{}", il, what); };
    std::string cur =
        layer_norm(n_.add(attention(il, x), x, "attn_residual"), name("attn_output_norm"));
    if (model_.find_tensor(name("attn_norm_2.weight")))
        cur = layer_norm(n_.add(cur, x, "attn_residual_2"), name("attn_norm_2"));
    return layer_norm(n_.add(ffn(il, cur), cur, "ffn_residual"), name("layer_output_norm"));
}

std::string DecoderBuilder::dense(const std::string &x) {
    if (!model_.find_tensor("dense_2.weight")) return x;
    return project(project(x, "dense_2.weight", "dense_2.bias", "dense_2"), "dense_3.weight",
                   "dense_3.bias", "dense_3");
}

std::string DecoderBuilder::pool(const std::string &x3) {
    n_.scope = "pooling";
    const std::string mask = n_.op("Cast", {"attention_mask"}, "mask_f");
    set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    const std::string count = n_.op("ReduceSum", {mask, n_.ints({1})}, "tokens");  // [B, 1]
    // Each token's weight [B, S]: 1/n for the mean (inp_mean), 1 for the chosen one (inp_cls).
    std::string w;
    if (h_.pooling == Pooling::mean) {
        w = n_.op("Div", {mask, count}, "mean_weights");
    } else {
        std::string pos = n_.op("Cast", {positions_}, "pos_f");
        set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
        const std::string want =
            h_.pooling == Pooling::cls ? n_.f(0.0f) : n_.sub(count, n_.f(1.0f), "last_pos");
        const std::string real = n_.op("Greater", {mask, n_.f(0.0f)}, "real");
        w = n_.op("Cast", {n_.op("And", {n_.op("Equal", {pos, want}, "at"), real}, "chosen")},
                  "chosen_weights");
        set_attribute(*n_.last, "to", int64_t(onnx_number(DataType::float32)));
    }
    const std::string pooled =
        n_.op("MatMul", {n_.unsqueeze(w, {1}, "weights3"), x3}, "pooled3");  // [B, 1, E]
    return n_.reshape(pooled, n_.ints({-1, h_.n_embd}), "pooled");
}

std::vector<int> DecoderBuilder::build() {
    return encoder_ ? build_encoder() : build_decoder();
}

std::vector<int> DecoderBuilder::build_encoder() {
    onnx::GraphProto &graph = n_.g().plan().graph;
    const std::string batch = "batch_size", seq = "sequence_length";
    const bool types = row_.token_types && model_.find_tensor("token_types.weight");
    add_value(*graph.mutable_input(), "input_ids", DataType::int64, {batch, seq});
    add_value(*graph.mutable_input(), "attention_mask", DataType::int64, {batch, seq});
    if (types) add_value(*graph.mutable_input(), "token_type_ids", DataType::int64, {batch, seq});
    add_value(*graph.mutable_output(), "last_hidden_state", DataType::float32,
              {batch, seq, h_.n_embd});
    if (h_.pooling != Pooling::none)
        add_value(*graph.mutable_output(), "sentence_embedding", DataType::float32,
                  {batch, h_.n_embd});

    n_.scope = "embed";
    batch_seq_ = n_.op("Shape", {"input_ids"}, "batch_seq");
    encoder_positions();
    n_.scope = "embed";
    std::string x = n_.reshape(embedding("input_ids"), n_.ints({-1, h_.n_embd}), "hidden");
    // + the token type's row (llama.cpp adds row 0: token_type_ids of zeros), + the position's
    if (types)
        x = n_.add(x,
                   n_.op("Gather",
                         {weight("token_types.weight"),
                          n_.reshape("token_type_ids", n_.ints({-1}), "type_ids")},
                         "type_rows"),
                   "typed");
    if (row_.positions == Positions::absolute)
        x = n_.add(x,
                   n_.op("Gather",
                         {weight("position_embd.weight"),
                          n_.reshape(positions_, n_.ints({-1}), "pos_ids")},
                         "pos_rows"),
                   "positioned");
    if (h_.embed_scale != 0.0f) x = n_.mul(x, h_.embed_scale, "scaled");
    if (row_.bert_layout) x = layer_norm(x, "token_embd_norm");
    positions();
    encoder_masks();
    for (int64_t il = 0; il < h_.n_layer; ++il)
        x = row_.bert_layout ? bert_layer(il, x) : layer(il, x);

    n_.scope = "head";
    if (!row_.bert_layout) x = rms_norm(x, weight("output_norm.weight"));
    const std::string shape3 = n_.concat({batch_seq_, n_.ints({h_.n_embd})}, 0, "hidden_shape");
    // llama.cpp's per-token embeddings are the dense modules' outputs too (t_embd_pooled).
    n_.op_named("Reshape", {dense(x), shape3}, "last_hidden_state");
    if (h_.pooling != Pooling::none) {
        const std::string pooled = pool(n_.reshape(x, shape3, "hidden3"));
        n_.scope = "head";
        n_.op_named("Identity", {dense(pooled)}, "sentence_embedding");
    }
    return weight_nodes_;
}

std::vector<int> DecoderBuilder::build_decoder() {
    onnx::GraphProto &graph = n_.g().plan().graph;
    const std::string batch = "batch_size", seq = "sequence_length", past = "past_sequence_length",
                      total = "total_sequence_length";
    add_value(*graph.mutable_input(), "input_ids", DataType::int64, {batch, seq});
    add_value(*graph.mutable_input(), "attention_mask", DataType::int64, {batch, total});
    add_value(*graph.mutable_input(), "position_ids", DataType::int64, {batch, seq});
    for (int64_t il = 0; il < h_.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            add_value(*graph.mutable_input(), fmt::format("past_key_values.{}.{}", il, kv),
                      DataType::float32, {batch, h_.n_head_kv, past, h_.head_dim});
    add_value(*graph.mutable_output(), "logits", DataType::float32, {batch, seq, h_.n_vocab});
    for (int64_t il = 0; il < h_.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            add_value(*graph.mutable_output(), fmt::format("present.{}.{}", il, kv),
                      DataType::float32, {batch, h_.n_head_kv, total, h_.head_dim});

    n_.scope = "embed";
    batch_seq_ = n_.op("Shape", {"input_ids"}, "batch_seq");
    std::string x = n_.reshape(embedding("input_ids"), n_.ints({-1, h_.n_embd}), "hidden");
    if (h_.embed_scale != 0.0f) x = n_.mul(x, h_.embed_scale, "scaled");
    positions();
    masks();
    for (int64_t il = 0; il < h_.n_layer; ++il) x = layer(il, x);

    n_.scope = "head";
    x = rms_norm(x, weight("output_norm.weight"));
    std::string logits =
        project(x, h_.tied ? "token_embd.weight" : "output.weight", "output.bias", "logits2");
    if (h_.logit_scale != 0.0f) logits = n_.mul(logits, 1.0f / h_.logit_scale, "logits_scaled");
    if (h_.final_softcap != 0.0f) logits = softcap(logits, h_.final_softcap);
    n_.op_named("Reshape",
                {logits, n_.concat({batch_seq_, n_.ints({h_.n_vocab})}, 0, "logits_shape")},
                "logits");
    return weight_nodes_;
}

}  // namespace

void rope_tables(const Hparams &h, const RopeParams &rp, std::span<const float> factors,
                 int64_t first, int64_t n_positions, float *cos_out, float *sin_out) {
    // ggml_rope_cache_init / rope_yarn / ggml_rope_yarn_corr_dims, in float as ggml does.
    const int64_t n_dims = h.n_rot, half = n_dims / 2;
    const float freq_base = rp.freq_base, freq_scale = rp.freq_scale;
    const float ext_factor = rp.ext_factor, attn_factor = rp.attn_factor;
    const float theta_scale = powf(freq_base, -2.0f / float(n_dims));
    auto corr_dim = [&](float n_rot) {
        return float(n_dims) * logf(float(h.n_ctx_orig) / (n_rot * 2 * float(M_PI))) /
               (2 * logf(freq_base));
    };
    const float low = std::max(0.0f, floorf(corr_dim(h.beta_fast)));
    const float high = std::min(float(n_dims - 1), ceilf(corr_dim(h.beta_slow)));
    for (int64_t p = 0; p < n_positions; ++p) {
        float theta = float(first + p);
        for (int64_t i = 0; i < half; ++i) {
            const float ff = factors.empty() ? 1.0f : factors[i];
            const float theta_extrap = theta / ff;
            const float theta_interp = freq_scale * theta_extrap;
            float t = theta_interp, mscale = attn_factor;
            if (ext_factor != 0.0f) {
                const float y = float(2 * i / 2 - low) / std::max(0.001f, high - low);
                const float ramp = (1 - std::min(1.0f, std::max(0.0f, y))) * ext_factor;
                t = theta_interp * (1 - ramp) + theta_extrap * ramp;
                mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
            }
            cos_out[p * half + i] = cosf(t) * mscale;
            sin_out[p * half + i] = sinf(t) * mscale;
            theta *= theta_scale;
        }
    }
}

std::vector<int> emit_decoder(GraphBuilder &g, const gguf::Model &model, const Hparams &h,
                              const Options &options, int opset,
                              std::map<std::string, size_t> *forms) {
    DecoderBuilder b(g, model, h, *find_arch(h.arch), options, opset);
    std::vector<int> nodes = b.build();
    if (forms) *forms = b.forms;
    return nodes;
}

}  // namespace gguftool::decoder::detail
