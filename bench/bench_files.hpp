// Helpers of the benchmarks that time gguftool's file-writing commands against `cp` (header only):
// a generated multi-GB GGUF of q4_0 tensors, and child processes timed with their peak RSS.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace gguftool::bench {

// q4_0: 32 elements in 18 bytes. Tensors of 4096 x 16384 elements, 36 MiB each.
inline constexpr uint64_t kRow = 4096, kRows = 16384;
inline constexpr uint64_t kTensorBytes = kRow * kRows / 32 * 18;
inline constexpr uint32_t kQ4_0 = 2;
inline constexpr uint64_t kAlignment = 32;

class Writer {
public:
    explicit Writer(const std::string &path) : f_(std::fopen(path.c_str(), "wb")) {
        if (!f_) throw std::runtime_error("cannot create " + path);
    }
    ~Writer() {
        if (f_) std::fclose(f_);
    }
    void raw(const void *p, size_t n) {
        if (std::fwrite(p, 1, n, f_) != n) throw std::runtime_error("write failed");
        pos_ += n;
    }
    template <class T>
    void num(T v) {
        raw(&v, sizeof v);
    }
    void str(const std::string &s) {
        num<uint64_t>(s.size());
        raw(s.data(), s.size());
    }
    void pad() {
        static const char zeros[kAlignment] = {};
        raw(zeros, (kAlignment - pos_ % kAlignment) % kAlignment);
    }
    void close() {
        if (std::fclose(f_) != 0) throw std::runtime_error("close failed");
        f_ = nullptr;
    }

private:
    std::FILE *f_;
    uint64_t pos_ = 0;
};

// A GGUF v3 file of `n` q4_0 tensors holding pattern bytes (valid fp16 scales, varied codes).
inline void generate(const std::string &path, int n) {
    Writer w(path);
    w.raw("GGUF", 4);
    w.num<uint32_t>(3);
    w.num<uint64_t>(n);
    w.num<uint64_t>(1);
    w.str("general.architecture");
    w.num<uint32_t>(8);  // string
    w.str("bench");
    for (int i = 0; i < n; ++i) {
        w.str(fmt::format("blk.{}.ffn_up.weight", i));
        w.num<uint32_t>(2);
        w.num<uint64_t>(kRow);
        w.num<uint64_t>(kRows);
        w.num<uint32_t>(kQ4_0);
        w.num<uint64_t>(uint64_t(i) * kTensorBytes);  // a multiple of 32
    }
    w.pad();
    std::vector<uint8_t> chunk(18 << 16);  // 65536 blocks
    uint32_t x = 12345;
    for (size_t b = 0; b < chunk.size(); b += 18) {
        chunk[b] = 0x00;
        chunk[b + 1] = 0x2c;  // d = 0.0625
        for (int j = 2; j < 18; ++j) chunk[b + j] = uint8_t((x = x * 1664525u + 1013904223u) >> 24);
    }
    for (int i = 0; i < n; ++i)
        for (uint64_t done = 0; done < kTensorBytes; done += chunk.size())
            w.raw(chunk.data(), std::min<uint64_t>(chunk.size(), kTensorBytes - done));
    w.close();
}

struct ChildRun {
    double seconds;
    long max_rss_kib;
    int status;
    double cpu_seconds;  // user + system
};

// Runs argv as a child process: wall time, its peak RSS (wait4), exit status.
inline ChildRun run_child(std::vector<std::string> args) {
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);  // the commands' reports are not wanted
        if (null >= 0) ::dup2(null, 1);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto secs = [](const timeval &t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return {s, usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            secs(usage.ru_utime) + secs(usage.ru_stime)};
}

inline std::string self_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

// The number of q4_0 tensors that make about `gib` GiB.
inline int tensors_for(double gib) {
    return std::max(1, int(gib * double(1ull << 30) / double(kTensorBytes) + 0.5));
}

// Reads `path` to the end, so that its pages are in the page cache for every contender alike.
inline void warm_cache(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot read " + path);
    std::vector<char> buf(1 << 20);
    while (std::fread(buf.data(), 1, buf.size(), f) == buf.size()) {
    }
    std::fclose(f);
}

}  // namespace gguftool::bench
