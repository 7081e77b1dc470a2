// Helpers shared by the benchmarks (header only: every bench/*.cpp is its own program): llama.cpp-
// quantized input tiled to size, aligned output buffers, timing, medians and geometric means. (The
// bit-for-bit comparison is the kit's: floats.hpp.)
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "floats.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"
#include "llama_ref.hpp"

namespace gguftool::bench {

using Clock = std::chrono::steady_clock;

// The options of the per-format benchmarks (bench_dequant, bench_lower): --json, --format NAME (one
// quantized format), --reps N, --mib N, and one of the benchmark's own.
struct FormatOptions {
    bool json = false;
    std::optional<GgmlType> format;
    int reps = 7;
    size_t mib = 16;
};

// Says why the command line is wrong and how it goes ("[--json] [--format NAME] OWN [--reps N]
// [--mib N]"), and exits with 2.
[[noreturn]] inline void usage(const std::string &program, const std::string &own_usage,
                               const std::string &why) {
    std::fprintf(stderr, "%s: %s\nusage: %s [--json] [--format NAME] %s [--reps N] [--mib N]\n",
                 program.c_str(), why.c_str(), program.c_str(), own_usage.c_str());
    std::exit(2);
}

// Reads the shared options into `o`; an option of the benchmark's own goes to own(name, value),
// which returns false when it is none of its own.
template <class Own>
void parse_format_options(int argc, char **argv, const std::string &program,
                          const std::string &own_usage, FormatOptions &o, Own &&own) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= argc) usage(program, own_usage, a + " needs a value");
        const std::string v = argv[++i];
        if (a == "--format") {
            o.format = type_from_name(v);
            if (!o.format || !traits(*o.format).quantized)
                usage(program, own_usage, "unknown quantized format " + v);
        } else if (a == "--reps") {
            o.reps = std::max(1, std::stoi(v));
        } else if (a == "--mib") {
            o.mib = size_t(std::max(1, std::stoi(v)));
        } else if (!own(a, v)) {
            usage(program, own_usage, "unknown option " + a);
        }
    }
}

// llama.cpp's libggml-base.so, or an exit with 1 saying it did not load.
inline std::shared_ptr<const reference::Ggml> ggml_or_exit(const std::string &program) {
    auto g = reference::ggml();
    if (!g) {
        std::fprintf(stderr, "%s: llama.cpp's libggml-base.so did not load (run npm ci)\n",
                     program.c_str());
        std::exit(1);
    }
    return g;
}

// Output buffers aligned to a cache line, as the decoder's streaming stores want.
struct Free {
    void operator()(float *p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], Free>;
inline AlignedFloats aligned_floats(size_t n) {
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    AlignedFloats p(static_cast<float *>(std::aligned_alloc(64, bytes)));
    if (!p) throw std::bad_alloc();
    return p;
}

// A source of real quantized data: normally distributed weights quantized by llama.cpp (with an
// importance matrix where it needs one), 1024 blocks, tiled to the full size.
inline std::vector<uint8_t> make_input(const reference::Ggml &g, GgmlType t, size_t blocks) {
    const TypeTraits &tt = traits(t);
    const size_t src_blocks = std::min<size_t>(1024, blocks);
    const size_t per_row = 4096;  // multiple of every block size
    const size_t n = std::max(per_row, src_blocks * tt.block_size / per_row * per_row);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (float &v : values) v = normal(rng);
    std::vector<float> imatrix(per_row);
    std::uniform_real_distribution<float> weight(0.1f, 10.0f);
    for (float &w : imatrix) w = weight(rng);
    const std::vector<uint8_t> src = testkit::quantize_rows(
        g, t, values, per_row, testkit::requires_imatrix(g, t) ? imatrix : std::vector<float>{});
    std::vector<uint8_t> in(blocks * tt.type_size);
    for (size_t off = 0; off < in.size(); off += src.size())
        std::memcpy(in.data() + off, src.data(), std::min(src.size(), in.size() - off));
    return in;
}

template <class F>
inline double seconds(F &&f) {
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The middle of the sorted values (the upper one of two for an even count); 0 for none.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

inline double geomean(const std::vector<double> &v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0 : std::exp(s / double(v.size()));
}

}  // namespace gguftool::bench
