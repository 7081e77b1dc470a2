// Message text for the emulation's errors: concatenation, addresses in hex, shapes.
#pragma once

#include <cstdint>
#include <span>
#include <sstream>
#include <string>

namespace gguftool::cann_emulator {

template <class... Args>
std::string str(const Args &...args) {
    std::ostringstream out;
    (out << ... << args);
    return out.str();
}

inline std::string hex(uintptr_t address) {
    std::ostringstream out;
    out << "0x" << std::hex << address;
    return out.str();
}
inline std::string hex(const void *pointer) {
    return hex(reinterpret_cast<uintptr_t>(pointer));
}

// "[2, 3, 4]" ("[]" for a scalar).
inline std::string shape_text(std::span<const int64_t> dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
    return s + "]";
}

}  // namespace gguftool::cann_emulator
