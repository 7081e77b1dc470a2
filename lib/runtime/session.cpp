// Running a model: fit it to the backend (placing what it cannot run on a fallback CPU backend)
// and upload its initializers once (construction); then per run bind inputs, execute nodes in
// order each on its backend, copy values between backends where a node's input lives on the
// other, hand out graph outputs, free intermediates after their last use.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <unordered_map>

#include "backend_fit.hpp"
#include "fuse.hpp"
#include "model_impl.hpp"

namespace gguftool::runtime {
namespace {

using ModelImpl = Model::Impl;

// The backends of a session: its own, and the CPU backend its fallback nodes run on.
constexpr size_t kMaxBackends = 2;
// A value on each backend that has it (a null buffer where one has not).
using Copies = std::array<DeviceTensor, kMaxBackends>;
// Per graph input and initializer: the backends (bit k: backends[k]) whose nodes read it.
using UsedOn = std::unordered_map<std::string, unsigned>;

Copies on_one(size_t k, DeviceTensor t) {
    Copies c;
    c[k] = std::move(t);
    return c;
}

void check_declared(const ValueInfo &info, DataType dtype, const Shape &shape,
                    const std::string &where, const char *kind) {
    if (info.dtype != DataType::undefined && info.dtype != dtype)
        throw Error(where, std::nullopt,
                    fmt::format("graph {} \"{}\" is {} but the graph declares {}", kind, info.name,
                                dtype_name(dtype), dtype_name(info.dtype)));
    if (!info.has_shape) return;
    bool ok = info.dims.size() == shape.size();
    for (size_t i = 0; ok && i < info.dims.size(); ++i)
        ok = !info.dims[i] || *info.dims[i] == shape[i];
    if (!ok) {
        std::vector<std::string> dims;
        for (const auto &d : info.dims) dims.push_back(d ? std::to_string(*d) : "?");
        throw Error(where, std::nullopt,
                    fmt::format("graph {} \"{}\" has shape {} but the graph declares [{}]", kind,
                                info.name, shape_string(shape), fmt::join(dims, ", ")));
    }
}
void check_declared(const ValueInfo &info, const Tensor &t, const std::string &where,
                    const char *kind) {
    check_declared(info, t.dtype(), t.shape(), where, kind);
}

// The values of one run on the backends: the live tensors (on each backend that has them), the
// uses each has left (consuming nodes, plus one per listing as a graph output) and the graph
// outputs not handed out yet. A value is handed out as soon as it exists and freed, with its
// copies, after its last use.
class RunValues {
public:
    // `kept`: graph outputs kept on their backend (in `captured`) instead of handed out.
    RunValues(const ModelImpl &m, std::span<const std::unique_ptr<Backend>> backends,
              const UsedOn &used_on, const OutputCallback &on_output,
              const std::set<std::string> &kept = {},
              std::map<std::string, Copies> *captured = nullptr)
        : m_(m),
          backends_(backends),
          used_on_(used_on),
          on_output_(on_output),
          kept_(kept),
          captured_(captured) {
        for (const ModelImpl::Node &n : m.order)
            for (const std::string &in : n.proto->input())
                if (!in.empty()) ++uses_[in];
        for (const ValueInfo &o : m.outputs) ++pending_outputs_[o.name];
    }

    // Binds the inputs: every declared input must be fed (by `inputs`, or by `bound`: values on
    // the backends already); initializers (`resident`) can be overridden.
    void bind(const Inputs &inputs, const std::vector<std::pair<std::string, Copies>> &resident,
              const std::map<std::string, Copies> &bound = {}) {
        const std::string &where = m_.name;
        for (const auto &[name, tensor] : inputs) {
            const ValueInfo *info = nullptr;
            for (const auto *list : {&m_.inputs, &m_.overridable})
                for (const ValueInfo &v : *list)
                    if (v.name == name) info = &v;
            if (!info) {
                std::vector<std::string> names;
                for (const ValueInfo &v : m_.inputs) names.push_back('"' + v.name + '"');
                throw Error(where, std::nullopt,
                            fmt::format("the graph has no input \"{}\" (its inputs: {})", name,
                                        names.empty() ? "none"
                                                      : fmt::format("{}", fmt::join(names, ", "))));
            }
            if (!tensor.defined())
                throw Error(where, std::nullopt,
                            fmt::format("graph input \"{}\" is undefined", name));
            check_declared(*info, tensor, where, "input");
            Copies &c = values_[name];
            for (size_t k : backends_for(name)) c[k] = backends_[k]->upload(tensor);
        }
        for (const auto &[name, c] : bound) {
            if (inputs.count(name)) continue;  // given again: that one counts
            const DeviceTensor *t = any(c);
            for (const ValueInfo &v : m_.inputs)
                if (v.name == name) check_declared(v, t->dtype, t->shape, where, "input");
            values_[name] = c;
        }
        for (const ValueInfo &v : m_.inputs)
            if (!inputs.count(v.name) && !bound.count(v.name))
                throw Error(where, std::nullopt,
                            fmt::format("graph input \"{}\" was not given", v.name));
        for (const auto &[name, t] : resident)
            if (!values_.count(name)) values_[name] = t;  // a fed input overrides it
        for (auto it = values_.begin(); it != values_.end();) {
            emit_if_output(it->first);
            it = dead(it->first) ? values_.erase(it) : std::next(it);
        }
    }

    // The backends an input or initializer is put on: those whose nodes read it, or the
    // session's own.
    std::vector<size_t> backends_for(const std::string &name) const {
        const auto it = used_on_.find(name);
        const unsigned mask = it == used_on_.end() || it->second == 0 ? 1u : it->second;
        std::vector<size_t> ks;
        for (size_t k = 0; k < backends_.size(); ++k)
            if (mask & (1u << k)) ks.push_back(k);
        return ks;
    }

    // A node's inputs on backend `k` (nullptr for an absent optional one), each copied there
    // first when it lives on the other backend only (kept for later readers on `k`), unless the
    // node reads shapes only (`shapes_only`: Shape); adds the bytes they hold to `bytes`.
    std::vector<const DeviceTensor *> inputs_of(const onnx::NodeProto &p, size_t k,
                                                bool shapes_only, uint64_t &bytes) {
        std::vector<const DeviceTensor *> in;
        for (const std::string &name : p.input()) {
            if (name.empty()) {
                in.push_back(nullptr);
                continue;
            }
            Copies &c = values_.at(name);
            if (!c[k].buffer && !shapes_only) c[k] = copied(c, k);
            const DeviceTensor &t = c[k].buffer ? c[k] : *any(c);
            in.push_back(&t);
            bytes += t.nbytes();
        }
        return in;
    }

    // Keeps a node's outputs (on backend `k`), hands out those that are graph outputs, and frees
    // what no node will use again.
    void store(const onnx::NodeProto &p, size_t k, std::vector<DeviceTensor> &outputs) {
        for (int i = 0; i < p.output_size(); ++i) {
            values_[p.output(i)] = on_one(k, std::move(outputs[size_t(i)]));
            emit_if_output(p.output(i));
        }
        for (const std::string &name : p.input()) {
            if (name.empty()) continue;
            --uses_[name];
            release_if_dead(name);
        }
        for (const std::string &name : p.output()) release_if_dead(name);
    }

private:
    // A copy that exists: the last backend's first (the fallback CPU's costs no transfer).
    const DeviceTensor *any(const Copies &c) const {
        for (size_t k = backends_.size(); k-- > 0;)
            if (c[k].buffer) return &c[k];
        throw Error("internal error: a value on no backend");
    }
    size_t index_of(const Copies &c, const DeviceTensor *t) const { return size_t(t - c.data()); }
    // The value of `c` on backend `k`: downloaded from where it is, uploaded there.
    DeviceTensor copied(const Copies &c, size_t k) {
        const DeviceTensor *from = any(c);
        return backends_[k]->upload(backends_[index_of(c, from)]->download(*from));
    }

    void emit_if_output(const std::string &name) {
        const auto it = pending_outputs_.find(name);
        if (it == pending_outputs_.end()) return;
        const Copies &c = values_.at(name);
        if (kept_.count(name)) {
            (*captured_)[name] = c;
            pending_outputs_.erase(it);
            return;
        }
        const DeviceTensor *t = any(c);
        const Tensor host = backends_[index_of(c, t)]->download(*t);
        for (const ValueInfo &o : m_.outputs)
            if (o.name == name) check_declared(o, host, m_.name, "output");
        for (size_t k = 0; k < it->second; ++k) on_output_(name, host);
        pending_outputs_.erase(it);
    }
    bool dead(const std::string &name) const {
        const auto u = uses_.find(name);
        return (u == uses_.end() || u->second == 0) && !pending_outputs_.count(name);
    }
    void release_if_dead(const std::string &name) {
        if (dead(name)) values_.erase(name);
    }

    const ModelImpl &m_;
    std::span<const std::unique_ptr<Backend>> backends_;
    const UsedOn &used_on_;
    const OutputCallback &on_output_;
    const std::set<std::string> &kept_;
    std::map<std::string, Copies> *captured_;
    std::unordered_map<std::string, size_t> uses_;
    std::unordered_map<std::string, size_t> pending_outputs_;
    std::unordered_map<std::string, Copies> values_;
};

}  // namespace

struct Session::Impl {
    Model model;  // as fitted to the backend (lowered where it asked)
    // [0] the session's backend; [1] the CPU backend, when some node falls back to it.
    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<uint8_t> on;  // per node of model's order: its backend; empty: all on [0]
    UsedOn used_on;           // empty with one backend
    std::vector<NodePlacement> placement;
    bool profile = false;
    std::vector<NodeProfile> profiles;
    std::vector<std::string> lowered_from;  // per node of model's order, or empty
    // Every initializer, uploaded once at construction (to each backend that reads it) and used
    // by every run.
    std::vector<std::pair<std::string, Copies>> resident;
    // What run_step carries: per graph output, its value on the backends.
    std::map<std::string, Copies> carried;

    // Runs the graph: `bound` inputs already on the backends, `kept` outputs put in `captured`.
    void execute(const Inputs &inputs, const OutputCallback &on_output,
                 const std::map<std::string, Copies> &bound, const std::set<std::string> &kept,
                 std::map<std::string, Copies> *captured);
    // Runs node `index` of the model's order on its backend (and records its profile).
    void run_node(size_t index, RunValues &values, detail::ExternalData &external);
};

void Session::Impl::run_node(size_t index, RunValues &values, detail::ExternalData &external) {
    const Model::Impl &m = model.impl();
    const ModelImpl::Node &node = m.order[index];
    const onnx::NodeProto &p = *node.proto;
    const size_t k = on.empty() ? 0 : on[index];
    Backend &backend = *backends[k];
    uint64_t bytes_read = 0;
    std::optional<detail::OpContext> context;
    try {
        context.emplace(*node.op, p, backend, external,
                        values.inputs_of(p, k, node.op->op_type == "Shape", bytes_read));
    } catch (const std::bad_alloc &) {
        throw Error(m.name, std::nullopt, fmt::format("{}: out of memory", node.label));
    } catch (const std::exception &e) {
        throw Error(m.name, std::nullopt,
                    fmt::format("{}: copying its inputs to the {} backend: {}", node.label,
                                backend.name(), e.what()));
    }
    detail::OpContext &ctx = *context;
    ctx.set_subgraphs(node.subgraphs, node.declared_inputs);
    const uint64_t calls_before = profile ? backend.device_calls() : 0;
    const auto start = std::chrono::steady_clock::now();
    try {
        node.op->run(ctx);
        for (size_t k = 0; k < ctx.outputs().size(); ++k)
            if (!ctx.outputs()[k].buffer) throw Error(fmt::format("output {} was not computed", k));
        // A device computes asynchronously: a node's time is until its work has finished.
        if (profile) backend.synchronize();
    } catch (const std::bad_alloc &) {
        throw Error(m.name, std::nullopt, fmt::format("{}: out of memory", node.label));
    } catch (const std::exception &e) {
        throw Error(m.name, std::nullopt, fmt::format("{}: {}", node.label, e.what()));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (profile) {
        uint64_t written = 0;
        for (const DeviceTensor &o : ctx.outputs()) written += o.nbytes();
        // Views move no data.
        if (node.op->view) bytes_read = written = 0;
        profiles.push_back({node.name, fmt::format("{}-{}", p.op_type(), node.version), seconds,
                            bytes_read, written, backend.device_calls() - calls_before,
                            backend.name(),
                            lowered_from.empty() ? std::string() : lowered_from[index]});
    }
    values.store(p, k, ctx.outputs());
}

Session::Session(Model model, const RunOptions &options)
    : Session(std::move(model),
              make_backend(options.backend,
                           BackendOptions{.threads = options.threads, .device = options.device}),
              options) {}

Session::Session(Model model, std::unique_ptr<Backend> backend, bool profile)
    : Session(std::move(model), std::move(backend), RunOptions{.profile = profile}) {}

Session::Session(Model model, std::unique_ptr<Backend> backend, const RunOptions &options)
    : impl_(std::make_unique<Impl>()) {
    // A backend other than the CPU has the CPU to fall back on.
    std::unique_ptr<Backend> cpu;
    if (options.fallback && backend->name() != "cpu") cpu = make_cpu_backend(options.threads);
    const bool fuse = options.weight_products != WeightProducts::unfused &&
                      backend->kernel("DequantizePackedGemm");
    const bool int8 = options.weight_products == WeightProducts::fused;
    // A backend with a fallback and its own DequantizePackedGemm kernel (the Ascend's, for some
    // formats) gets the weight products fused first, unlowered: each fused node runs where its
    // backend's rule says, the others (and every node it wants lowered) on the CPU. Kept only when
    // some fused node runs on the backend; otherwise the graph is fitted as it is.
    std::optional<detail::FittedModel> fused_fit;
    if (fuse && cpu) {
        Model fused = detail::fuse_nodes(model, int8, true);
        if (&fused.impl() != &model.impl()) {
            detail::FittedModel f = detail::fit_to_backend(fused, *backend, cpu.get(), false);
            const Model::Impl &m = f.model.impl();
            for (size_t i = 0; i < m.order.size() && !fused_fit; ++i)
                if (m.order[i].proto->domain() == detail::kFusedDomain &&
                    (f.on.empty() || f.on[i] == 0))
                    fused_fit = std::move(f);
        }
    }
    detail::FittedModel fitted =
        fused_fit ? std::move(*fused_fit)
                  : detail::fit_to_backend(std::move(model), *backend, cpu.get());
    // Otherwise weight products are fused where every node runs on a backend with the fused
    // kernels (the CPU's), nothing lowered.
    if (fuse && !fused_fit && fitted.on.empty() && fitted.lowered_from.empty())
        fitted.model = detail::fuse_nodes(fitted.model, int8);
    impl_->model = std::move(fitted.model);
    impl_->lowered_from = std::move(fitted.lowered_from);
    impl_->backends.push_back(std::move(backend));
    if (!fitted.on.empty()) {
        impl_->backends.push_back(std::move(cpu));
        impl_->on = std::move(fitted.on);
    }
    impl_->profile = options.profile;
    const Model::Impl &m = impl_->model.impl();
    impl_->placement.reserve(m.order.size());
    for (size_t i = 0; i < m.order.size(); ++i) {
        const size_t k = impl_->on.empty() ? 0 : impl_->on[i];
        impl_->placement.push_back({m.order[i].name, m.order[i].proto->op_type(),
                                    impl_->backends[k]->name(),
                                    k == 0 ? std::string() : fitted.reasons[i]});
        if (impl_->on.empty()) continue;
        for (const std::string &in : m.order[i].proto->input())
            if (!in.empty()) impl_->used_on[in] |= 1u << k;
    }
    impl_->resident.reserve(m.initializers.size());
    for (const auto &[name, tensor] : m.initializers) {
        const auto it = impl_->used_on.find(name);
        const unsigned mask = it == impl_->used_on.end() || it->second == 0 ? 1u : it->second;
        Copies copies;
        for (size_t k = 0; k < impl_->backends.size(); ++k) {
            if (!(mask & (1u << k))) continue;
            try {
                copies[k] = impl_->backends[k]->upload(tensor);
            } catch (const std::bad_alloc &) {
                throw Error(m.name, std::nullopt,
                            fmt::format("initializer \"{}\": out of memory", name));
            } catch (const std::exception &e) {
                throw Error(m.name, std::nullopt,
                            fmt::format("initializer \"{}\": {}", name, e.what()));
            }
        }
        impl_->resident.emplace_back(name, std::move(copies));
    }
}

Session::~Session() = default;
Session::Session(Session &&) noexcept = default;

const std::vector<NodeProfile> &Session::profile() const {
    return impl_->profiles;
}
const Model &Session::model() const {
    return impl_->model;
}
Backend &Session::backend() {
    return *impl_->backends.front();
}
const std::vector<NodePlacement> &Session::placement() const {
    return impl_->placement;
}

NamedTensors Session::run(const Inputs &inputs) {
    const auto &outs = impl_->model.outputs();
    std::unordered_map<std::string, Tensor> got;
    run(inputs, [&](const std::string &name, const Tensor &t) { got[name] = t; });
    NamedTensors result;
    for (const ValueInfo &o : outs) result.emplace_back(o.name, got.at(o.name));
    return result;
}

void Session::Impl::execute(const Inputs &inputs, const OutputCallback &on_output,
                            const std::map<std::string, Copies> &bound,
                            const std::set<std::string> &kept,
                            std::map<std::string, Copies> *captured) {
    const Model::Impl &m = model.impl();
    profiles.clear();
    RunValues values(m, backends, used_on, on_output, kept, captured);
    values.bind(inputs, resident, bound);
    detail::ExternalData external(m.base_dir);  // for Constant nodes with external data
    for (size_t index = 0; index < m.order.size(); ++index) run_node(index, values, external);
    try {
        for (const std::unique_ptr<Backend> &b : backends) b->synchronize();
    } catch (const std::exception &e) {
        throw Error(m.name, std::nullopt, fmt::format("finishing the run: {}", e.what()));
    }
}

void Session::run(const Inputs &inputs, const OutputCallback &on_output) {
    impl_->execute(inputs, on_output, {}, {}, nullptr);
}

NamedTensors Session::run_step(const Inputs &inputs, const Carry &carry) {
    const Model::Impl &m = impl_->model.impl();
    std::set<std::string> kept;
    std::map<std::string, Copies> bound;
    for (const auto &[output, input] : carry) {
        const auto named = [](const std::vector<ValueInfo> &list, const std::string &name) {
            return std::any_of(list.begin(), list.end(),
                               [&](const ValueInfo &v) { return v.name == name; });
        };
        if (!named(m.outputs, output))
            throw Error(m.name, std::nullopt,
                        fmt::format("run_step carries \"{}\", which is no graph output", output));
        if (!named(m.inputs, input))
            throw Error(m.name, std::nullopt,
                        fmt::format("run_step carries \"{}\" to \"{}\", which is no graph input",
                                    output, input));
        kept.insert(output);
        const auto it = impl_->carried.find(output);
        if (it != impl_->carried.end()) bound[input] = it->second;
    }
    std::unordered_map<std::string, Tensor> got;
    std::map<std::string, Copies> captured;
    impl_->execute(
        inputs, [&](const std::string &name, const Tensor &t) { got[name] = t; }, bound, kept,
        &captured);
    impl_->carried = std::move(captured);
    NamedTensors result;
    for (const ValueInfo &o : m.outputs)
        if (!kept.count(o.name)) result.emplace_back(o.name, got.at(o.name));
    return result;
}

void Session::clear_carried() {
    impl_->carried.clear();
}

Tensor Session::carried(const std::string &output) {
    const auto it = impl_->carried.find(output);
    if (it == impl_->carried.end()) return {};
    for (size_t k = 0; k < impl_->backends.size(); ++k)
        if (it->second[k].buffer) return impl_->backends[k]->download(it->second[k]);
    return {};
}

std::string placement_summary(const std::vector<NodePlacement> &placement) {
    if (placement.empty()) return "placement: no nodes";
    // Per backend (in order of first use): its nodes, and per operator type and reason.
    struct Group {
        std::string op, reason;
        size_t nodes = 0;
    };
    struct On {
        std::string backend;
        size_t nodes = 0;
        std::vector<Group> groups;
    };
    std::vector<On> ons;
    for (const NodePlacement &p : placement) {
        auto on = std::find_if(ons.begin(), ons.end(),
                               [&](const On &o) { return o.backend == p.backend; });
        if (on == ons.end()) on = ons.insert(ons.end(), On{p.backend, 0, {}});
        ++on->nodes;
        auto g = std::find_if(on->groups.begin(), on->groups.end(), [&](const Group &x) {
            return x.op == p.op_type && x.reason == p.reason;
        });
        if (g == on->groups.end())
            g = on->groups.insert(on->groups.end(), Group{p.op_type, p.reason});
        ++g->nodes;
    }
    // The session's backend (whose nodes need no reason) first.
    std::stable_partition(ons.begin(), ons.end(), [](const On &o) {
        return std::all_of(o.groups.begin(), o.groups.end(),
                           [](const Group &g) { return g.reason.empty(); });
    });
    std::vector<std::string> parts;
    for (On &on : ons) {
        std::stable_sort(on.groups.begin(), on.groups.end(),
                         [](const Group &a, const Group &b) { return a.nodes > b.nodes; });
        std::vector<std::string> groups;
        bool reasons = false;
        for (const Group &g : on.groups) {
            groups.push_back(g.reason.empty() ? fmt::format("{} {}", g.op, g.nodes)
                                              : fmt::format("{} {}: {}", g.op, g.nodes, g.reason));
            reasons = reasons || !g.reason.empty();
        }
        parts.push_back(fmt::format("{} {}on {} ({})", on.nodes,
                                    parts.empty() ? (on.nodes == 1 ? "node " : "nodes ") : "",
                                    on.backend, fmt::join(groups, reasons ? "; " : ", ")));
    }
    return fmt::format("placement: {}", fmt::join(parts, ", "));
}

NamedTensors run_model(const std::string &model_path, const Inputs &inputs,
                       const RunOptions &options) {
    Session session(Model::load(model_path), options);
    return session.run(inputs);
}

}  // namespace gguftool::runtime
