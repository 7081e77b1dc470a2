// Splitting a range of blocks over threads, for the work the core does not thread itself
// (llama.cpp's row decoders, the comparison).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace gguftool::verify::detail {

inline unsigned thread_count(unsigned requested) {
    if (requested) return requested;
    return std::max(1u, std::thread::hardware_concurrency());
}

// Calls f(part, first, last) for `parts` consecutive ranges of [0, n), cut at multiples of
// `granule`. Part 0 runs on the calling thread. The first exception thrown is rethrown.
template <class F>
void for_each_part(uint64_t n, uint64_t granule, unsigned parts, F &&f) {
    const uint64_t granules = (n + granule - 1) / granule;
    parts = unsigned(std::clamp<uint64_t>(granules, 1, std::max(1u, parts)));
    const auto bounds = [&](unsigned p) { return std::min(n, granules * p / parts * granule); };
    std::vector<std::exception_ptr> errors(parts);
    const auto run = [&](unsigned p) {
        try {
            f(p, bounds(p), bounds(p + 1));
        } catch (...) {
            errors[p] = std::current_exception();
        }
    };
    {
        std::vector<std::jthread> threads;
        for (unsigned p = 1; p < parts; ++p) threads.emplace_back(run, p);
        run(0);
    }
    for (const std::exception_ptr &e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace gguftool::verify::detail
