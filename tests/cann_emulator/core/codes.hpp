// Error codes the emulation returns beyond those cann_api.hpp names (CANN 8.1.RC1's acl/acl_base.h,
// acl/error_codes/rt_error_codes.h and aclnn/opdev/op_errno.h, and ATB's atb/types.h ErrorType).
#pragma once

#include <cstdint>

#include "runtime/backends/ascend/cann_api.hpp"

namespace gguftool::cann_emulator {

using namespace gguftool::cann;

inline constexpr aclError kAclErrorUninitialize = 100001;        // ACL_ERROR_UNINITIALIZE
inline constexpr aclError kAclErrorRepeatFinalize = 100037;      // ACL_ERROR_REPEAT_FINALIZE
inline constexpr aclError kAclErrorRtContextNull = 107002;       // ACL_ERROR_RT_CONTEXT_NULL
inline constexpr aclError kAclErrorRtMemoryAllocation = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION

// atb::ErrorType values.
namespace atb_status {
inline constexpr int32_t kNoError = 0;
inline constexpr int32_t kInvalidParam = 1;
inline constexpr int32_t kInternalError = 3;
inline constexpr int32_t kRtFail = 4;
inline constexpr int32_t kInvalidInTensorNum = 5;
inline constexpr int32_t kInvalidTensorDtype = 6;
inline constexpr int32_t kInvalidTensorFormat = 7;
inline constexpr int32_t kInvalidTensorDim = 8;
inline constexpr int32_t kInvalidTensorSize = 9;
inline constexpr int32_t kInvalidTensorAddr = 14;
inline constexpr int32_t kInvalidTensorNum = 15;
inline constexpr int32_t kInvalidTensorDimNum = 16;
inline constexpr int32_t kInvalidContextAddr = 20;
inline constexpr int32_t kInvalidStream = 21;
inline constexpr int32_t kInvalidWorkspaceSize = 22;
inline constexpr int32_t kInvalidWorkspaceAddr = 23;
inline constexpr int32_t kInvalidOperationAddr = 24;
}  // namespace atb_status

}  // namespace gguftool::cann_emulator
