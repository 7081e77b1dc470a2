// The runtime's C functions (libascendcl.so in the CANN 8.1 layout, libacl_rt.so in 8.5's) and the
// emulation's marker, on the core's shared state. GGUFTOOL_EMU_LAYOUT names the layout.
#include <cstring>

#include "core/abi_declarations.hpp"
#include "core/emulator.hpp"
#include "core/errors.hpp"

GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_EMU_DECLARE_FUNCTION)
extern "C" GGUFTOOL_EMU_EXPORT gguftool::cann::EmulatorDescriptionFn
    gguftool_cann_emulator_description;

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;

static_assert(std::string_view(kEmulatorMarkerSymbol) == "gguftool_cann_emulator_description");

namespace {

Emulator &emu() {
    return Emulator::instance();
}

const char *kind_name(aclrtMemcpyKind kind) {
    switch (kind) {
        case ACL_MEMCPY_HOST_TO_HOST:
            return "ACL_MEMCPY_HOST_TO_HOST";
        case ACL_MEMCPY_HOST_TO_DEVICE:
            return "ACL_MEMCPY_HOST_TO_DEVICE";
        case ACL_MEMCPY_DEVICE_TO_HOST:
            return "ACL_MEMCPY_DEVICE_TO_HOST";
        case ACL_MEMCPY_DEVICE_TO_DEVICE:
            return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    }
    return "?";
}

Stream *find_stream(aclrtStream stream, const char *f, aclError &status) {
    const uintptr_t h = reinterpret_cast<uintptr_t>(stream);
    auto it = emu().streams.live.find(h);
    if (it != emu().streams.live.end()) return &it->second;
    status = fail(kAclErrorRtParamInvalid, f,
                  stream ? not_live(emu().handles, h, HandleKind::stream)
                         : "stream is null (the emulation has no default stream)");
    return nullptr;
}

aclError check_device_id(int32_t id, const char *f) {
    const int n = emu().device_count;
    if (id >= 0 && id < n) return kAclSuccess;
    return fail(kAclErrorRtInvalidDeviceId, f,
                str("device ", id, " does not exist: the emulation has ", n, " device",
                    n == 1 ? "" : "s", " (0 to ", n - 1, ", GGUFTOOL_CANN_EMULATOR_DEVICES)"));
}

}  // namespace

extern "C" {

aclError aclInit(const char *configPath) {
    auto lock = emu().lock();
    return emu().initialize(configPath);
}

aclError aclFinalize() {
    auto lock = emu().lock();
    return emu().finalize();
}

const char *aclGetRecentErrMsg() {
    return recent_error();
}

aclError aclrtSetDevice(int32_t deviceId) {
    constexpr const char *f = "aclrtSetDevice";
    auto lock = emu().lock();
    if (aclError e = emu().require_initialized(f)) return e;
    if (aclError e = check_device_id(deviceId, f)) return e;
    ++emu().device_refs[deviceId];
    emu().current_device = deviceId;
    return kAclSuccess;
}

// The last reset of a device (as many as its aclrtSetDevice calls) releases its streams and
// memory, as CANN does.
aclError aclrtResetDevice(int32_t deviceId) {
    constexpr const char *f = "aclrtResetDevice";
    Emulator &e = emu();
    auto lock = e.lock();
    if (aclError s = e.require_initialized(f)) return s;
    if (aclError s = check_device_id(deviceId, f)) return s;
    auto refs = e.device_refs.find(deviceId);
    if (refs == e.device_refs.end())
        return fail(kAclErrorRtInvalidDeviceId, f,
                    str("device ", deviceId, " is not set (aclrtSetDevice was not called for it)"));
    if (refs->second == 1) {
        if (std::string p = e.streams.pending_on(deviceId); !p.empty())
            return fail(kAclErrorRtParamInvalid, f,
                        str("device ", deviceId, " still has ", p, " (synchronize first)"));
        std::erase_if(e.streams.live, [&](const auto &s) { return s.second.device == deviceId; });
        e.memory.release_device(deviceId);
        e.device_refs.erase(refs);
        if (e.current_device == deviceId) e.current_device.reset();
    } else {
        --refs->second;
    }
    return kAclSuccess;
}

aclError aclrtGetDeviceCount(uint32_t *count) {
    constexpr const char *f = "aclrtGetDeviceCount";
    auto lock = emu().lock();
    if (aclError e = emu().require_initialized(f)) return e;
    if (!count) return fail(kAclErrorInvalidParam, f, "count is null");
    *count = uint32_t(emu().device_count);
    return kAclSuccess;
}

aclError aclrtCreateStream(aclrtStream *stream) {
    constexpr const char *f = "aclrtCreateStream";
    auto lock = emu().lock();
    if (aclError e = emu().require_device(f)) return e;
    if (!stream) return fail(kAclErrorInvalidParam, f, "stream is null");
    const uintptr_t h = emu().handles.issue(HandleKind::stream);
    if (!h) return fail(kAclErrorRtMemoryAllocation, f, "the emulation's handle space is used up");
    emu().streams.live[h].device = *emu().current_device;
    *stream = reinterpret_cast<aclrtStream>(h);
    return kAclSuccess;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    constexpr const char *f = "aclrtDestroyStream";
    auto lock = emu().lock();
    if (aclError e = emu().require_device(f)) return e;
    aclError status = kAclSuccess;
    Stream *s = find_stream(stream, f, status);
    if (!s) return status;
    if (!s->queue.empty())
        return fail(kAclErrorRtParamInvalid, f,
                    str("stream ", hex(stream), " has ", s->queue.size(),
                        " pending operation(s), the first ",
                        describe_work(s->queue.front(), reinterpret_cast<uintptr_t>(stream)),
                        " (call aclrtSynchronizeStream before destroying it)"));
    emu().streams.live.erase(reinterpret_cast<uintptr_t>(stream));
    return kAclSuccess;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    constexpr const char *f = "aclrtSynchronizeStream";
    auto lock = emu().lock();
    if (aclError e = emu().require_device(f)) return e;
    aclError status = kAclSuccess;
    Stream *s = find_stream(stream, f, status);
    if (!s) return status;
    if (std::string error = Streams::synchronize(*s, emu().memory); !error.empty())
        return fail(kAclErrorRtAicoreException, f, error);
    return kAclSuccess;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    constexpr const char *f = "aclrtMalloc";
    Emulator &e = emu();
    auto lock = e.lock();
    if (aclError s = e.require_device(f)) return s;
    if (!devPtr) return fail(kAclErrorInvalidParam, f, "devPtr is null");
    if (size == 0) return fail(kAclErrorInvalidParam, f, "size is 0");
    // The huge/normal/P2P choices (0..7), optionally with the band-width and read-only flags.
    const unsigned p = unsigned(policy);
    if ((p & 0xFF) > 7 || (p & ~0x1011FFu))
        return fail(kAclErrorInvalidParam, f, str("policy ", p, " is not an aclrtMemMallocPolicy"));
    std::string why;
    const uintptr_t address = e.memory.allocate(size, *e.current_device, why);
    if (!address) return fail(kAclErrorRtMemoryAllocation, f, str(size, " bytes: ", why));
    *devPtr = reinterpret_cast<void *>(address);
    return kAclSuccess;
}

aclError aclrtFree(void *devPtr) {
    constexpr const char *f = "aclrtFree";
    Emulator &e = emu();
    auto lock = e.lock();
    if (aclError s = e.require_device(f)) return s;
    if (!devPtr) return fail(kAclErrorInvalidParam, f, "devPtr is null");
    const uintptr_t address = reinterpret_cast<uintptr_t>(devPtr);
    if (!e.memory.is_device_address(address))
        return fail(kAclErrorInvalidParam, f,
                    str(hex(address), " is not device memory (a host address?)"));
    const DeviceMemory::Allocation *a = e.memory.find(address);
    if (!a) return fail(kAclErrorInvalidParam, f, str(hex(address), " was never allocated"));
    if (a->start != address)
        return fail(kAclErrorInvalidParam, f,
                    str(hex(address), " is not an address aclrtMalloc returned (it lies ",
                        address - a->start, " bytes into the allocation at ", hex(a->start), ")"));
    if (!a->live())
        return fail(kAclErrorInvalidParam, f,
                    str(hex(address), " was already freed (double free)"));
    if (std::string c = e.streams.conflict(a->start, a->end(), true); !c.empty())
        return fail(kAclErrorInvalidParam, f, str("cannot free ", hex(address), ": ", c));
    e.memory.release(address);
    return kAclSuccess;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
    constexpr const char *f = "aclrtMemcpy";
    Emulator &e = emu();
    auto lock = e.lock();
    if (aclError s = e.require_device(f)) return s;
    if (!dst || !src) return fail(kAclErrorInvalidParam, f, str(dst ? "src" : "dst", " is null"));
    if (count > destMax)
        return fail(kAclErrorInvalidParam, f, str("count ", count, " exceeds destMax ", destMax));
    if (int(kind) < ACL_MEMCPY_HOST_TO_HOST || int(kind) > ACL_MEMCPY_DEVICE_TO_DEVICE)
        return fail(kAclErrorInvalidParam, f,
                    str("kind ", int(kind),
                        " is not emulated (host-to-host, host-to-device, device-to-host and "
                        "device-to-device are)"));
    const bool dst_device =
        kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    const bool src_device =
        kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
    for (const auto &[name, address, device] :
         {std::tuple{"dst", d, dst_device}, std::tuple{"src", s, src_device}}) {
        if (device) {
            if (std::string why = e.memory.check(address, count); !why.empty())
                return fail(kAclErrorInvalidParam, f, str(name, " (", kind_name(kind), "): ", why));
        } else if (e.memory.is_device_address(address)) {
            return fail(kAclErrorInvalidParam, f,
                        str(name, " ", hex(address), " is device memory, but ", kind_name(kind),
                            " takes a host ", name));
        }
    }
    if (count == 0) return kAclSuccess;
    if (src_device)
        if (std::string c = e.streams.conflict(s, s + count, false); !c.empty())
            return fail(kAclErrorInvalidParam, f, str("reading src: ", c));
    if (dst_device)
        if (std::string c = e.streams.conflict(d, d + count, true); !c.empty())
            return fail(kAclErrorInvalidParam, f, str("writing dst: ", c));
    std::memmove(dst_device ? e.memory.host(d) : static_cast<std::byte *>(dst),
                 src_device ? e.memory.host(s) : static_cast<const std::byte *>(src), count);
    return kAclSuccess;
}

const char *aclrtGetSocName() {
    auto lock = emu().lock();
    if (emu().require_initialized("aclrtGetSocName")) return nullptr;
    return emu().soc->soc.data();  // the profiles' names are string literals
}

const char *gguftool_cann_emulator_description() {
    return emulator_description(GGUFTOOL_EMU_LAYOUT);
}

}  // extern "C"
