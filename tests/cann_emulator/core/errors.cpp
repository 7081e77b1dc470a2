#include "core/errors.hpp"

#include <optional>

namespace gguftool::cann_emulator {
namespace {
thread_local std::optional<std::string> recent;
}

void record_error(std::string message) {
    recent = std::move(message);
}

const char *recent_error() {
    return recent ? recent->c_str() : nullptr;
}

}  // namespace gguftool::cann_emulator
