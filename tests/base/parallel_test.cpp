// The thread-count rule and the shapes on the pool: every unit covered once, ranges contiguous and
// no more than the grains, parts cut at the granule, the first exception (in range order) rethrown,
// nested calls, and results that do not depend on the thread count.
#include "gguftool/parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace gguftool {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(ThreadCount, ZeroMeansAllCoresAndCountsAreCapped) {
    EXPECT_EQ(thread_count(0), std::min(std::max(1u, std::thread::hardware_concurrency()), 256u));
    EXPECT_EQ(thread_count(1), 1u);
    EXPECT_EQ(thread_count(3), 3u);
    EXPECT_EQ(thread_count(256), 256u);
    EXPECT_EQ(thread_count(100000), 256u);
}

// The ranges a call hands out, sorted by begin.
Ranges ranges_of(uint64_t n, unsigned threads, uint64_t grain) {
    Ranges r;
    std::mutex m;
    parallel_for(n, threads, grain, [&](uint64_t b, uint64_t e) {
        std::lock_guard lock(m);
        r.emplace_back(b, e);
    });
    std::sort(r.begin(), r.end());
    return r;
}

TEST(ParallelFor, ContiguousRangesCoverEverything) {
    for (unsigned threads : {0u, 1u, 2u, 3u, 7u}) {
        for (uint64_t n : {1u, 5u, 100u, 1001u}) {
            for (uint64_t grain : {0u, 1u, 10u, 400u}) {
                SCOPED_TRACE(testing::Message()
                             << threads << " threads, n " << n << ", grain " << grain);
                const Ranges r = ranges_of(n, threads, grain);
                ASSERT_FALSE(r.empty());
                EXPECT_EQ(r.front().first, 0u);
                EXPECT_EQ(r.back().second, n);
                for (size_t i = 0; i + 1 < r.size(); ++i) EXPECT_EQ(r[i].second, r[i + 1].first);
                for (const auto &[b, e] : r) EXPECT_LT(b, e);
                // No more ranges than threads, nor than grains (n / grain, rounded up).
                EXPECT_LE(r.size(), threads == 0 ? thread_count(0) : threads);
                EXPECT_LE(r.size(),
                          (n + std::max<uint64_t>(grain, 1) - 1) / std::max<uint64_t>(grain, 1));
            }
        }
    }
    EXPECT_TRUE(ranges_of(0, 4, 1).empty());
}

TEST(ParallelFor, TheFirstRangesExceptionIsRethrownAfterAllFinish) {
    std::atomic<uint64_t> done{0};
    try {
        parallel_for(4, 4, 1, [&](uint64_t b, uint64_t e) {
            for (uint64_t i = b; i < e; ++i) {
                if (i == 1 || i == 3) throw std::runtime_error("unit " + std::to_string(i));
                ++done;
            }
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "unit 1");
    }
    EXPECT_EQ(done.load(), 2u);  // units 0 and 2 still ran
}

TEST(ForEachPart, PartsAreCutAtTheGranule) {
    std::vector<std::pair<uint64_t, uint64_t>> parts(3);
    for_each_part(1000, 64, 3, [&](unsigned p, uint64_t first, uint64_t last) {
        parts[p] = {first, last};
    });
    // 16 granules over 3 parts: 5, 5 and 6 granules, the last one short (1000 = 15 * 64 + 40).
    EXPECT_EQ(parts, (Ranges{{0, 320}, {320, 640}, {640, 1000}}));

    unsigned calls = 0;
    for_each_part(100, 64, 8, [&](unsigned, uint64_t, uint64_t) { ++calls; });
    EXPECT_EQ(calls, 2u);  // only two granules
    for_each_part(0, 64, 8, [&](unsigned p, uint64_t first, uint64_t last) {
        EXPECT_EQ(p, 0u);
        EXPECT_EQ(first, last);
    });
}

TEST(ForEachPart, ExceptionsOfLaterPartsGiveWayToEarlierOnes) {
    try {
        for_each_part(8, 1, 8, [](unsigned p, uint64_t, uint64_t) {
            if (p >= 5) throw std::runtime_error("part " + std::to_string(p));
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "part 5");
    }
}

// A sum computed over pieces, parts and ranges, nested inside each other, is the same for every
// thread count.
TEST(Pool, NestedCallsGiveTheSameResultForAnyThreadCount) {
    constexpr uint64_t kN = 1 << 16;
    std::vector<uint64_t> values(kN);
    std::iota(values.begin(), values.end(), 1);
    const uint64_t want = kN * (kN + 1) / 2;
    for (unsigned threads : {1u, 2u, 3u, 0u}) {
        std::vector<uint64_t> sums(16);
        run_pieces(threads, 16, [&](uint64_t piece) {
            std::atomic<uint64_t> s{0};
            const uint64_t base = piece * (kN / 16);
            parallel_for(kN / 16, threads, 256, [&](uint64_t b, uint64_t e) {
                uint64_t local = 0;
                for (uint64_t i = b; i < e; ++i) local += values[base + i];
                s += local;
            });
            sums[piece] = s;
        });
        EXPECT_EQ(std::accumulate(sums.begin(), sums.end(), uint64_t(0)), want) << threads;
    }
}

TEST(Pool, ConcurrentCallersEachGetEveryPiece) {
    std::vector<std::thread> callers;
    std::vector<uint64_t> counts(4);
    for (size_t c = 0; c < counts.size(); ++c)
        callers.emplace_back([&, c] {
            std::atomic<uint64_t> n{0};
            for (int round = 0; round < 50; ++round) run_pieces(3, 100, [&](uint64_t) { ++n; });
            counts[c] = n;
        });
    for (std::thread &t : callers) t.join();
    for (uint64_t n : counts) EXPECT_EQ(n, 5000u);
}

}  // namespace
}  // namespace gguftool
