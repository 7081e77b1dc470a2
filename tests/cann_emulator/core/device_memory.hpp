// Emulated device memory, kept apart from host memory. A large address range is reserved with no
// access rights (so dereferencing a device address on the host crashes); aclrtMalloc hands out
// addresses inside it by bump allocation, never reusing one (so a use after free is recognised),
// and each allocation's bytes live in a separate host buffer the emulation maps addresses to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/export.hpp"

namespace gguftool::cann_emulator {

class GGUFTOOL_EMU_EXPORT DeviceMemory {
public:
    struct Allocation {
        uintptr_t start = 0;
        size_t requested = 0;
        size_t usable = 0;  // requested rounded up to 32, plus 32 (aclrtMalloc's documented size)
        int device = 0;
        std::unique_ptr<std::byte[]> bytes;  // null once freed
        bool live() const { return bytes != nullptr; }
        uintptr_t end() const { return start + usable; }
    };

    static constexpr size_t kReservedBytes = size_t(256) << 30;
    static constexpr size_t kAlignment = 64;     // aclrtMalloc's addresses
    static constexpr uint8_t kFreshByte = 0xA5;  // what new allocations hold (not zeros)

    DeviceMemory() = default;
    DeviceMemory(const DeviceMemory &) = delete;
    DeviceMemory &operator=(const DeviceMemory &) = delete;

    // Reserves the address range (once per process); "" or why it failed.
    std::string reserve();
    bool is_device_address(uintptr_t address) const {
        return base_ && address >= base_ && address < base_ + kReservedBytes;
    }
    bool is_device_address(const void *p) const {
        return is_device_address(reinterpret_cast<uintptr_t>(p));
    }

    // A new allocation's address, or 0 with `why` set.
    uintptr_t allocate(size_t size, int device, std::string &why);
    // The allocation (live or freed) whose usable bytes hold `address`, or nullptr.
    const Allocation *find(uintptr_t address) const;
    // "" when [address, address + bytes) lies inside one live allocation, else what is wrong.
    std::string check(uintptr_t address, size_t bytes) const;
    // The host bytes behind a checked device address.
    std::byte *host(uintptr_t address) const;
    // Frees an allocation (by its start address); the address is never handed out again.
    void release(uintptr_t start);
    // Frees every live allocation of `device` (aclrtResetDevice), or of all devices (-1).
    void release_device(int device);

private:
    uintptr_t base_ = 0;
    uintptr_t next_ = 0;
    std::map<uintptr_t, Allocation> allocations_;  // by start, freed ones kept for messages
};

}  // namespace gguftool::cann_emulator
