#include "core/emulator.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/errors.hpp"

namespace gguftool::cann_emulator {
namespace {

std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

constexpr int kMaxDevices = 64;

}  // namespace

Emulator &Emulator::instance() {
    static Emulator *e =
        new Emulator;  // never destroyed: libraries may run after static destructors
    return *e;
}

aclError Emulator::initialize(const char *config_path) {
    constexpr std::string_view f = "aclInit";
    if (phase == Phase::initialized)
        return fail(kAclErrorRepeatInitialize, f,
                    "CANN is already initialized (aclInit runs once per process)");
    if (phase == Phase::finalized)
        return fail(
            kAclErrorRepeatInitialize, f,
            "called after aclFinalize (CANN cannot be initialized again in the same process)");
    if (config_path && !std::ifstream(config_path))
        return fail(kAclErrorInvalidParam, f,
                    str("cannot read the configuration file ", config_path));

    const std::string soc_name = env("GGUFTOOL_CANN_EMULATOR_SOC").empty()
                                     ? std::string(kDefaultSoc)
                                     : env("GGUFTOOL_CANN_EMULATOR_SOC");
    const SocProfile *profile = find_soc_profile(soc_name);
    if (!profile)
        return fail(kAclErrorInvalidParam, f,
                    str("GGUFTOOL_CANN_EMULATOR_SOC=", soc_name,
                        " is not a SoC the CANN emulation has a profile for; profiles: ",
                        soc_profile_list()));
    int count = 1;
    if (const std::string d = env("GGUFTOOL_CANN_EMULATOR_DEVICES"); !d.empty()) {
        char *end = nullptr;
        const long n = std::strtol(d.c_str(), &end, 10);
        if (*end || n < 1 || n > kMaxDevices)
            return fail(kAclErrorInvalidParam, f,
                        str("GGUFTOOL_CANN_EMULATOR_DEVICES=", d,
                            " is not a device count from 1 to ", kMaxDevices));
        count = int(n);
    }
    if (std::string why = memory.reserve(); !why.empty()) return fail(kAclErrorBadAlloc, f, why);
    if (std::string why = handles.reserve(); !why.empty()) return fail(kAclErrorBadAlloc, f, why);
    soc = profile;
    device_count = count;
    log_path = env("GGUFTOOL_CANN_EMULATOR_LOG");
    phase = Phase::initialized;
    return kAclSuccess;
}

aclError Emulator::finalize() {
    constexpr std::string_view f = "aclFinalize";
    if (phase == Phase::finalized)
        return fail(kAclErrorRepeatFinalize, f, "CANN was already finalized");
    if (aclError e = require_initialized(f)) return e;
    // Everything goes: queued work is dropped, memory freed (its addresses stay unusable).
    streams.live.clear();
    memory.release_device(-1);
    device_refs.clear();
    current_device.reset();
    phase = Phase::finalized;
    return kAclSuccess;
}

aclError Emulator::require_initialized(std::string_view function) const {
    if (phase == Phase::initialized) return kAclSuccess;
    return fail(kAclErrorUninitialize, function,
                phase == Phase::finalized ? "called after aclFinalize"
                                          : "CANN is not initialized (call aclInit first)");
}

aclError Emulator::require_device(std::string_view function) const {
    if (aclError e = require_initialized(function)) return e;
    if (current_device) return kAclSuccess;
    return fail(kAclErrorRtContextNull, function, "no device is set (call aclrtSetDevice first)");
}

void Emulator::log_call(const std::string &line) const {
    if (log_path.empty()) return;
    if (std::FILE *out = std::fopen(log_path.c_str(), "a")) {
        std::fprintf(out, "%s\n", line.c_str());
        std::fclose(out);
    }
}

const char *emulator_description(std::string_view layout) {
    Emulator &e = Emulator::instance();
    auto lock = e.lock();
    const std::string soc = e.soc ? std::string(e.soc->soc)
                            : env("GGUFTOOL_CANN_EMULATOR_SOC").empty()
                                ? std::string(kDefaultSoc)
                                : env("GGUFTOOL_CANN_EMULATOR_SOC");
    static std::string text;
    text = str("CANN emulation (gguftool tests/cann_emulator), SoC ", soc, ", ", layout, " layout");
    return text.c_str();
}

}  // namespace gguftool::cann_emulator
