// bench_to_onnx: `gguftool to-onnx --external-data` (packed mode) on a generated multi-GB GGUF,
// against `cp` of the same file in the same run. Prints both throughputs, their ratio (target:
// at least 0.5x of cp) and the peak RSS of the conversion process.
//
// Usage: bench_to_onnx [--gib N] [--dir DIR] [--gguftool PATH] [--mode packed|unpack]
// The files go to a fresh directory under DIR (default $TMPDIR or /tmp) and are deleted at the end.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// q4_0: 32 elements in 18 bytes. Tensors of 4096 x 16384 elements, 36 MiB each.
constexpr uint64_t kRow = 4096, kRows = 16384;
constexpr uint64_t kTensorBytes = kRow * kRows / 32 * 18;
constexpr uint32_t kQ4_0 = 2;
constexpr uint64_t kAlignment = 32;

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
void generate(const std::string &path, int n) {
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
};

// Runs argv as a child process: wall time, its peak RSS (wait4), exit status.
ChildRun run_child(std::vector<std::string> args) {
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {s, usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string self_dir() {
    return fs::canonical("/proc/self/exe").parent_path().string();
}

}  // namespace

int main(int argc, char **argv) {
    double gib = 3.0;
    const char *tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    std::string gguftool = self_dir() + "/../gguftool";
    std::string mode = "packed";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--gib")
            gib = std::atof(argv[i + 1]);
        else if (a == "--dir")
            base = argv[i + 1];
        else if (a == "--gguftool")
            gguftool = argv[i + 1];
        else if (a == "--mode")
            mode = argv[i + 1];
        else {
            fmt::print(stderr,
                       "usage: bench_to_onnx [--gib N] [--dir DIR] [--gguftool PATH] [--mode M]\n");
            return 2;
        }
    }
    if (!fs::exists(gguftool)) {
        fmt::print(stderr, "bench_to_onnx: {} not found (build gguftool_cli, or pass --gguftool)\n",
                   gguftool);
        return 2;
    }
    std::string dir = base + "/gguftool-bench-XXXXXX";
    if (!mkdtemp(dir.data())) {
        fmt::print(stderr, "bench_to_onnx: cannot create a directory in {}\n", base);
        return 1;
    }
    const int tensors = std::max(1, int(gib * double(1ull << 30) / double(kTensorBytes) + 0.5));
    const std::string gguf = dir + "/model.gguf", copy = dir + "/copy.gguf",
                      onnx = dir + "/model.onnx";
    int rc = 0;
    try {
        fmt::print("generating {} q4_0 tensors in {} ...\n", tensors, gguf);
        generate(gguf, tensors);
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
        fmt::print("ratio to cp:          {:.2f}x (target >= 0.5x)\n", cp_best / onnx_best);
        fmt::print("peak RSS of to-onnx:  {:.1f} MiB (limit 256 MiB)\n", double(rss) / 1024);
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_to_onnx: {}\n", e.what());
        rc = 1;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return rc;
}
