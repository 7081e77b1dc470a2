// aclnn's two phases, the parts every operator shares. Phase one (an operator's
// GetWorkspaceSize) captures copies of its tensors' views and its scalars into a kernel, holds the
// objects it was given until phase two, and creates a single-use executor; phase two checks the
// executor, the workspace and the stream, and enqueues the kernel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/emulator.hpp"
#include "core/export.hpp"

namespace gguftool::cann_emulator {

class GGUFTOOL_EMU_EXPORT ExecutorBuilder {
public:
    explicit ExecutorBuilder(std::string op) : op_(std::move(op)) {}
    ~ExecutorBuilder();  // releases the holds unless finish() made an executor
    ExecutorBuilder(const ExecutorBuilder &) = delete;
    ExecutorBuilder &operator=(const ExecutorBuilder &) = delete;

    // Marks a live object as needed until the launch.
    void hold(HandleKind kind, uintptr_t handle);
    // The device bytes a view's kernel reads or writes.
    void access(const View &v, bool write, std::string what);
    // The executor's handle (0 when the handle space is used up).
    uintptr_t finish(uint64_t workspace_size, StreamTask task, std::string log_line);

private:
    std::string op_;
    std::vector<std::pair<HandleKind, uintptr_t>> holds_;
    std::vector<Access> accesses_;
    bool finished_ = false;
};

// Releases the holds an executor (or a failed phase one) had.
GGUFTOOL_EMU_EXPORT void release_holds(Emulator &e,
                                       const std::vector<std::pair<HandleKind, uintptr_t>> &holds);

// Phase two of operator `op` ("aclnnAdd").
GGUFTOOL_EMU_EXPORT aclnnStatus launch_executor(std::string_view op, void *workspace,
                                                uint64_t workspace_size, aclOpExecutor *executor,
                                                aclrtStream stream);

// "" when `workspace` (of `given` bytes by the caller's word) holds `required` bytes of live device
// memory, else what is wrong.
GGUFTOOL_EMU_EXPORT std::string check_workspace(const Emulator &e, const void *workspace,
                                                uint64_t given, uint64_t required);

}  // namespace gguftool::cann_emulator
