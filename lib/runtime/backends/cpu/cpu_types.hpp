// Element storage types of the CPU kernels and the dispatch from DataType to them (the runtime's
// one, dtype_dispatch.hpp).
#pragma once

#include "../../dtype_dispatch.hpp"
#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

using detail::BF16;
using detail::Bool;
using detail::F16;
using detail::TypeTag;
using detail::with_type;
using detail::with_value;
using detail::with_word;

}  // namespace gguftool::runtime::cpu
