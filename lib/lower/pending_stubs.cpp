// TEMPORARY: formats not lowered yet throw. Each family file replaces its entries.
#include <fmt/format.h>

#include "formats.hpp"
#include "gguftool/error.hpp"

namespace gguftool::lower::detail {
#define PENDING(name)                                             \
    Value lower_##name(Builder &, const Value &) {                \
        throw Error("format " #name " is not lowered yet");       \
    }
PENDING(q4_1) PENDING(q5_0) PENDING(q5_1) PENDING(q8_0) PENDING(q8_1) PENDING(q1_0) PENDING(q2_0)
PENDING(mxfp4) PENDING(nvfp4) PENDING(tq1_0) PENDING(tq2_0) PENDING(iq2_xxs) PENDING(iq2_xs)
PENDING(iq2_s) PENDING(iq3_xxs) PENDING(iq3_s) PENDING(iq1_s) PENDING(iq1_m) PENDING(iq4_nl)
PENDING(iq4_xs)
}  // namespace gguftool::lower::detail
