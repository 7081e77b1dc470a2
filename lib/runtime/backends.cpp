// Choosing a backend by name. A new backend adds one row here and its directory under backends/.
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
