// fuse_nodes: finds the patterns of fuse.hpp in execution order and puts fused nodes in their
// place, in a model that shares everything else with the original.
#include "fuse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>
#include <unordered_map>

#include "gguftool/dims.hpp"
#include "gguftool/opset29.hpp"

namespace gguftool::runtime::detail {
namespace {

using Impl = Model::Impl;
using Node = Impl::Node;

bool is_op(const Node *n, std::string_view op_type) {
    return n && n->proto->op_type() == op_type &&
           (n->proto->domain().empty() || n->proto->domain() == "ai.onnx");
}

// An INT attribute: its value, `absent` when the node does not have it, nullopt when it has
// another type (the node itself reports that when it runs, unfused).
std::optional<int64_t> int_attribute(const Node &n, std::string_view name, int64_t absent) {
    const onnx::AttributeProto *a = find_attribute(*n.proto, name);
    if (!a) return absent;
    if (a->type() != onnx::AttributeProto::INT) return std::nullopt;
    return a->i();
}

// Where a fused weight comes from: its DequantizePacked, the Cast to float after it (or none) and
// the Gather that picks its x out of a stack (or none).
struct Source {
    const Node *dequantize = nullptr;
    const Node *cast = nullptr;
    const Node *gather = nullptr;
    opset29::DequantizePacked op;
};

class Fuser {
public:
    Fuser(std::shared_ptr<const Impl> m, bool int8, bool gemms_only)
        : m_(*m), int8_(int8), gemms_only_(gemms_only), source_(std::move(m)) {
        for (const Node &n : m_.order)
            for (const std::string &o : n.proto->output()) producer_[o] = &n;
        for (const auto &[name, t] : m_.initializers) initializers_[name] = &t;
        for (const ValueInfo &v : m_.inputs) inputs_.insert(v.name);
        for (const ValueInfo &v : m_.outputs) outputs_.insert(v.name);
    }

    // The fused model, or nullopt when nothing fuses.
    std::optional<Model> run();

private:
    const Node *producer(const std::string &value) const {
        const auto it = producer_.find(value);
        return it == producer_.end() ? nullptr : it->second;
    }
    std::optional<Source> source(const std::string &value, bool gathered) const;
    void copy_weight_attributes(const Source &s, onnx::NodeProto &f) const;
    void add(const Node &replaced, std::initializer_list<const Node *> absorbed,
             onnx::NodeProto proto, size_t row);
    std::optional<std::vector<int64_t>> unsqueeze_axes(const Node &n) const;
    bool fuse_kv_matmul(const Node &n);

    const Impl &m_;
    bool int8_;
    bool gemms_only_;
    std::shared_ptr<const Impl> source_;
    std::unordered_map<std::string, const Node *> producer_;
    std::unordered_map<std::string, const Tensor *> initializers_;
    std::set<std::string> inputs_, outputs_;                     // the graph's
    std::unordered_map<std::string, onnx::NodeProto *> caches_;  // KvConcat outputs, nodes
    std::shared_ptr<Impl> out_;
    std::set<const onnx::NodeProto *> dropped_;  // the nodes a fused node stands in for
};

// The weight `value` is, when a DequantizePacked makes it (then Cast to float, or float itself)
// with valid attributes; `gathered`: its x may be a Gather's output.
std::optional<Source> Fuser::source(const std::string &value, bool gathered) const {
    Source s;
    const Node *p = producer(value);
    if (is_op(p, "Cast")) {
        if (int_attribute(*p, "to", 0) != int64_t(onnx_number(DataType::float32))) return {};
        s.cast = p;
        p = producer(p->proto->input(0));
    }
    if (!is_op(p, "DequantizePacked") || p->proto->input_size() != 1) return {};
    const onnx::AttributeProto *format = find_attribute(*p->proto, "format");
    const onnx::AttributeProto *shape = find_attribute(*p->proto, "shape");
    if (!format || format->type() != onnx::AttributeProto::STRING || !shape ||
        shape->type() != onnx::AttributeProto::INTS)
        return {};
    const std::optional<int64_t> output_dtype = int_attribute(*p, "output_dtype", 1);
    if (!output_dtype) return {};
    try {
        const std::vector<int64_t> dims(shape->ints().begin(), shape->ints().end());
        s.op = opset29::check_dequantize_packed(format->s(), dims, *output_dtype);
    } catch (const Error &) {
        return {};  // the node reports it when it runs, unfused
    }
    s.dequantize = p;
    const Node *g = producer(p->proto->input(0));
    if (gathered && is_op(g, "Gather") && g->proto->input_size() == 2 &&
        int_attribute(*g, "axis", 0) == 0)
        s.gather = g;
    return s;
}

void Fuser::copy_weight_attributes(const Source &s, onnx::NodeProto &f) const {
    for (const onnx::AttributeProto &a : s.dequantize->proto->attribute()) *f.add_attribute() = a;
    if (s.gather) {
        onnx::AttributeProto &a = *f.add_attribute();
        a.set_name("negative_indices");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(s.gather->version >= 11);
    }
    onnx::AttributeProto &a = *f.add_attribute();
    a.set_name("int8");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(int8_);
}

// Appends the fused node (`row` of fused_ops()) in place of `replaced`, standing in for `absorbed`
// too (dropped once no other node reads them), labelled after them.
void Fuser::add(const Node &replaced, std::initializer_list<const Node *> absorbed,
                onnx::NodeProto proto, size_t row) {
    const onnx::NodeProto &r = *replaced.proto;
    proto.set_name(r.name());
    proto.set_domain(std::string(kFusedDomain));
    for (const std::string &o : r.output()) proto.add_output(o);
    Node node;
    node.proto = &out_->rewritten.emplace_back(std::move(proto));
    node.op = &fused_ops()[row];
    node.version = node.op->since;
    node.name = replaced.name;
    node.label = replaced.label;
    std::vector<std::string> with;
    for (const Node *n : absorbed)
        if (n) {
            dropped_.insert(n->proto);
            with.push_back(n->label);
        }
    if (!with.empty()) node.label += fmt::format(" fused with {}", fmt::join(with, ", "));
    out_->order.push_back(std::move(node));
}

// The values of Unsqueeze's axes (its attribute before opset 13, an initializer after).
std::optional<std::vector<int64_t>> Fuser::unsqueeze_axes(const Node &n) const {
    if (const onnx::AttributeProto *a = find_attribute(*n.proto, "axes"))
        return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    if (n.proto->input_size() != 2) return std::nullopt;
    const auto it = initializers_.find(n.proto->input(1));
    if (it == initializers_.end() || it->second->dtype() != DataType::int64) return std::nullopt;
    return it->second->to_vector<int64_t>();
}

// Attention's reads of a KV cache: MatMul(A, Unsqueeze(X, [2])) or MatMul(A,
// Unsqueeze(Transpose(X, [0, 1, 3, 2]), [2])), X a KvConcat's output.
bool Fuser::fuse_kv_matmul(const Node &n) {
    const onnx::NodeProto &p = *n.proto;
    if (!is_op(&n, "MatMul") || p.input_size() != 2) return false;
    const Node *u = producer(p.input(1));
    if (!is_op(u, "Unsqueeze") || unsqueeze_axes(*u) != std::vector<int64_t>{2}) return false;
    std::string x = u->proto->input(0);
    const Node *t = producer(x);
    if (is_op(t, "Transpose")) {
        const onnx::AttributeProto *perm = find_attribute(*t->proto, "perm");
        if (!perm || std::vector<int64_t>(perm->ints().begin(), perm->ints().end()) !=
                         std::vector<int64_t>{0, 1, 3, 2})
            return false;
        x = t->proto->input(0);
    } else {
        t = nullptr;
    }
    const auto cache = caches_.find(x);
    if (cache == caches_.end()) return false;
    // Keys are read transposed: the cache keeps them so (if no other reader wants them plain).
    onnx::NodeProto &concat = *cache->second;
    const onnx::AttributeProto *kept = find_attribute(concat, "transposed");
    if (kept && kept->i() != (t != nullptr)) return false;
    if (!kept) {
        onnx::AttributeProto &a = *concat.add_attribute();
        a.set_name("transposed");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(t != nullptr);
    }
    onnx::NodeProto f;
    f.set_op_type("KvMatMul");
    f.add_input(p.input(0));
    f.add_input(x);
    onnx::AttributeProto &a = *f.add_attribute();
    a.set_name("transpose");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(t != nullptr);
    add(n, {u, t}, std::move(f), 3);
    return true;
}

std::optional<Model> Fuser::run() {
    out_ = std::make_shared<Impl>();
    bool fused = false;
    for (const Node &n : m_.order) {
        const onnx::NodeProto &p = *n.proto;
        if (is_op(&n, "Gemm") && p.input_size() >= 2 && int_attribute(n, "transA", 0) == 0 &&
            int_attribute(n, "transB", 0) == 1) {
            const std::optional<Source> s = source(p.input(1), true);
            if (s && s->op.shape.size() == 2 &&
                (s->cast || s->op.output_dtype == DataType::float32)) {
                onnx::NodeProto f;
                f.set_op_type("DequantizePackedGemm");
                f.add_input(p.input(0));
                f.add_input(s->gather ? s->gather->proto->input(0)
                                      : s->dequantize->proto->input(0));
                f.add_input(p.input_size() > 2 ? p.input(2) : "");
                if (s->gather) f.add_input(s->gather->proto->input(1));
                copy_weight_attributes(*s, f);
                for (const onnx::AttributeProto &a : p.attribute()) *f.add_attribute() = a;
                add(n, {s->dequantize, s->cast, s->gather}, std::move(f), 0);
                fused = true;
                continue;
            }
        }
        if (gemms_only_) {
            out_->order.push_back(n);
            continue;
        }
        if (is_op(&n, "Gather") && p.input_size() == 2) {
            const std::optional<Source> s = source(p.input(0), false);
            const std::optional<int64_t> axis = int_attribute(n, "axis", 0);
            if (s && axis && (*axis == 0 || *axis == -int64_t(s->op.shape.size()))) {
                onnx::NodeProto f;
                f.set_op_type("DequantizePackedGather");
                f.add_input(s->dequantize->proto->input(0));
                f.add_input(p.input(1));
                copy_weight_attributes(*s, f);
                {
                    onnx::AttributeProto &a = *f.add_attribute();
                    a.set_name("negative_indices");
                    a.set_type(onnx::AttributeProto::INT);
                    a.set_i(n.version >= 11);
                }
                if (s->cast) {
                    onnx::AttributeProto &a = *f.add_attribute();
                    a.set_name("to");
                    a.set_type(onnx::AttributeProto::INT);
                    a.set_i(onnx_number(DataType::float32));
                }
                add(n, {s->dequantize, s->cast, s->gather}, std::move(f), 1);
                fused = true;
                continue;
            }
        }
        // A KV cache: Concat(past, new) from a graph input to a graph output.
        if (is_op(&n, "Concat") && p.input_size() == 2 && n.version >= 11 &&
            inputs_.count(p.input(0)) && outputs_.count(p.output(0))) {
            onnx::NodeProto f;
            f.set_op_type("KvConcat");
            f.add_input(p.input(0));
            f.add_input(p.input(1));
            for (const onnx::AttributeProto &a : p.attribute()) *f.add_attribute() = a;
            add(n, {}, std::move(f), 2);
            caches_[p.output(0)] = &out_->rewritten.back();
            fused = true;
            continue;
        }
        if (fuse_kv_matmul(n)) {
            fused = true;
            continue;
        }
        out_->order.push_back(n);
    }
    // Loop bodies.
    for (Node &n : out_->order)
        for (Model &sub : n.subgraphs) {
            Model body = fuse_nodes(sub, int8_, gemms_only_);
            if (&body.impl() != &sub.impl()) {
                sub = std::move(body);
                fused = true;
            }
        }
    if (!fused) return std::nullopt;

    // Drop what the fused nodes left unread: their DequantizePacked, Cast and Gather, when no
    // other node reads them and they are no graph output.
    for (bool again = true; again;) {
        again = false;
        std::unordered_map<std::string, size_t> reads;
        for (const Node &n : out_->order)
            for (const std::string &in : n.proto->input()) ++reads[in];
        for (const ValueInfo &o : m_.outputs) ++reads[o.name];
        for (auto it = out_->order.begin(); it != out_->order.end();) {
            const bool candidate = dropped_.count(it->proto) != 0;
            const bool unread = std::none_of(it->proto->output().begin(), it->proto->output().end(),
                                             [&](const std::string &o) { return reads.count(o); });
            if (!candidate || !unread) {
                ++it;
                continue;
            }
            it = out_->order.erase(it);
            again = true;
        }
    }
    Impl &o = *out_;
    o.name = m_.name;
    o.base_dir = m_.base_dir;
    o.proto = m_.proto;
    o.opset = m_.opset;
    o.contrib_opset = m_.contrib_opset;
    o.inputs = m_.inputs;
    o.overridable = m_.overridable;
    o.outputs = m_.outputs;
    o.initializers = m_.initializers;
    o.source = source_;
    return Impl::wrap(std::move(out_));
}

}  // namespace

Model fuse_nodes(const Model &model, bool int8, bool gemms_only) {
    Fuser fuser(Model::Impl::shared(model), int8, gemms_only);
    std::optional<Model> fused = fuser.run();
    return fused ? *fused : model;
}

}  // namespace gguftool::runtime::detail
