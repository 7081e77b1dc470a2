// Running a program as a child process and timing it, for the benchmarks that compare whole
// programs (bench_to_onnx, bench_hash, bench_copy).
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace gguftool::bench {

struct ChildRun {
    double seconds;
    long max_rss_kib;
    int status;
    double cpu_seconds;  // user + system
};

// Runs argv (argv[0] a path) as a child process, its stdout sent to /dev/null when `quiet`: wall
// time, its peak RSS (wait4), exit status.
inline ChildRun run_child(std::vector<std::string> args, bool quiet = false) {
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        if (quiet) {
            const int null = ::open("/dev/null", O_WRONLY);
            if (null >= 0) dup2(null, 1);
        }
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

// The directory of the running benchmark (build/bench), to find build/gguftool from.
inline std::string self_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

}  // namespace gguftool::bench
