// Choosing a backend by name (a new backend adds one row here and its directory under backends/),
// and a backend's operator rows: registering them, the query they answer.
#include <fmt/format.h>

#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

// The CPU has one device, number 0: another number is a mistake worth saying, not ignoring.
std::unique_ptr<Backend> make_cpu(const BackendOptions &options) {
    if (options.device != 0)
        throw Error(
            fmt::format("the cpu backend has only device 0, not device {}", options.device));
    return make_cpu_backend(options.threads);
}

struct BackendRow {
    const char *name;
    std::unique_ptr<Backend> (*make)(const BackendOptions &options);
};

constexpr BackendRow kBackends[] = {
    {"cpu", make_cpu},
    {"ascend", make_ascend_backend},
};

}  // namespace

void Backend::register_kernel(std::string op_type, OpKernel kernel, CapabilityRule capability) {
    rows_[std::move(op_type)] = Row{std::move(kernel), std::move(capability)};
}

Capability Backend::query(const OpQuery &q) const {
    const auto it = rows_.find(q.op_type);
    if (it == rows_.end())
        return {Capability::Kind::unsupported,
                fmt::format("the {} backend has no {}", name(), q.op_type)};
    return it->second.capability ? it->second.capability(q) : Capability{};
}

const OpKernel *Backend::kernel(std::string_view op_type) const {
    const auto it = rows_.find(op_type);
    return it == rows_.end() || !it->second.kernel ? nullptr : &it->second.kernel;
}

std::vector<std::string> Backend::op_types() const {
    std::vector<std::string> names;
    for (const auto &[op_type, row] : rows_) names.push_back(op_type);
    return names;
}

std::vector<std::string> backend_names() {
    std::vector<std::string> names;
    for (const BackendRow &b : kBackends) names.emplace_back(b.name);
    return names;
}

std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &options) {
    for (const BackendRow &b : kBackends)
        if (name == b.name) return b.make(options);
    throw Error(fmt::format("unknown backend \"{}\" (available: {})", name,
                            fmt::join(backend_names(), ", ")));
}

}  // namespace gguftool::runtime
