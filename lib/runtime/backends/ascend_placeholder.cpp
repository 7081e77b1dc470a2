// TEMPORARY: stands in for lib/runtime/backends/ascend/ until the Ascend backend lands, so that
// make_backend's "ascend" row links. Deleted when the backend is merged.
#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime {

std::unique_ptr<Backend> make_ascend_backend(const BackendOptions &options) {
    (void)options;
    throw Error("the ascend backend is not built yet");
}

}  // namespace gguftool::runtime
