// Loading CANN at run time: the libraries of CANN 8.1 (libascendcl.so, libnnopbase.so,
// libopapi.so) or of CANN 8.5 and later (libacl_rt.so, libnnopbase.so, libopapi_math.so,
// libopapi_nn.so), and ATB's libatb.so when present, found with dlopen and every symbol resolved up
// front (internal to the Ascend backend).
#pragma once

#include <string>
#include <vector>

#include "cann_api.hpp"

namespace gguftool::runtime::ascend {

struct Cann {
    // Every runtime and nnopbase function (all required).
#define GGUFTOOL_CANN_POINTER(name, ret, params) cann::fn::name *name = nullptr;
    GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_CANN_POINTER)
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_CANN_POINTER)
#undef GGUFTOOL_CANN_POINTER

    // Each aclnn operator's two phases; an operator is present only when both resolved.
#define GGUFTOOL_CANN_OPERATOR_POINTERS(name, library, params)                        \
    cann::fn::aclnn##name##GetWorkspaceSize *aclnn##name##GetWorkspaceSize = nullptr; \
    cann::fn::aclnnLaunch *aclnn##name = nullptr;
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_CANN_OPERATOR_POINTERS)
#undef GGUFTOOL_CANN_OPERATOR_POINTERS

    // ATB: all four functions, or none (has_atb false).
#define GGUFTOOL_CANN_ATB_POINTER(name, symbol, ret, params) \
    cann::fn::atb##name *atb##name = nullptr;
    GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_CANN_ATB_POINTER)
#undef GGUFTOOL_CANN_ATB_POINTER
    bool has_atb = false;

    std::string layout;                // "CANN 8.1 (libascendcl.so, libopapi.so)"
    std::vector<std::string> files;    // the libraries loaded, with their paths
    std::string emulation;             // the CANN emulation's description, empty for real CANN
    std::vector<std::string> missing;  // aclnn operators not exported ("aclnnRightShift")
};

// Loads CANN once per process (later calls return the same). Searches $GGUFTOOL_CANN_LIB_DIR,
// then the lib64 directories under $ASCEND_HOME_PATH and $ASCEND_TOOLKIT_HOME, then the system
// path; ATB in $ATB_HOME_PATH/lib, then $GGUFTOOL_CANN_LIB_DIR, then the system path. Throws Error
// naming each library looked for and every place searched when CANN is absent, or the symbol and
// file when a required function is missing.
const Cann &load_cann();

}  // namespace gguftool::runtime::ascend
