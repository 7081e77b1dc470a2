#include "core/handles.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "core/text.hpp"

namespace gguftool::cann_emulator {

const char *handle_kind_name(HandleKind kind) {
    switch (kind) {
        case HandleKind::tensor:
            return "tensor";
        case HandleKind::scalar:
            return "scalar";
        case HandleKind::tensor_list:
            return "tensor list";
        case HandleKind::executor:
            return "executor";
        case HandleKind::stream:
            return "stream";
        case HandleKind::none:
            break;
    }
    return "object";
}

std::string HandleSpace::reserve() {
    if (base_) return "";
    void *p = mmap(nullptr, kReservedBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return str("could not reserve handle space: ", std::strerror(errno));
    base_ = reinterpret_cast<uintptr_t>(p);
    return "";
}

uintptr_t HandleSpace::issue(HandleKind kind) {
    if ((kinds_.size() + 2) * kStep > kReservedBytes) return 0;
    kinds_.push_back(kind);
    return base_ + kinds_.size() * kStep;
}

HandleKind HandleSpace::issued_as(uintptr_t handle) const {
    if (!base_ || handle <= base_ || handle >= base_ + kReservedBytes || (handle - base_) % kStep)
        return HandleKind::none;
    const size_t i = (handle - base_) / kStep - 1;
    return i < kinds_.size() ? kinds_[i] : HandleKind::none;
}

std::string not_live(const HandleSpace &space, uintptr_t handle, HandleKind expected) {
    const HandleKind k = space.issued_as(handle);
    const char *want = handle_kind_name(expected);
    if (k == HandleKind::none)
        return str(hex(handle), " is not a ", want, " the emulation created");
    if (k != expected) return str(hex(handle), " is a ", handle_kind_name(k), ", not a ", want);
    if (expected == HandleKind::executor)
        return str("executor ", hex(handle),
                   " was already launched (an executor runs once: call the operator's "
                   "GetWorkspaceSize again for a new one)");
    return str(want, " ", hex(handle), " was already destroyed");
}

}  // namespace gguftool::cann_emulator
