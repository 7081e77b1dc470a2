// parallel_for: plain std::threads per call; kernels are large enough that starting them is noise.
#include "parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gguftool::runtime::cpu {

void parallel_for(uint64_t n, unsigned threads, uint64_t grain,
                  const std::function<void(uint64_t, uint64_t)> &fn) {
    if (n == 0) return;
    uint64_t t = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    t = std::min<uint64_t>(
        {t, 256, (n + std::max<uint64_t>(grain, 1) - 1) / std::max<uint64_t>(grain, 1)});
    if (t <= 1) {
        fn(0, n);
        return;
    }
    std::exception_ptr error;
    std::mutex mutex;
    const auto part = [&](uint64_t i) {
        const uint64_t begin = uint64_t((unsigned __int128)n * i / t);
        const uint64_t end = uint64_t((unsigned __int128)n * (i + 1) / t);
        try {
            fn(begin, end);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!error) error = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(size_t(t - 1));
    for (uint64_t i = 1; i < t; ++i) pool.emplace_back(part, i);
    part(0);
    for (std::thread &th : pool) th.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace gguftool::runtime::cpu
