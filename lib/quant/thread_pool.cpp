#include "thread_pool.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gguftool::quant {
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

}  // namespace

void run_pieces(unsigned threads, uint64_t pieces, const std::function<void(uint64_t)> &do_piece) {
    if (threads <= 1) {
        for (uint64_t p = 0; p < pieces; ++p) do_piece(p);
        return;
    }
    static ThreadPool pool;
    pool.run(threads - 1, pieces, do_piece);
}

}  // namespace gguftool::quant
