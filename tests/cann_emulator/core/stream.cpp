#include "core/stream.hpp"

#include <cstring>

#include "core/text.hpp"

namespace gguftool::cann_emulator {

// What queued work writes into its workspace before it computes: a workspace the caller also
// uses for data is then caught.
constexpr uint8_t kWorkspaceScribble = 0x5A;

std::string describe_work(const Work &w, uintptr_t stream) {
    return str(w.name, " (launch ", w.sequence, " on stream ", hex(stream), ")");
}

std::string Streams::conflict(uintptr_t begin, uintptr_t end, bool writing) const {
    if (begin >= end) return "";
    for (const auto &[handle, s] : live) {
        for (const Work &w : s.queue) {
            for (const Access &a : w.accesses) {
                if (a.begin >= end || begin >= a.end || (!writing && !a.write)) continue;
                return str(describe_work(w, handle), " is still pending and ",
                           a.write ? "writes" : "reads", " its ", a.what, " at ", hex(a.begin),
                           "..", hex(a.end), " (call aclrtSynchronizeStream first)");
            }
        }
    }
    return "";
}

std::string Streams::pending_on(int device) const {
    for (const auto &[handle, s] : live)
        if ((device < 0 || s.device == device) && !s.queue.empty())
            return str(s.queue.size(), " operation(s) pending on stream ", hex(handle),
                       ", the first ", describe_work(s.queue.front(), handle));
    return "";
}

std::string Streams::synchronize(Stream &stream, const DeviceMemory &memory) {
    std::string error;
    while (!stream.queue.empty()) {
        const Work w = std::move(stream.queue.front());
        stream.queue.pop_front();
        if (!error.empty()) continue;  // dropped after an execution error
        if (w.workspace_size)
            std::memset(memory.host(w.workspace), kWorkspaceScribble, w.workspace_size);
        const std::string e = w.task(memory);
        if (!e.empty())
            error =
                str(w.name, " (launch ", w.sequence, " on this stream) failed on the device: ", e);
    }
    return error;
}

}  // namespace gguftool::cann_emulator
