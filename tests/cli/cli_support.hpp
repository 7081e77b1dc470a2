// Helpers for the CLI tests: running the built gguftool, writing files with llama.cpp's own writer,
// and reading what llama.cpp reports about a file.
#pragma once

#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gguf_test_support.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/types.hpp"
#include "llama_ref.hpp"
#include "process.hpp"

namespace gguftool::test {

using RunResult = testkit::ProcessResult;
using Spawned = testkit::Child;
// The test kit's names this room uses unqualified.
using testkit::dir_entries;
using testkit::filler;
using testkit::finish;
using testkit::ggml;
using testkit::kSample;
using testkit::llama;
using testkit::llama_decode;
using testkit::llama_rejects;
using testkit::llama_tensor_ne;
using testkit::LlamaGguf;
using testkit::LlamaTensor;
using testkit::patch_file;
using testkit::read_file;
using testkit::resize_file;
using testkit::TempDir;
using testkit::write_file;
using testkit::write_with_llama;

// The built CLI started in a child process, optionally under a file size limit (RLIMIT_FSIZE,
// SIGXFSZ left to the program), for tests that act on it while it runs; finish() collects it.
inline Spawned spawn_gguftool(const std::vector<std::string> &args,
                              std::optional<rlim_t> file_size_limit = std::nullopt) {
    std::vector<std::string> argv = {GGUFTOOL_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    testkit::ProcessOptions o;
    o.file_size_limit = file_size_limit;
    return testkit::spawn(argv, o);
}

// Runs the built CLI with `args` (argv[1..]); collects stdout and stderr.
inline RunResult run_gguftool(const std::vector<std::string> &args) {
    std::vector<std::string> argv = {GGUFTOOL_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    return testkit::run(argv);
}

// A model of one tensor of `type` and `elements` whose data is a hole in a sparse file, named
// big.gguf in `dir`: big enough to interrupt a command part-way, cheap to make.
inline std::string sparse_model(const TempDir &dir, GgmlType type, uint64_t elements) {
    const std::string path = dir.file("big.gguf");
    gguf::Writer w;
    w.add_tensor("big", type, {elements}, {});
    const std::vector<uint8_t> header = w.to_bytes();
    write_file(path, header);
    resize_file(path, (header.size() + 31) / 32 * 32 + *row_bytes(type, elements));
    return path;
}

// Starts gguftool with `args`, sends it `sig` as soon as a new entry (its temporary output)
// appears in `dir`, and expects it to end by that signal leaving `dir` as it was.
inline void interrupt_mid_write(const TempDir &dir, const std::vector<std::string> &args, int sig) {
    const std::vector<std::string> before = dir_entries(dir.path());
    const Spawned child = spawn_gguftool(args);
    bool seen = false;
    for (int i = 0; i < 100000 && !seen; ++i) {
        seen = dir_entries(dir.path()).size() > before.size();
        if (!seen) usleep(200);
    }
    kill(child.pid, sig);
    const RunResult r = finish(child);
    ASSERT_TRUE(seen) << "no output appeared; exit " << r.status << ": " << r.err;
    EXPECT_EQ(r.signal, sig) << "exit " << r.status << ": " << r.err;
    EXPECT_EQ(dir_entries(dir.path()), before);
}

// Runs `gguftool dump --json ARGS...`, expects success and returns the parsed document.
inline nlohmann::json dump_json(const std::vector<std::string> &args) {
    std::vector<std::string> a = {"dump", "--json"};
    a.insert(a.end(), args.begin(), args.end());
    const RunResult r = run_gguftool(a);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);  // throws (fails the test) on invalid JSON
}

// Deterministic pseudo-normal floats (sum of uniforms) for test tensors.
inline std::vector<float> test_weights(size_t n, uint32_t seed, float scale = 1.0f) {
    std::vector<float> v(n);
    uint32_t x = seed * 747796405u + 2891336453u;
    const auto next = [&] {
        x = x * 1664525u + 1013904223u;
        return double(x >> 8) / double(1 << 24);
    };
    for (float &f : v) f = float(scale * (next() + next() + next() + next() - 2.0));
    return v;
}

// The bytes of `values` quantized by llama.cpp (ggml_quantize_chunk, with an importance matrix
// for the types that need one), as rows of ne0 values.
inline std::vector<uint8_t> llama_quantize(GgmlType type, const std::vector<float> &values,
                                           int64_t ne0) {
    const reference::Ggml &g = *ggml();
    std::vector<float> imatrix(static_cast<size_t>(ne0));
    for (size_t i = 0; i < imatrix.size(); ++i) imatrix[i] = 1.0f + float(i % 7) * 0.25f;
    return testkit::quantize_rows(
        g, type, values, size_t(ne0),
        testkit::requires_imatrix(g, type) ? imatrix : std::vector<float>{});
}

// What llama.cpp's reader reports about one tensor, and its bytes read from the file.
struct LlamaTensorView {
    std::string name;
    int type;
    uint64_t offset, size;
    std::vector<int64_t> ne;  // 4 entries
    std::vector<uint8_t> bytes;
};

inline std::vector<LlamaTensorView> llama_tensors(const std::string &path) {
    LlamaGguf l(path);
    EXPECT_NE(l.ctx, nullptr) << "llama.cpp rejects " << path;
    if (!l.ctx) return {};
    const std::vector<uint8_t> file = read_file(path);
    const uint64_t data = l.g->gguf_get_data_offset(l.ctx);
    std::vector<LlamaTensorView> out;
    for (int64_t i = 0; i < l.g->gguf_get_n_tensors(l.ctx); ++i) {
        LlamaTensorView t;
        t.name = l.g->gguf_get_tensor_name(l.ctx, i);
        t.type = l.g->gguf_get_tensor_type(l.ctx, i);
        t.offset = l.g->gguf_get_tensor_offset(l.ctx, i);
        t.size = l.g->gguf_get_tensor_size(l.ctx, i);
        const int64_t *ne = llama_tensor_ne(*l.g, l.ctx, i);
        t.ne.assign(ne, ne + 4);
        t.bytes.assign(file.begin() + int64_t(data + t.offset),
                       file.begin() + int64_t(data + t.offset + t.size));
        out.push_back(std::move(t));
    }
    return out;
}

// Reference statistics: NaN and Inf counted apart, the rest in long double.
struct RefStats {
    uint64_t nan = 0, inf = 0, finite = 0;
    double min = INFINITY, max = -INFINITY, mean = 0, std = 0;
};

template <class T>
RefStats ref_stats(const std::vector<T> &v) {
    RefStats s;
    long double sum = 0;
    for (const T x : v) {
        if (std::isnan(x)) {
            ++s.nan;
        } else if (std::isinf(x)) {
            ++s.inf;
        } else {
            ++s.finite;
            sum += x;
            s.min = std::min<double>(s.min, x);
            s.max = std::max<double>(s.max, x);
        }
    }
    const long double mean = s.finite ? sum / s.finite : 0;
    long double m2 = 0;
    for (const T x : v)
        if (std::isfinite(x)) m2 += (x - mean) * (x - mean);
    s.mean = double(mean);
    s.std = s.finite ? double(std::sqrt(m2 / s.finite)) : 0;
    return s;
}

// Agreement of accumulated quantities: relative, with `floor` as the smallest scale (for means
// near zero, pass the standard deviation).
inline bool near_rel(double a, double b, double floor = 0, double rel = 1e-9) {
    return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), floor, 1e-300});
}

}  // namespace gguftool::test
