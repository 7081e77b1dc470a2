// Shapes.
#include <fmt/format.h>

#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
uint64_t shape_elements(const Shape &shape, const std::string &what) {
    uint64_t n = 1;
    bool empty = false;
    for (int64_t d : shape) {
        if (d < 0)
            throw Error(
                fmt::format("{}: negative dimension {} in shape {}", what, d, shape_string(shape)));
        if (d == 0) empty = true;
    }
    if (empty) return 0;
    for (int64_t d : shape) {
        if (uint64_t(d) > kMaxElements / n)
            throw Error(
                fmt::format("{}: shape {} has more than 2^56 elements", what, shape_string(shape)));
        n *= uint64_t(d);
    }
    return n;
}

std::string shape_string(const Shape &shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

uint64_t DeviceTensor::elements() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= uint64_t(d);
    return n;
}

}  // namespace gguftool::runtime
