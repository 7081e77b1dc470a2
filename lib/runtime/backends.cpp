// Choosing a backend by name (a new backend adds one row here and its directory under backends/),
// and the typed operator functions a backend does not override.
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

// What a typed operator function the backend does not override throws. The session never calls
// it when the backend's query() answers honestly; a backend that runs it anyway gets this error.
[[noreturn]] void no_kernel(const Backend &b, const char *function) {
    throw Error(fmt::format("the {} backend has no {} kernel", b.name(), function));
}

}  // namespace

void Backend::dequantize_packed(GgmlType, const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "dequantize_packed");
}
void Backend::unpack(const UnpackParams &, const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "unpack");
}
void Backend::one_hot(const OneHotParams &, const DeviceTensor &, const DeviceTensor &,
                      DeviceTensor &) {
    no_kernel(*this, "one_hot");
}
void Backend::cast(const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "cast");
}
void Backend::binary(BinaryOp, const DeviceTensor &, const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "binary");
}
void Backend::slice(std::span<const int64_t>, std::span<const int64_t>, const DeviceTensor &,
                    DeviceTensor &) {
    no_kernel(*this, "slice");
}
void Backend::transpose(std::span<const size_t>, const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "transpose");
}
void Backend::range(const DeviceTensor &, const DeviceTensor &, DataType, DeviceTensor &) {
    no_kernel(*this, "range");
}
void Backend::gather(size_t, bool, const DeviceTensor &, const DeviceTensor &, DeviceTensor &) {
    no_kernel(*this, "gather");
}
void Backend::concat(size_t, std::span<const DeviceTensor>, DeviceTensor &) {
    no_kernel(*this, "concat");
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
