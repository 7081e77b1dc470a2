// bench_hash: `gguftool hash` on a generated multi-GB GGUF, side by side with Debian's xxhsum
// (package xxhash) and sha256sum (coreutils) on the same file, in one run. Targets: --xxh64 at
// least 0.8x xxhsum -H64's throughput on one thread and 1.6x on two; --sha256 at least 0.8x
// sha256sum's on one thread. Every program reads the same file from the page cache (written,
// synced and read once first); repetitions are interleaved and each program's best is reported
// (other work on the machine only ever slows a run down), with the load average before and after.
//
// Usage: bench_hash [--gib N] [--dir DIR] [--reps N] [--gguftool PATH]
// The file goes to a fresh directory under DIR (default $TMPDIR or /tmp) and is deleted at the end.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_setup.hpp"
#include "q4_0_model.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gguftool::bench;

// A llama-like layout (rows of 4096 elements): per block the norms (one row), q and o (4096 rows),
// k and v (1024), gate, up and down (11008); token_embd and output of 32000 rows. About 100 MB a
// block; as many blocks as make `bytes`.
std::vector<Q4_0Tensor> llama_like(double bytes) {
    const uint64_t block_rows = 2 + 2 * 4096 + 2 * 1024 + 3 * 11008;
    const double ends = 2.0 * 32000 * kQ4_0RowBytes;
    const int blocks = std::max(1, int((bytes - ends) / double(block_rows * kQ4_0RowBytes) + 0.5));
    std::vector<Q4_0Tensor> t = {
        {"token_embd.weight", 32000}, {"output_norm.weight", 1}, {"output.weight", 32000}};
    for (int b = 0; b < blocks; ++b) {
        const auto add = [&](const char *name, uint64_t rows) {
            t.push_back({fmt::format("blk.{}.{}", b, name), rows});
        };
        add("attn_norm.weight", 1);
        add("attn_q.weight", 4096);
        add("attn_k.weight", 1024);
        add("attn_v.weight", 1024);
        add("attn_output.weight", 4096);
        add("ffn_norm.weight", 1);
        add("ffn_gate.weight", 11008);
        add("ffn_up.weight", 11008);
        add("ffn_down.weight", 11008);
    }
    return t;
}

std::string find_program(const char *name) {
    for (const char *dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
        const std::string p = std::string(dir) + "/" + name;
        if (::access(p.c_str(), X_OK) == 0) return p;
    }
    throw std::runtime_error(std::string(name) + " not found (install Debian's package: " +
                             (std::string(name) == "xxhsum" ? "xxhash" : "coreutils") + ")");
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    return one + " " + five + " " + fifteen;
}

}  // namespace

int main(int argc, char **argv) {
    Setup s;
    s.own = {{"--reps", "5"}};
    if (const int rc = setup(argc, argv, "bench_hash", s, "[--reps N]")) return rc;
    const double gib = s.gib;
    const int reps = std::max(1, std::atoi(s.own["--reps"].c_str()));
    const std::string &gguftool = s.gguftool, &dir = s.dir;
    const std::string gguf = dir + "/model.gguf";
    int rc = 0;
    try {
        const std::string xxhsum = find_program("xxhsum"), sha256sum = find_program("sha256sum");
        const std::vector<Q4_0Tensor> tensors = llama_like(gib * double(1ull << 30));
        fmt::print("generating {} q4_0 tensors in {} ...\n", tensors.size(), gguf);
        write_q4_0_model(gguf, tensors);
        warm_cache(gguf);
        const double bytes = double(fs::file_size(gguf));
        fmt::print("input: {:.2f} GiB, {} repetitions, interleaved; load average {}\n",
                   bytes / double(1ull << 30), reps, load_average());

        struct Case {
            std::string label;
            std::vector<std::string> argv;
        };
        const auto hash = [&](std::vector<std::string> opts) {
            std::vector<std::string> a = {gguftool, "hash"};
            a.insert(a.end(), opts.begin(), opts.end());
            a.push_back(gguf);
            return a;
        };
        const std::vector<Case> cases = {
            {"xxhsum -H64", {xxhsum, "-H64", gguf}},
            {"hash --xxh64 (1 thread)", hash({"--xxh64", "--threads", "1"})},
            {"hash --xxh64 (2 threads)", hash({"--xxh64", "--threads", "2"})},
            {"hash --xxh64 --no-layer (1 thread)",
             hash({"--xxh64", "--no-layer", "--threads", "1"})},
            {"hash --xxh64 --no-layer (2 threads)",
             hash({"--xxh64", "--no-layer", "--threads", "2"})},
            {"sha256sum", {sha256sum, gguf}},
            {"hash --sha256 (1 thread)", hash({"--sha256", "--threads", "1"})},
        };
        std::map<std::string, double> best;
        for (int r = 0; r < reps; ++r)
            for (const Case &c : cases) {
                const ChildRun run = run_child(c.argv, true);
                if (run.status != 0)
                    throw std::runtime_error(c.label + " failed (exit " +
                                             std::to_string(run.status) + ")");
                const auto [it, first] = best.try_emplace(c.label, run.seconds);
                if (!first) it->second = std::min(it->second, run.seconds);
            }

        const auto gbs = [&](const std::string &label) { return bytes / best[label] / 1e9; };
        fmt::print("load average after: {}\n", load_average());
        fmt::print("\n{:<38} {:>9} {:>9}\n", "program", "best s", "GB/s");
        for (const Case &c : cases)
            fmt::print("{:<38} {:9.3f} {:9.2f}\n", c.label, best[c.label], gbs(c.label));
        const auto ratio = [&](const char *what, const std::string &ours, const std::string &theirs,
                               double target) {
            const double x = gbs(ours) / gbs(theirs);
            fmt::print("{:<48} {:5.2f}x (target >= {:.1f}x: {})\n", what, x, target,
                       x >= target ? "met" : "NOT met");
        };
        fmt::print("\n");
        ratio("--xxh64, 1 thread / xxhsum", "hash --xxh64 (1 thread)", "xxhsum -H64", 0.8);
        ratio("--xxh64, 2 threads / xxhsum", "hash --xxh64 (2 threads)", "xxhsum -H64", 1.6);
        ratio("--sha256, 1 thread / sha256sum", "hash --sha256 (1 thread)", "sha256sum", 0.8);
        fmt::print("{:<48} {:5.2f}x, {:.2f}x (1, 2 threads; no target)\n",
                   "--xxh64 --no-layer / xxhsum",
                   gbs("hash --xxh64 --no-layer (1 thread)") / gbs("xxhsum -H64"),
                   gbs("hash --xxh64 --no-layer (2 threads)") / gbs("xxhsum -H64"));
        fmt::print(
            "(GB/s of the file's {:.0f} bytes for every program; gguftool hashes its tensor "
            "data, all but a few KiB, and twice without --no-layer: per tensor and as the "
            "model)\n",
            bytes);
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_hash: {}\n", e.what());
        rc = 1;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}
