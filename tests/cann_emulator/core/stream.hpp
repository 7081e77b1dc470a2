// Streams: work (an aclnn executor or an ATB Execute) is enqueued on a stream and runs only at
// aclrtSynchronizeStream, in launch order. While queued, the device bytes it reads and writes are
// known, so copies and frees that race with it are refused.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/device_memory.hpp"
#include "core/export.hpp"

namespace gguftool::cann_emulator {

struct Access {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    bool write = false;
    std::string what;  // "self", "out", "workspace"
};

// Computes on emulated device memory; returns "" or what went wrong (an execution error).
using StreamTask = std::function<std::string(const DeviceMemory &)>;

struct Work {
    std::string name;  // "aclnnAdd", "atb::OnehotOperation"
    std::vector<Access> accesses;
    StreamTask task;
    uintptr_t workspace = 0;
    uint64_t workspace_size = 0;
    uint64_t sequence = 0;  // 1 for the first work launched on its stream
};

struct Stream {
    int device = 0;
    std::deque<Work> queue;
    uint64_t launched = 0;
};

class GGUFTOOL_EMU_EXPORT Streams {
public:
    std::unordered_map<uintptr_t, Stream> live;

    // The first queued work that makes accessing [begin, end) unsafe now, described; "" if none.
    // Reading conflicts with queued writes; writing with queued reads and writes.
    std::string conflict(uintptr_t begin, uintptr_t end, bool writing) const;
    // Queued work on `device`'s streams (-1: any), described; "" if none.
    std::string pending_on(int device) const;
    // Runs `stream`'s queue in order. On an execution error the rest of the queue is dropped and
    // the error described ("" on success).
    static std::string synchronize(Stream &stream, const DeviceMemory &memory);
};

// "aclnnAdd (launch 3 on stream 0x...)"
GGUFTOOL_EMU_EXPORT std::string describe_work(const Work &w, uintptr_t stream);

}  // namespace gguftool::cann_emulator
