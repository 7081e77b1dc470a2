// Splitting work over threads: the one thread-count rule and one process-wide pool, with the
// shapes the rooms need layered on it (pieces taken from a counter; contiguous ranges with a
// grain; parts cut at a granule).
#pragma once

#include <cstdint>
#include <functional>

namespace gguftool {

// More threads than this are never started, whatever is asked for.
inline constexpr unsigned kMaxThreads = 256;

// The thread count for a `threads` option: 0 means all cores (at least 1), and every count is
// capped at kMaxThreads. Callers cap further by how much work there is.
unsigned thread_count(unsigned requested);

// Calls do_piece(p) once for every p in [0, pieces), on the calling thread and on up to
// threads - 1 pool workers at once; each thread takes the next untaken piece until none is left.
// Returns when every piece is done. The caller never waits for a worker that has not started a
// piece, so a busy machine that is slow to schedule a worker costs at most one piece of waiting.
// Workers are created on first need and reused; calls may nest. `threads` is used as given (1 or
// 0: the calling thread alone). do_piece must not throw.
void run_pieces(unsigned threads, uint64_t pieces, const std::function<void(uint64_t)> &do_piece);

// Calls fn(begin, end) over contiguous, nearly equal ranges covering [0, n): as many as
// thread_count(threads) but no more than n / grain (rounded up), each on its own thread. Once all
// ranges have finished, the exception of the first range (in range order) that threw is
// rethrown.
void parallel_for(uint64_t n, unsigned threads, uint64_t grain,
                  const std::function<void(uint64_t begin, uint64_t end)> &fn);

// Calls f(part, first, last) for `parts` consecutive non-empty ranges of [0, n) (fewer if there
// are fewer granules; one empty part if n is 0), cut at multiples of `granule`, on up to
// min(parts, kMaxThreads) threads. Exceptions as for parallel_for.
void for_each_part(uint64_t n, uint64_t granule, unsigned parts,
                   const std::function<void(unsigned part, uint64_t first, uint64_t last)> &f);

}  // namespace gguftool
