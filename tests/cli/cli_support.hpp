// Helpers for the CLI tests: running the built gguftool, writing files with llama.cpp's own writer,
// and reading what llama.cpp reports about a file.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

extern char **environ;

namespace gguftool::test {

inline const std::string kSample = std::string(GGUFTOOL_SOURCE_DIR) + "/testdata/sample.gguf";

struct RunResult {
    int status = -1;  // exit code, or -1 if killed by a signal
    int signal = 0;   // the signal that ended it, if one did
    std::string out;
    std::string err;
};

// Reads a child's stdout and stderr pipes to their end (and closes them), or until `deadline`;
// false when the deadline came first.
inline bool drain_pipes(int out_fd, int err_fd, std::string &out, std::string &err,
                        std::optional<std::chrono::steady_clock::time_point> deadline = {}) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    std::string *sinks[2] = {&out, &err};
    int open_fds = 2;
    bool in_time = true;
    char buf[65536];
    while (open_fds > 0) {
        int wait_ms = -1;
        if (deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                *deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                in_time = false;
                break;
            }
            wait_ms = static_cast<int>(left.count());
        }
        if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, size_t(n));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (const pollfd &p : fds)
        if (p.fd >= 0) close(p.fd);
    return in_time;
}

// Runs the program at path argv_s[0] with argv_s (no PATH search); collects stdout and stderr.
inline RunResult run_program(std::vector<std::string> argv_s) {
    std::vector<char *> argv;
    for (std::string &a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
        posix_spawn_file_actions_addclose(&fa, fd);
    pid_t pid;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) throw std::runtime_error("cannot run " + argv_s[0]);

    RunResult r;
    drain_pipes(out_pipe[0], err_pipe[0], r.out, r.err);
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return r;
}

// The built CLI started in a child process (fork and exec), optionally under a file size limit
// (RLIMIT_FSIZE, SIGXFSZ left to the program), for tests that act on it while it runs.
struct Spawned {
    pid_t pid = -1;
    int out = -1, err = -1;  // its stdout and stderr
};

inline Spawned spawn_gguftool(const std::vector<std::string> &args,
                              std::optional<rlim_t> file_size_limit = std::nullopt) {
    std::vector<std::string> argv_s = {GGUFTOOL_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string &a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // only async-signal-safe calls from here
        if (file_size_limit) {
            const rlimit limit{*file_size_limit, *file_size_limit};
            if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
        }
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        execve(argv[0], argv.data(), environ);
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    return {pid, out_pipe[0], err_pipe[0]};
}

// Collects the output of a spawned CLI and waits for its end.
inline RunResult finish(const Spawned &s) {
    RunResult r;
    drain_pipes(s.out, s.err, r.out, r.err);
    int status = 0;
    waitpid(s.pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return r;
}

// Runs the built CLI with `args` (argv[1..]); collects stdout and stderr.
inline RunResult run_gguftool(const std::vector<std::string> &args) {
    std::vector<std::string> argv_s = {GGUFTOOL_EXE};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    return run_program(std::move(argv_s));
}

// The names of the entries of `dir`, sorted.
inline std::vector<std::string> dir_entries(const std::string &dir) {
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
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

// A tensor to write with llama.cpp's writer: its bytes are already in `type`'s format.
struct LlamaTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
};

// The bytes of `values` quantized by llama.cpp (ggml_quantize_chunk, with an importance matrix
// for the types that need one), as rows of ne0 values.
inline std::vector<uint8_t> llama_quantize(GgmlType type, const std::vector<float> &values,
                                           int64_t ne0) {
    const reference::Ggml &g = *ggml();
    const int64_t rows = int64_t(values.size()) / ne0;
    std::vector<uint8_t> out(size_t(*row_bytes(type, uint64_t(ne0)) * uint64_t(rows)));
    std::vector<float> imatrix(static_cast<size_t>(ne0));
    for (size_t i = 0; i < imatrix.size(); ++i) imatrix[i] = 1.0f + float(i % 7) * 0.25f;
    const bool needs = g.quantize_requires_imatrix && g.quantize_requires_imatrix(int(type));
    g.quantize_chunk(int(type), values.data(), out.data(), 0, rows, ne0,
                     needs ? imatrix.data() : nullptr);
    return out;
}

// Writes `tensors` (and whatever `add_metadata` sets) with gguf_write_to_file.
template <class AddMetadata>
void write_with_llama(const std::string &path, const std::vector<LlamaTensor> &tensors,
                      AddMetadata &&add_metadata) {
    const reference::Ggml &g = *ggml();
    reference::gguf_context *ctx = g.gguf_init_empty();
    add_metadata(g, ctx);
    void *gctx = g.ggml_init({size_t(1) << 22, nullptr, true});
    for (const LlamaTensor &t : tensors) {
        void *tensor = g.ggml_new_tensor(gctx, int(t.type), int(t.ne.size()), t.ne.data());
        g.ggml_set_name(tensor, t.name.c_str());
        g.gguf_add_tensor(ctx, tensor);
        g.gguf_set_tensor_data(ctx, t.name.c_str(), t.bytes.data());
    }
    const bool ok = g.gguf_write_to_file(ctx, path.c_str(), false);
    g.gguf_free(ctx);
    g.ggml_free(gctx);
    ASSERT_TRUE(ok) << "llama.cpp could not write " << path;
}

inline void write_with_llama(const std::string &path, const std::vector<LlamaTensor> &tensors) {
    write_with_llama(path, tensors, [](const reference::Ggml &, reference::gguf_context *) {});
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

// llama.cpp's dequantize_row_<type> of a whole tensor (f32 is copied; f16/bf16/quantized types go
// through llama.cpp). Empty when llama.cpp has no decoder for the type.
inline std::vector<float> llama_decode(const LlamaTensorView &t) {
    const reference::Ggml &g = *ggml();
    uint64_t n = 1;
    for (int64_t d : t.ne) n *= uint64_t(d);
    std::vector<float> out(n);
    if (t.type == int(GgmlType::f32)) {
        std::memcpy(out.data(), t.bytes.data(), n * 4);
        return out;
    }
    reference::Ggml::DequantizeRow fn = g.dequantize_row[t.type];
    // f16 and bf16 have row converters instead (ggml_fp16_to_fp32_row, ggml_bf16_to_fp32_row).
    const char *row_fn = t.type == int(GgmlType::f16)    ? "ggml_fp16_to_fp32_row"
                         : t.type == int(GgmlType::bf16) ? "ggml_bf16_to_fp32_row"
                                                         : nullptr;
    if (row_fn) fn = reinterpret_cast<reference::Ggml::DequantizeRow>(dlsym(g.handle, row_fn));
    if (!fn) return {};
    fn(t.bytes.data(), out.data(), int64_t(n));
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
