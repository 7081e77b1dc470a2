// The text aclGetRecentErrMsg returns: every failing call of the emulation records one message
// naming the function and the problem (per thread, as CANN keeps it).
#pragma once

#include <string>
#include <string_view>

#include "core/export.hpp"
#include "core/text.hpp"

namespace gguftool::cann_emulator {

GGUFTOOL_EMU_EXPORT void record_error(std::string message);
// This thread's most recent message, or nullptr when nothing failed yet.
GGUFTOOL_EMU_EXPORT const char *recent_error();

// Records "function: problem" and returns `code`.
template <class Code>
Code fail(Code code, std::string_view function, std::string_view problem) {
    record_error(str(function, ": ", problem));
    return code;
}

}  // namespace gguftool::cann_emulator
