// Phase one of an aclnn operator (its GetWorkspaceSize), the checks every operator makes. Checks
// run in order and the first failure wins: later ones are skipped and `status()` returns it, with
// aclGetRecentErrMsg naming the function and the problem.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/executor.hpp"
#include "core/text.hpp"
#include "opapi/operator_rules.hpp"

namespace gguftool::cann_emulator {

class PhaseOne {
public:
    // `op` is the operator's name ("aclnnAdd"). Locks the emulation and checks that a device is
    // set and the two out-parameters are not null.
    PhaseOne(std::string op, uint64_t *workspace_size, aclOpExecutor **executor);

    explicit operator bool() const { return status_ == kAclSuccess; }
    aclnnStatus status() const { return status_; }
    SocFamily family() const { return soc_ ? soc_->family : SocFamily::ascend910b; }

    // A tensor argument (null: 161001; not a live tensor, or its memory freed: 161002), held until
    // the launch. Its dtype goes into the call-log line, in the order of these calls.
    View tensor(const aclTensor *t, const char *name, bool written = false);
    // A scalar argument (null: 161001), held until the launch; optional_scalar allows null and
    // returns whether one was given.
    ScalarValue scalar(const aclScalar *s, const char *name);
    bool optional_scalar(const aclScalar *s, const char *name, ScalarValue &value);
    // A tensor list's tensors (the list is held).
    std::vector<View> tensor_list(const aclTensorList *l, const char *name);

    // 161002 with "problem" unless ok.
    bool check(bool ok, const std::string &problem);
    // 161002 naming the operator, the argument, its dtype and the SoC unless `allowed` has it.
    bool dtype_in(aclDataType d, const char *name, const rules::PerFamily &allowed);
    bool dtype_in(aclDataType d, const char *name, DtypeSet allowed);
    // 161002 "aclnnX is not supported on <SoC>" unless the family has the operator.
    bool available(const rules::PerFamily &family_dtypes);
    // The promoted type of `inputs` (PromoteType or CombineCategories), which must be one the
    // operator computes in; ACL_DT_UNDEFINED after a failure.
    aclDataType promote(aclDataType promoted, const std::string &inputs, DtypeSet allowed);
    // CanCast from the result type to out's dtype.
    bool castable(aclDataType result, aclDataType out);
    // The NumPy broadcast of `inputs` must be out's shape exactly.
    bool broadcasts_to(std::initializer_list<std::pair<const View *, const char *>> inputs,
                       const View &out);
    bool same_shape(const View &a, const char *a_name, const View &b, const char *b_name);

    // The executor: writes *workspace_size and *executor. The log line is the operator, the
    // tensors' dtypes and where CANN runs it.
    aclnnStatus finish(uint64_t workspace, bool aicore, StreamTask task);

private:
    bool failed(aclnnStatus code, const std::string &problem);

    std::unique_lock<std::recursive_mutex> lock_;
    std::string op_;
    uint64_t *workspace_out_;
    aclOpExecutor **executor_out_;
    aclnnStatus status_ = kAclSuccess;
    const SocProfile *soc_ = nullptr;
    ExecutorBuilder builder_;
    std::string dtypes_;  // " FLOAT16 FLOAT16" for the log line
};

// Rank limit of aclnn tensors.
inline constexpr size_t kMaxRank = 8;

// Workspace sizes: a staging copy of `v`, rounded up to 32 bytes; and a contiguous copy of every
// strided view (l0op::Contiguous's temporaries).
uint64_t staging_bytes(const View &v);
uint64_t contiguous_copies(std::initializer_list<const View *> views);

// dim in [-rank, rank) made non-negative, or -1.
int64_t normalize_dim(int64_t dim, size_t rank);

}  // namespace gguftool::cann_emulator

// Phase two of operator `name`: every operator's is the same check and enqueue.
#define GGUFTOOL_EMU_PHASE_TWO(name)                                                             \
    aclnnStatus aclnn##name(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,    \
                            aclrtStream stream) {                                                \
        return gguftool::cann_emulator::launch_executor("aclnn" #name, workspace, workspaceSize, \
                                                        executor, stream);                       \
    }
