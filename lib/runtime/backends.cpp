// Choosing a backend by name. A new backend adds one row here and its directory under backends/.
#include <fmt/format.h>

#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

struct BackendRow {
    const char *name;
    std::unique_ptr<Backend> (*make)(unsigned threads);
};

constexpr BackendRow kBackends[] = {
    {"cpu", make_cpu_backend},
};

}  // namespace

std::vector<std::string> backend_names() {
    std::vector<std::string> names;
    for (const BackendRow &b : kBackends) names.emplace_back(b.name);
    return names;
}

std::unique_ptr<Backend> make_backend(const std::string &name, unsigned threads) {
    for (const BackendRow &b : kBackends)
        if (name == b.name) return b.make(threads);
    throw Error(fmt::format("unknown backend \"{}\" (available: {})", name,
                            fmt::join(backend_names(), ", ")));
}

}  // namespace gguftool::runtime
