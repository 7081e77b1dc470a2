#include "formats/dispatch.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::quant {

const char *active_target() {
    return hwy::TargetName(simd::active_target());
}

}  // namespace gguftool::quant
