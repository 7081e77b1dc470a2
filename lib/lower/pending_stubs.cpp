// TEMPORARY: formats not lowered yet throw. Each family file replaces its entries.
#include <fmt/format.h>

#include "formats.hpp"
#include "gguftool/error.hpp"

namespace gguftool::lower::detail {
#define PENDING(name)                                       \
    Value lower_##name(Builder &, const Value &) {          \
        throw Error("format " #name " is not lowered yet"); \
    }
PENDING(iq2_xxs) PENDING(iq2_xs) PENDING(iq2_s) PENDING(iq3_xxs) PENDING(iq3_s) PENDING(iq1_s)
PENDING(iq1_m) PENDING(iq4_nl) PENDING(iq4_xs)
}  // namespace gguftool::lower::detail
