// Opaque handles (aclTensor, aclScalar, aclTensorList, aclOpExecutor, aclrtStream) are addresses
// in a reserved range nobody can read, handed out once and never reused: a handle used after its
// object is gone is recognised as such (not mistaken for a newer object), and a handle the
// caller dereferences crashes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/export.hpp"

namespace gguftool::cann_emulator {

enum class HandleKind : uint8_t { none, tensor, scalar, tensor_list, executor, stream };

GGUFTOOL_EMU_EXPORT const char *handle_kind_name(HandleKind kind);

class GGUFTOOL_EMU_EXPORT HandleSpace {
public:
    static constexpr size_t kReservedBytes = size_t(1) << 30;
    static constexpr size_t kStep = 16;

    std::string reserve();  // "" or why it failed
    // A new handle of `kind`, or 0 when the range is used up.
    uintptr_t issue(HandleKind kind);
    // The kind `handle` was issued as (live or not); none if it never was.
    HandleKind issued_as(uintptr_t handle) const;

private:
    uintptr_t base_ = 0;
    std::vector<HandleKind> kinds_;  // by (handle - base_) / kStep - 1
};

// Why `handle` is not a live object of `expected` kind, e.g. "tensor 0x... was already destroyed"
// or "0x... is a scalar, not a tensor".
GGUFTOOL_EMU_EXPORT std::string not_live(const HandleSpace &space, uintptr_t handle,
                                         HandleKind expected);

}  // namespace gguftool::cann_emulator
