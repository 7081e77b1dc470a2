// Splitting a loop over threads for the CPU backend's kernels.
#pragma once

#include <cstdint>
#include <functional>

namespace gguftool::runtime::cpu {

// Calls fn(begin, end) over contiguous ranges covering [0, n), on up to `threads` threads (0 = all
// cores), giving each at least `grain` units. The first exception thrown by any range is
// rethrown once all have finished.
void parallel_for(uint64_t n, unsigned threads, uint64_t grain,
                  const std::function<void(uint64_t begin, uint64_t end)> &fn);

}  // namespace gguftool::runtime::cpu
