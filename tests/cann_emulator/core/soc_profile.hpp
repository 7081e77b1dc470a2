// The SoCs the emulation can pretend to be (GGUFTOOL_CANN_EMULATOR_SOC). Operators check their
// dtypes against the family's documented lists (opapi/operator_rules.cpp).
#pragma once

#include <string>
#include <string_view>

namespace gguftool::cann_emulator {

enum class SocFamily {
    ascend910b,  // Atlas A2 training/inference series: Ascend910B*, NpuArch DAV_2201
    ascend310p,  // Atlas inference series: Ascend310P*, NpuArch DAV_2002
};

struct SocProfile {
    std::string_view soc;  // what aclrtGetSocName returns
    SocFamily family;
    std::string_view product;
    std::string_view arch;
};

inline constexpr SocProfile kSocProfiles[] = {
    {"Ascend910B1", SocFamily::ascend910b, "Atlas A2", "DAV_2201"},
    {"Ascend910B2", SocFamily::ascend910b, "Atlas A2", "DAV_2201"},
    {"Ascend910B3", SocFamily::ascend910b, "Atlas A2", "DAV_2201"},
    {"Ascend910B4", SocFamily::ascend910b, "Atlas A2", "DAV_2201"},
    {"Ascend310P1", SocFamily::ascend310p, "Atlas inference series (310P)", "DAV_2002"},
    {"Ascend310P3", SocFamily::ascend310p, "Atlas inference series (310P)", "DAV_2002"},
};

inline constexpr std::string_view kDefaultSoc = "Ascend910B1";

inline const SocProfile *find_soc_profile(std::string_view soc) {
    for (const SocProfile &p : kSocProfiles)
        if (p.soc == soc) return &p;
    return nullptr;
}

// "Ascend910B1 (Atlas A2, DAV_2201), ..."
inline std::string soc_profile_list() {
    std::string s;
    for (const SocProfile &p : kSocProfiles)
        s += (s.empty() ? "" : ", ") + std::string(p.soc) + " (" + std::string(p.product) + ", " +
             std::string(p.arch) + ")";
    return s;
}

}  // namespace gguftool::cann_emulator
