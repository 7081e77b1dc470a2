// The thread pool and the range-splitting shapes on it.
#include "gguftool/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gguftool {
namespace {

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Shared by the caller and its helpers. A helper may reach it after the caller has returned (it
// then finds no piece left and never touches do_piece), hence shared ownership.
struct Job {
    std::atomic<uint64_t> next{0};
    uint64_t pieces = 0;
    std::atomic<unsigned> inside{0};  // threads between taking a piece number and finishing it
    const std::function<void(uint64_t)> *do_piece = nullptr;
};

void take_pieces(Job &job) {
    for (;;) {
        // Counted as inside before taking a number: whoever then sees all numbers taken and
        // `inside` zero knows every piece is finished.
        job.inside.fetch_add(1);
        const uint64_t p = job.next.fetch_add(1);
        if (p < job.pieces) (*job.do_piece)(p);
        job.inside.fetch_sub(1);
        if (p >= job.pieces) return;
    }
}

class ThreadPool {
public:
    ~ThreadPool() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        for (std::thread &t : workers_) t.join();
    }

    void run(unsigned helpers, uint64_t pieces, const std::function<void(uint64_t)> &do_piece) {
        auto job = std::make_shared<Job>();
        job->pieces = pieces;
        job->do_piece = &do_piece;
        {
            std::lock_guard lock(mutex_);
            while (workers_.size() < helpers) workers_.emplace_back([this] { serve(); });
            for (unsigned i = 0; i < helpers; ++i) queue_.push_back(job);
        }
        wake_.notify_all();
        take_pieces(*job);
        {
            // Requests no worker has picked up yet are withdrawn: there is nothing left to take.
            std::lock_guard lock(mutex_);
            std::erase(queue_, job);
        }
        // Wait for helpers still inside a piece. Pieces are short, so spin rather than sleep: a
        // sleeping caller on a busy machine may not get its CPU back for milliseconds.
        for (unsigned spins = 0; job->inside.load() != 0; ++spins) {
            if (spins < 1000)
                cpu_pause();
            else
                std::this_thread::yield();
        }
    }

private:
    void serve() {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping
            std::shared_ptr<Job> job = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            take_pieces(*job);
            job.reset();
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Job>> queue_;
    std::vector<std::thread> workers_;
    bool stopping_ = false;
};

// Runs do_part(i) for i in [0, parts) on up to `threads` threads and rethrows the first (by i)
// exception once all have finished.
void run_parts(unsigned threads, uint64_t parts, const std::function<void(uint64_t)> &do_part) {
    std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
    run_pieces(threads, parts, [&](uint64_t i) {
        try {
            do_part(i);
        } catch (...) {
            errors[size_t(i)] = std::current_exception();
        }
    });
    for (const std::exception_ptr &e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace

unsigned thread_count(unsigned requested) {
    const unsigned n = requested ? requested : std::max(1u, std::thread::hardware_concurrency());
    return std::min(n, kMaxThreads);
}

void run_pieces(unsigned threads, uint64_t pieces, const std::function<void(uint64_t)> &do_piece) {
    if (threads <= 1 || pieces <= 1) {
        for (uint64_t p = 0; p < pieces; ++p) do_piece(p);
        return;
    }
    static ThreadPool pool;
    pool.run(unsigned(std::min<uint64_t>(threads, pieces)) - 1, pieces, do_piece);
}

void parallel_for(uint64_t n, unsigned threads, uint64_t grain,
                  const std::function<void(uint64_t, uint64_t)> &fn) {
    if (n == 0) return;
    grain = std::max<uint64_t>(grain, 1);
    const uint64_t t = std::min<uint64_t>(thread_count(threads), (n + grain - 1) / grain);
    if (t <= 1) {
        fn(0, n);
        return;
    }
    run_parts(unsigned(t), t, [&](uint64_t i) {
        fn(uint64_t((unsigned __int128)n * i / t), uint64_t((unsigned __int128)n * (i + 1) / t));
    });
}

void for_each_part(uint64_t n, uint64_t granule, unsigned parts,
                   const std::function<void(unsigned, uint64_t, uint64_t)> &f) {
    const uint64_t granules = (n + granule - 1) / granule;
    parts = unsigned(std::clamp<uint64_t>(granules, 1, std::max(1u, parts)));
    const auto bounds = [&](uint64_t p) { return std::min(n, granules * p / parts * granule); };
    run_parts(std::min(parts, kMaxThreads), parts,
              [&](uint64_t p) { f(unsigned(p), bounds(p), bounds(p + 1)); });
}

}  // namespace gguftool
