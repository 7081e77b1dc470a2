// The emulation's process-wide state, in the core library that every public library links, so
// that the runtime, nnopbase, the operator libraries and ATB share one device. Every ABI entry
// point takes the lock for the whole call.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/codes.hpp"
#include "core/device_memory.hpp"
#include "core/export.hpp"
#include "core/handles.hpp"
#include "core/objects.hpp"
#include "core/soc_profile.hpp"
#include "core/stream.hpp"

namespace gguftool::cann_emulator {

// A phase-one result waiting for its launch.
struct Executor {
    std::string op;  // "aclnnAdd"
    Work work;
    std::vector<std::pair<HandleKind, uintptr_t>> holds;
    std::string log_line;
};

class GGUFTOOL_EMU_EXPORT Emulator {
public:
    enum class Phase { before_init, initialized, finalized };

    static Emulator &instance();
    std::unique_lock<std::recursive_mutex> lock() { return std::unique_lock(mutex_); }

    // aclInit: reads GGUFTOOL_CANN_EMULATOR_SOC, _DEVICES and _LOG.
    aclError initialize(const char *config_path);
    aclError finalize();

    // 0, or the error code with the message recorded for `function`.
    aclError require_initialized(std::string_view function) const;
    aclError require_device(std::string_view function) const;

    // One line of the call log (GGUFTOOL_CANN_EMULATOR_LOG), if it is on.
    void log_call(const std::string &line) const;

    Phase phase = Phase::before_init;
    const SocProfile *soc = nullptr;
    int device_count = 0;
    std::map<int, int> device_refs;  // aclrtSetDevice counts per device
    std::optional<int> current_device;
    std::string log_path;

    DeviceMemory memory;
    HandleSpace handles;
    Objects objects;
    Streams streams;
    std::unordered_map<uintptr_t, Executor> executors;

private:
    mutable std::recursive_mutex mutex_;
};

// The marker's text: "CANN emulation (gguftool tests/cann_emulator), SoC Ascend910B1, CANN 8.1
// layout".
GGUFTOOL_EMU_EXPORT const char *emulator_description(std::string_view layout);

}  // namespace gguftool::cann_emulator
