// A small process-wide pool of worker threads that help the calling thread through a job cut into
// pieces.
#pragma once

#include <cstdint>
#include <functional>

namespace gguftool::quant {

// Calls do_piece(p) once for every p in [0, pieces), on the calling thread and on up to
// threads - 1 pool workers at once; each thread takes the next untaken piece until none is left.
// Returns when every piece is done. The caller never waits for a worker that has not started a
// piece, so a busy machine that is slow to schedule a worker costs at most one piece of waiting.
// Workers are created on first need and reused. do_piece must not throw.
void run_pieces(unsigned threads, uint64_t pieces, const std::function<void(uint64_t)> &do_piece);

}  // namespace gguftool::quant
