// Running a model: fit it to the backend and upload its initializers once (construction); then
// per run bind inputs, execute nodes in order on the backend, hand out graph outputs, free
// intermediates after their last use.
#include <fmt/format.h>

#include <chrono>
#include <new>
#include <unordered_map>

#include "backend_fit.hpp"
#include "model_impl.hpp"

namespace gguftool::runtime {
namespace {

using ModelImpl = Model::Impl;

void check_declared(const ValueInfo &info, const Tensor &t, const std::string &where,
                    const char *kind) {
    if (info.dtype != DataType::undefined && info.dtype != t.dtype())
        throw Error(where, std::nullopt,
                    fmt::format("graph {} \"{}\" is {} but the graph declares {}", kind, info.name,
                                dtype_name(t.dtype()), dtype_name(info.dtype)));
    if (!info.has_shape) return;
    bool ok = info.dims.size() == t.rank();
    for (size_t i = 0; ok && i < info.dims.size(); ++i)
        ok = !info.dims[i] || *info.dims[i] == t.shape()[i];
    if (!ok) {
        std::vector<std::string> dims;
        for (const auto &d : info.dims) dims.push_back(d ? std::to_string(*d) : "?");
        throw Error(where, std::nullopt,
                    fmt::format("graph {} \"{}\" has shape {} but the graph declares [{}]", kind,
                                info.name, shape_string(t.shape()), fmt::join(dims, ", ")));
    }
}

// The values of one run on the backend: the live tensors, the uses each has left (consuming
// nodes, plus one per listing as a graph output) and the graph outputs not handed out yet. A
// value is handed out as soon as it exists and freed after its last use.
class RunValues {
public:
    RunValues(const ModelImpl &m, Backend &backend, const OutputCallback &on_output)
        : m_(m), backend_(backend), on_output_(on_output) {
        for (const ModelImpl::Node &n : m.order)
            for (const std::string &in : n.proto->input())
                if (!in.empty()) ++uses_[in];
        for (const ValueInfo &o : m.outputs) ++pending_outputs_[o.name];
    }

    // Binds the inputs: every declared input must be fed; initializers (`resident`) can be
    // overridden.
    void bind(const Inputs &inputs,
              const std::vector<std::pair<std::string, DeviceTensor>> &resident) {
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
            values_[name] = backend_.upload(tensor);
        }
        for (const ValueInfo &v : m_.inputs)
            if (!inputs.count(v.name))
                throw Error(where, std::nullopt,
                            fmt::format("graph input \"{}\" was not given", v.name));
        for (const auto &[name, t] : resident)
            if (!values_.count(name)) values_[name] = t;  // a fed input overrides it
        for (auto it = values_.begin(); it != values_.end();) {
            emit_if_output(it->first);
            it = dead(it->first) ? values_.erase(it) : std::next(it);
        }
    }

    // A node's inputs (nullptr for an absent optional one); adds the bytes they hold to `bytes`.
    std::vector<const DeviceTensor *> inputs_of(const onnx::NodeProto &p, uint64_t &bytes) const {
        std::vector<const DeviceTensor *> in;
        for (const std::string &name : p.input()) {
            if (name.empty()) {
                in.push_back(nullptr);
                continue;
            }
            const DeviceTensor &t = values_.at(name);
            in.push_back(&t);
            bytes += t.nbytes();
        }
        return in;
    }

    // Keeps a node's outputs, hands out those that are graph outputs, and frees what no node
    // will use again.
    void store(const onnx::NodeProto &p, std::vector<DeviceTensor> &outputs) {
        for (int k = 0; k < p.output_size(); ++k) {
            values_[p.output(k)] = std::move(outputs[size_t(k)]);
            emit_if_output(p.output(k));
        }
        for (const std::string &name : p.input()) {
            if (name.empty()) continue;
            --uses_[name];
            release_if_dead(name);
        }
        for (const std::string &name : p.output()) release_if_dead(name);
    }

private:
    void emit_if_output(const std::string &name) {
        const auto it = pending_outputs_.find(name);
        if (it == pending_outputs_.end()) return;
        const Tensor host = backend_.download(values_.at(name));
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
    Backend &backend_;
    const OutputCallback &on_output_;
    std::unordered_map<std::string, size_t> uses_;
    std::unordered_map<std::string, size_t> pending_outputs_;
    std::unordered_map<std::string, DeviceTensor> values_;
};

}  // namespace

struct Session::Impl {
    Model model;  // as fitted to the backend (lowered where it asked)
    std::unique_ptr<Backend> backend;
    bool profile = false;
    std::vector<NodeProfile> profiles;
    std::vector<std::string> lowered_from;  // per node of model's order, or empty
    // Every initializer, uploaded once at construction and used by every run.
    std::vector<std::pair<std::string, DeviceTensor>> resident;

    // Runs node `index` of the model's order on the backend (and records its profile).
    void run_node(size_t index, RunValues &values, detail::ExternalData &external);
};

void Session::Impl::run_node(size_t index, RunValues &values, detail::ExternalData &external) {
    const Model::Impl &m = model.impl();
    const ModelImpl::Node &node = m.order[index];
    const onnx::NodeProto &p = *node.proto;
    uint64_t bytes_read = 0;
    detail::OpContext ctx(*node.op, p, *backend, external, values.inputs_of(p, bytes_read));
    const uint64_t calls_before = profile ? backend->device_calls() : 0;
    const auto start = std::chrono::steady_clock::now();
    try {
        node.op->run(ctx);
        for (size_t k = 0; k < ctx.outputs().size(); ++k)
            if (!ctx.outputs()[k].buffer) throw Error(fmt::format("output {} was not computed", k));
        // A device computes asynchronously: a node's time is until its work has finished.
        if (profile) backend->synchronize();
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
                            bytes_read, written, backend->device_calls() - calls_before,
                            lowered_from.empty() ? std::string() : lowered_from[index]});
    }
    values.store(p, ctx.outputs());
}

Session::Session(Model model, const RunOptions &options)
    : Session(std::move(model),
              make_backend(options.backend,
                           BackendOptions{.threads = options.threads, .device = options.device}),
              options.profile) {}

Session::Session(Model model, std::unique_ptr<Backend> backend, bool profile)
    : impl_(std::make_unique<Impl>()) {
    detail::FittedModel fitted = detail::fit_to_backend(std::move(model), *backend);
    impl_->model = std::move(fitted.model);
    impl_->lowered_from = std::move(fitted.lowered_from);
    impl_->backend = std::move(backend);
    impl_->profile = profile;
    const Model::Impl &m = impl_->model.impl();
    impl_->resident.reserve(m.initializers.size());
    for (const auto &[name, tensor] : m.initializers) {
        try {
            impl_->resident.emplace_back(name, impl_->backend->upload(tensor));
        } catch (const std::bad_alloc &) {
            throw Error(m.name, std::nullopt,
                        fmt::format("initializer \"{}\": out of memory", name));
        } catch (const std::exception &e) {
            throw Error(m.name, std::nullopt,
                        fmt::format("initializer \"{}\": {}", name, e.what()));
        }
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
    return *impl_->backend;
}

NamedTensors Session::run(const Inputs &inputs) {
    const auto &outs = impl_->model.outputs();
    std::unordered_map<std::string, Tensor> got;
    run(inputs, [&](const std::string &name, const Tensor &t) { got[name] = t; });
    NamedTensors result;
    for (const ValueInfo &o : outs) result.emplace_back(o.name, got.at(o.name));
    return result;
}

void Session::run(const Inputs &inputs, const OutputCallback &on_output) {
    const Model::Impl &m = impl_->model.impl();
    impl_->profiles.clear();
    RunValues values(m, *impl_->backend, on_output);
    values.bind(inputs, impl_->resident);
    detail::ExternalData external(m.base_dir);  // for Constant nodes with external data
    for (size_t index = 0; index < m.order.size(); ++index)
        impl_->run_node(index, values, external);
    try {
        impl_->backend->synchronize();
    } catch (const std::exception &e) {
        throw Error(m.name, std::nullopt, fmt::format("finishing the run: {}", e.what()));
    }
}

NamedTensors run_model(const std::string &model_path, const Inputs &inputs,
                       const RunOptions &options) {
    Session session(Model::load(model_path), options);
    return session.run(inputs);
}

}  // namespace gguftool::runtime
