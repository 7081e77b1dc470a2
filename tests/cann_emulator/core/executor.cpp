#include "core/executor.hpp"

#include "core/errors.hpp"

namespace gguftool::cann_emulator {
namespace {

Holds *holds_of(Emulator &e, HandleKind kind, uintptr_t handle) {
    Objects &o = e.objects;
    switch (kind) {
        case HandleKind::tensor:
            if (auto it = o.tensors.find(handle); it != o.tensors.end()) return &it->second.holds;
            break;
        case HandleKind::scalar:
            if (auto it = o.scalars.find(handle); it != o.scalars.end()) return &it->second.holds;
            break;
        case HandleKind::tensor_list:
            if (auto it = o.lists.find(handle); it != o.lists.end()) return &it->second.holds;
            break;
        default:
            break;
    }
    return nullptr;
}

}  // namespace

void release_holds(Emulator &e, const std::vector<std::pair<HandleKind, uintptr_t>> &holds) {
    for (const auto &[kind, handle] : holds)
        if (Holds *h = holds_of(e, kind, handle)) --h->count;
}

ExecutorBuilder::~ExecutorBuilder() {
    if (!finished_) release_holds(Emulator::instance(), holds_);
}

void ExecutorBuilder::hold(HandleKind kind, uintptr_t handle) {
    if (Holds *h = holds_of(Emulator::instance(), kind, handle)) {
        ++h->count;
        h->latest = op_;
        holds_.emplace_back(kind, handle);
    }
}

void ExecutorBuilder::access(const View &v, bool write, std::string what) {
    if (!v.empty()) accesses_.push_back({v.first_byte(), v.end_byte(), write, std::move(what)});
}

uintptr_t ExecutorBuilder::finish(uint64_t workspace_size, StreamTask task, std::string log_line) {
    Emulator &e = Emulator::instance();
    const uintptr_t handle = e.handles.issue(HandleKind::executor);
    if (!handle) return 0;
    Executor x;
    x.op = op_;
    x.work.name = op_;
    x.work.accesses = std::move(accesses_);
    x.work.task = std::move(task);
    x.work.workspace_size = workspace_size;
    x.holds = std::move(holds_);
    x.log_line = std::move(log_line);
    e.executors.emplace(handle, std::move(x));
    finished_ = true;
    return handle;
}

std::string check_workspace(const Emulator &e, const void *workspace, uint64_t given,
                            uint64_t required) {
    if (required == 0) return "";
    if (given < required)
        return str("workspaceSize ", given, " is smaller than the ", required,
                   " bytes phase one asked for");
    if (!workspace) return str("workspace is null but ", required, " bytes are needed");
    if (std::string why = e.memory.check(reinterpret_cast<uintptr_t>(workspace), required);
        !why.empty())
        return str("workspace of ", required, " bytes: ", why);
    return "";
}

aclnnStatus launch_executor(std::string_view op, void *workspace, uint64_t workspace_size,
                            aclOpExecutor *executor, aclrtStream stream) {
    Emulator &e = Emulator::instance();
    auto lock = e.lock();
    if (e.require_device(op)) return kAclnnErrRuntimeError;
    if (!executor) return fail(kAclnnErrParamNullptr, op, "executor is null");
    const uintptr_t handle = reinterpret_cast<uintptr_t>(executor);
    auto it = e.executors.find(handle);
    if (it == e.executors.end())
        return fail(kAclnnErrParamInvalid, op, not_live(e.handles, handle, HandleKind::executor));
    Executor &x = it->second;
    if (x.op != op)
        return fail(kAclnnErrParamInvalid, op,
                    str("executor ", hex(handle), " was made by ", x.op,
                        "GetWorkspaceSize, not by this operator's"));
    const uintptr_t s = reinterpret_cast<uintptr_t>(stream);
    auto st = e.streams.live.find(s);
    if (st == e.streams.live.end())
        return fail(kAclnnErrParamInvalid, op,
                    stream ? not_live(e.handles, s, HandleKind::stream)
                           : "stream is null (the emulation has no default stream: pass one from "
                             "aclrtCreateStream)");
    if (std::string why = check_workspace(e, workspace, workspace_size, x.work.workspace_size);
        !why.empty())
        return fail(kAclnnErrParamInvalid, op, why);
    // Memory freed since phase one.
    for (const Access &a : x.work.accesses)
        if (std::string why = e.memory.check(a.begin, a.end - a.begin); !why.empty())
            return fail(kAclnnErrParamInvalid, op, str(a.what, ": ", why));

    Work w = std::move(x.work);
    if (w.workspace_size) {
        w.workspace = reinterpret_cast<uintptr_t>(workspace);
        w.accesses.push_back({w.workspace, w.workspace + w.workspace_size, true, "workspace"});
    }
    w.sequence = ++st->second.launched;
    release_holds(e, x.holds);
    e.log_call(x.log_line);
    st->second.queue.push_back(std::move(w));
    e.executors.erase(it);
    return kAclSuccess;
}

}  // namespace gguftool::cann_emulator
