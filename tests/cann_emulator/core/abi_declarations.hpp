// The CANN functions the public libraries define, declared from cann_api.hpp's X-macro lists with
// default visibility. A definition whose type differs from the list's is a compile error
// ("conflicting declaration of C function"), so the emulation cannot drift from the declarations
// the backend calls through.
#pragma once

#include "core/export.hpp"
#include "runtime/backends/ascend/cann_api.hpp"

#define GGUFTOOL_EMU_DECLARE_FUNCTION(name, ret, params) \
    extern "C" GGUFTOOL_EMU_EXPORT gguftool::cann::fn::name name;

#define GGUFTOOL_EMU_DECLARE_OPERATOR(name, library, params)                         \
    extern "C" GGUFTOOL_EMU_EXPORT gguftool::cann::fn::aclnn##name##GetWorkspaceSize \
        aclnn##name##GetWorkspaceSize;                                               \
    extern "C" GGUFTOOL_EMU_EXPORT gguftool::cann::fn::aclnn##name aclnn##name;

// ATB's C++ functions under their mangled names (GCC asm labels), as gguftool_emu_atb<name>.
#define GGUFTOOL_EMU_DECLARE_ATB_FUNCTION(name, symbol, ret, params) \
    GGUFTOOL_EMU_EXPORT gguftool::cann::fn::atb##name gguftool_emu_atb##name __asm__(symbol);
