// bench_to_onnx: `gguftool to-onnx --external-data` (packed mode) on a generated multi-GB GGUF,
// against `cp` of the same file in the same run. Prints both throughputs, their ratio (target:
// at least 0.9x of cp) and the peak RSS of the conversion process.
//
// Usage: bench_to_onnx [--gib N] [--dir DIR] [--gguftool PATH] [--mode packed|unpack]
// The files go to a fresh directory under DIR (default $TMPDIR or /tmp) and are deleted at the end.
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_setup.hpp"
#include "q4_0_model.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gguftool::bench;

}  // namespace

int main(int argc, char **argv) {
    Setup s;
    s.gib = 3.0;
    s.own = {{"--mode", "packed"}};
    if (const int rc = setup(argc, argv, "bench_to_onnx", s, "[--mode M]")) return rc;
    const double gib = s.gib;
    const std::string &gguftool = s.gguftool, &mode = s.own["--mode"], &dir = s.dir;
    const int tensors = uniform_tensors_for(gib);
    const std::string gguf = dir + "/model.gguf", copy = dir + "/copy.gguf",
                      onnx = dir + "/model.onnx";
    int rc = 0;
    try {
        fmt::print("generating {} q4_0 tensors in {} ...\n", tensors, gguf);
        write_uniform_q4_0_model(gguf, tensors);
        const double bytes = double(fs::file_size(gguf));
        fmt::print("input: {:.2f} GiB\n", bytes / double(1ull << 30));

        // Two rounds, alternating, keeping each side's best: both read the same (cached) input.
        double cp_best = 1e30, onnx_best = 1e30;
        long rss = 0;
        for (int round = 0; round < 2; ++round) {
            const ChildRun c = run_child({"/bin/cp", gguf, copy});
            if (c.status != 0) throw std::runtime_error("cp failed");
            cp_best = std::min(cp_best, c.seconds);
            fs::remove(copy);
            const ChildRun o = run_child(
                {gguftool, "to-onnx", gguf, onnx, "--mode", mode, "--external-data", "--quiet"});
            if (o.status != 0) throw std::runtime_error("gguftool to-onnx failed");
            onnx_best = std::min(onnx_best, o.seconds);
            rss = std::max(rss, o.max_rss_kib);
            const double out = double(fs::file_size(onnx + ".data"));
            if (round == 0)
                fmt::print("output: {} ({:.1f} KiB) + model.onnx.data ({:.2f} GiB)\n", "model.onnx",
                           double(fs::file_size(onnx)) / 1024, out / double(1ull << 30));
            fs::remove(onnx);
            fs::remove(onnx + ".data");
        }
        const double gbs = 1e9;
        fmt::print("cp:                   {:6.2f} s  {:6.2f} GB/s\n", cp_best,
                   bytes / cp_best / gbs);
        fmt::print("to-onnx --{:<11} {:6.2f} s  {:6.2f} GB/s\n", mode, onnx_best,
                   bytes / onnx_best / gbs);
        fmt::print("ratio to cp:          {:.2f}x (target >= 0.9x)\n", cp_best / onnx_best);
        fmt::print("peak RSS of to-onnx:  {:.1f} MiB (limit 256 MiB)\n", double(rss) / 1024);
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_to_onnx: {}\n", e.what());
        rc = 1;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}
