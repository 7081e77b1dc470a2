// bench_copy: gguftool's writers against `cp` on a generated multi-GB GGUF, in one run with the
// contenders interleaved round by round. Every writer copies tensor bytes with copy_file_range
// (OutputFile::copy_from), so each should reach at least 0.9x the throughput of cp. Prints the
// best time of each, its GB/s (input bytes per second), its ratio to cp and its peak RSS.
//
// Usage: bench_copy [--gib N] [--dir DIR] [--gguftool PATH] [--rounds R] [--baseline PATH]
// --baseline: also time `to-onnx` of another gguftool build (say, before a change).
// The files go to a fresh directory under DIR (default $TMPDIR or /tmp; room for about three
// times the model) and are deleted at the end. Before each timed run the input is read (page
// cache warm) and the file system synced (no earlier run's writeback in the way).
//
// To add a writer, add an entry to `contenders` in main: its command line and the outputs to
// delete after each run.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_setup.hpp"
#include "q4_0_model.hpp"

namespace fs = std::filesystem;
using namespace gguftool::bench;

namespace {

struct Contender {
    std::string name;
    std::vector<std::string> argv;
    std::vector<std::string> outputs;  // removed after each run; "prefix*": files starting so
};

struct Result {
    std::vector<double> seconds;  // wall time of each run
    double cpu = 1e30;            // the least CPU time of a run
    long rss_kib = 0;

    double best() const { return *std::min_element(seconds.begin(), seconds.end()); }
    double median() const {
        std::vector<double> v = seconds;
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    }
};

void remove_outputs(const std::string &dir, const std::vector<std::string> &outputs) {
    for (const std::string &o : outputs) {
        if (o.ends_with("*")) {  // a prefix: every file of the directory that starts with it
            const std::string prefix = o.substr(0, o.size() - 1);
            for (const auto &e : fs::directory_iterator(dir))
                if (e.path().string().starts_with(prefix)) fs::remove(e.path());
        } else {
            fs::remove(o);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    Setup s;
    s.own = {{"--rounds", "8"}, {"--baseline", ""}};  // 8: two of each position
    if (const int rc = setup(argc, argv, "bench_copy", s, "[--rounds R] [--baseline PATH]"))
        return rc;
    const double gib = s.gib;
    const int rounds = std::max(1, std::atoi(s.own["--rounds"].c_str()));
    const std::string &gguftool = s.gguftool, &baseline = s.own["--baseline"], &dir = s.dir;
    const std::string model = dir + "/model.gguf";
    int rc = 0;
    try {
        const int tensors = uniform_tensors_for(gib);
        fmt::print("generating {} q4_0 tensors in {} ...\n", tensors, model);
        write_uniform_q4_0_model(model, tensors);
        const double bytes = double(fs::file_size(model));
        fmt::print("input: {:.2f} GiB, {} rounds\n", bytes / double(1ull << 30), rounds);
        // Shards of about a quarter of the model each (at least two).
        const uint64_t shard_bytes =
            std::max<uint64_t>(uint64_t(bytes) / 4 + 1, kUniformTensorBytes * 2);
        const std::string shards = dir + "/shard";
        std::vector<Contender> contenders = {
            {"cp", {"/bin/cp", model, dir + "/copy.gguf"}, {dir + "/copy.gguf"}},
            {"split",
             {gguftool, "split", model, dir + "/split", "--max-size", std::to_string(shard_bytes)},
             {dir + "/split-*"}},
            {"merge",
             {gguftool, "merge", "", dir + "/merged.gguf"},
             {dir + "/merged.gguf"}},  // its first shard is filled in below
            {"to-onnx",
             {gguftool, "to-onnx", model, dir + "/model.onnx", "--external-data", "--quiet"},
             {dir + "/model.onnx", dir + "/model.onnx.data"}},
            {"edit",
             {gguftool, "edit", model, "-o", dir + "/edited.gguf", "--set",
              "general.name=string:edited"},
             {dir + "/edited.gguf"}},
            // q4_0: every block's f16 scale reversed, the data converted rather than copied.
            {"convert-endian",
             {gguftool, "convert-endian", model, dir + "/big-endian.gguf", "--to", "big"},
             {dir + "/big-endian.gguf"}},
        };
        if (!baseline.empty())
            contenders.push_back(
                {"to-onnx@baseline",
                 {baseline, "to-onnx", model, dir + "/base.onnx", "--external-data", "--quiet"},
                 {dir + "/base.onnx", dir + "/base.onnx.data"}});
        // merge's input: the model's shards, made once.
        const ChildRun made = run_child(
            {gguftool, "split", model, shards, "--max-size", std::to_string(shard_bytes)}, true);
        if (made.status != 0) throw std::runtime_error("gguftool split (merge's input) failed");
        std::string first_shard;
        for (const auto &e : fs::directory_iterator(dir))
            if (e.path().filename().string().starts_with("shard-00001-of-"))
                first_shard = e.path().string();

        std::map<std::string, Result> results;
        for (int round = 0; round < rounds; ++round) {
            // Each round starts with the next contender: every one runs in every position (the
            // first of a round was measured up to 3x slower, whoever it was).
            std::vector<Contender> order = contenders;
            std::rotate(order.begin(), order.begin() + round % order.size(), order.end());
            for (Contender c : order) {
                if (c.name == "merge") {
                    c.argv[2] = first_shard;
                    warm_cache(first_shard);
                    for (const auto &e : fs::directory_iterator(dir))
                        if (e.path().filename().string().starts_with("shard-"))
                            warm_cache(e.path().string());
                } else {
                    warm_cache(model);
                }
                ::sync();
                const ChildRun r = run_child(c.argv, true);
                if (std::getenv("BENCH_VERBOSE"))
                    fmt::print("  round {} {}: {:.3f} s, cpu {:.3f} s\n", round, c.name, r.seconds,
                               r.cpu_seconds);
                if (r.status != 0) throw std::runtime_error(c.name + " failed");
                Result &res = results[c.name];
                res.seconds.push_back(r.seconds);
                res.cpu = std::min(res.cpu, r.cpu_seconds);
                res.rss_kib = std::max(res.rss_kib, r.max_rss_kib);
                remove_outputs(dir, c.outputs);
            }
        }
        // Best and median of the rounds: on a shared machine the kernel's copying time varies
        // run to run (up to several times for the same copy), for cp and gguftool alike.
        const Result &cp = results["cp"];
        fmt::print("{:<17} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9} {:>8} {:>12}\n", "", "best s",
                   "GB/s", "vs cp", "median s", "GB/s", "vs cp", "cpu s", "peak RSS");
        for (const Contender &c : contenders) {
            const Result &r = results[c.name];
            const double best = cp.best() / r.best(), median = cp.median() / r.median();
            fmt::print(
                "{:<17} {:>8.2f} {:>8.2f} {:>7.2f}x {:>9.2f} {:>8.2f} {:>8.2f}x {:>8.2f} "
                "{:>8.1f} MiB{}\n",
                c.name, r.best(), bytes / r.best() / 1e9, best, r.median(),
                bytes / r.median() / 1e9, median, r.cpu, double(r.rss_kib) / 1024,
                c.name == "cp" || std::max(best, median) >= 0.9 ? "" : "  (below the 0.9x target)");
        }
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_copy: {}\n", e.what());
        rc = 1;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}
