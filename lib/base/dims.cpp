#include "gguftool/dims.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

#include "gguftool/error.hpp"

namespace gguftool {

std::vector<int64_t> onnx_shape(std::span<const uint64_t> gguf_dims) {
    std::vector<int64_t> shape;
    shape.reserve(gguf_dims.size());
    for (auto d = gguf_dims.rbegin(); d != gguf_dims.rend(); ++d) {
        if (*d > uint64_t(std::numeric_limits<int64_t>::max()))
            throw Error("GGUF dim " + std::to_string(*d) + " does not fit an ONNX dim (int64)");
        shape.push_back(int64_t(*d));
    }
    return shape;
}

size_t normalize_axis(int64_t axis, size_t rank, const char *what) {
    const int64_t r = int64_t(rank);
    if (axis < -r || axis >= r)
        throw Error(fmt::format("{} {} is out of range for rank {} (valid: [{}, {}])", what, axis,
                                rank, -r, r - 1));
    return size_t(axis < 0 ? axis + r : axis);
}

}  // namespace gguftool
