#include "core/view.hpp"

#include "core/text.hpp"

namespace gguftool::cann_emulator {

int64_t element_count(std::span<const int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

int64_t View::last_element() const {
    if (empty()) return offset - 1;
    int64_t last = offset;
    for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
    return last;
}

bool View::contiguous() const {
    int64_t expected = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        if (dims[i] == 1) continue;
        if (strides[i] != expected) return false;
        expected *= dims[i];
    }
    return true;
}

std::string View::describe() const {
    return str(dtype_name(dtype), " ", shape_text(dims), " strides ", shape_text(strides),
               " offset ", offset);
}

}  // namespace gguftool::cann_emulator
