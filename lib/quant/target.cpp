#include <hwy/highway.h>
#include <hwy/targets.h>

#include "gguftool/quant.hpp"

namespace gguftool::quant {

const char *active_target() {
    hwy::ChosenTarget &chosen = hwy::GetChosenTarget();
    if (!chosen.IsInitialized()) chosen.Update(hwy::SupportedTargets());
    // The best target the dispatcher can pick: the highest bit among supported & compiled.
    const int64_t usable = hwy::SupportedTargets() & HWY_TARGETS;
    return hwy::TargetName(usable & -usable);
}

}  // namespace gguftool::quant
