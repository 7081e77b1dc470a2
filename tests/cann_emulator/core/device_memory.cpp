#include "core/device_memory.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "core/text.hpp"

namespace gguftool::cann_emulator {
namespace {

constexpr uintptr_t round_up(uintptr_t v, uintptr_t to) {
    return (v + to - 1) / to * to;
}

}  // namespace

std::string DeviceMemory::reserve() {
    if (base_) return "";
    void *p = mmap(nullptr, kReservedBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return str("could not reserve ", kReservedBytes >> 30,
                   " GiB of address space for device memory: ", std::strerror(errno));
    base_ = reinterpret_cast<uintptr_t>(p);
    next_ = round_up(base_ + kAlignment, kAlignment);  // address base_ itself is never handed out
    return "";
}

uintptr_t DeviceMemory::allocate(size_t size, int device, std::string &why) {
    const size_t usable = round_up(size, 32) + 32;
    const uintptr_t start = next_;
    if (usable > kReservedBytes || start + usable > base_ + kReservedBytes) {
        why = str("the emulation's ", kReservedBytes >> 30,
                  " GiB of device address space is used up");
        return 0;
    }
    std::unique_ptr<std::byte[]> bytes(new (std::nothrow) std::byte[usable]);
    if (!bytes) {
        why = str("the host has no ", usable, " bytes to back the allocation");
        return 0;
    }
    std::memset(bytes.get(), kFreshByte, usable);
    // One spare alignment unit between allocations: one past the end is never another's start.
    next_ = round_up(start + usable, kAlignment) + kAlignment;
    allocations_[start] = Allocation{start, size, usable, device, std::move(bytes)};
    return start;
}

const DeviceMemory::Allocation *DeviceMemory::find(uintptr_t address) const {
    auto it = allocations_.upper_bound(address);
    if (it == allocations_.begin()) return nullptr;
    --it;
    return address < it->second.end() ? &it->second : nullptr;
}

std::string DeviceMemory::check(uintptr_t address, size_t bytes) const {
    if (!is_device_address(address))
        return str(hex(address), " is not device memory (a host address, or not from aclrtMalloc)");
    const Allocation *a = find(address);
    if (!a) return str(hex(address), " is device address space outside every allocation");
    if (!a->live())
        return str(hex(address), " lies in the allocation at ", hex(a->start),
                   ", which was freed (use after free)");
    if (bytes > a->end() - address)
        return str(bytes, " bytes at ", hex(address), " run past the end of the allocation at ",
                   hex(a->start), " (", a->usable, " usable bytes, ", a->end() - address,
                   " from this address)");
    return "";
}

std::byte *DeviceMemory::host(uintptr_t address) const {
    const Allocation *a = find(address);
    return a->bytes.get() + (address - a->start);
}

void DeviceMemory::release(uintptr_t start) {
    allocations_.at(start).bytes.reset();
}

void DeviceMemory::release_device(int device) {
    for (auto &[start, a] : allocations_)
        if (device < 0 || a.device == device) a.bytes.reset();
}

}  // namespace gguftool::cann_emulator
