// What the whole-program benchmarks (bench_copy, bench_hash, bench_to_onnx) share: their common
// options beside their own, the check that gguftool is there, a fresh working directory, and
// running a program timed (the test kit's process runner: wall and CPU time, peak RSS).
#pragma once

#include <fmt/format.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "process.hpp"

namespace gguftool::bench {

using ChildRun = testkit::ProcessResult;

// Runs argv (argv[0] a path) as a child process, its stdout sent to /dev/null when `quiet`.
inline ChildRun run_child(const std::vector<std::string> &argv, bool quiet = false) {
    testkit::ProcessOptions o;
    o.out = quiet ? testkit::Output::discard : testkit::Output::inherit;
    o.err = testkit::Output::inherit;
    return testkit::run(argv, o);
}

struct Setup {
    double gib = 4.0;  // --gib N: the size of the model to make
    std::string gguftool = testkit::self_dir() + "/../gguftool";  // --gguftool PATH
    std::map<std::string, std::string> own;  // the benchmark's own options, given or default
    std::string dir;  // made in --dir DIR ($TMPDIR or /tmp): the caller removes it
};

// Reads "--gib N", "--dir DIR", "--gguftool PATH" and the options named in s.own (each with a
// value) into `s`, checks that gguftool is there and makes the working directory. Returns 0, or
// the exit code to end with, having said why: 2 for bad usage or no gguftool, 1 when the directory
// cannot be made.
inline int setup(int argc, char **argv, const std::string &name, Setup &s,
                 const std::string &own_usage) {
    const char *tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    for (int i = 1; i < argc; i += 2) {
        const std::string a = argv[i];
        if (i + 1 >= argc ||
            !(a == "--gib" || a == "--dir" || a == "--gguftool" || s.own.count(a))) {
            fmt::print(stderr, "usage: {} [--gib N] [--dir DIR] [--gguftool PATH] {}\n", name,
                       own_usage);
            return 2;
        }
        const std::string v = argv[i + 1];
        if (a == "--gib")
            s.gib = std::atof(v.c_str());
        else if (a == "--dir")
            base = v;
        else if (a == "--gguftool")
            s.gguftool = v;
        else
            s.own[a] = v;
    }
    if (!std::filesystem::exists(s.gguftool)) {
        fmt::print(stderr, "{}: {} not found (build gguftool_cli, or pass --gguftool)\n", name,
                   s.gguftool);
        return 2;
    }
    s.dir = base + "/gguftool-bench-XXXXXX";
    if (!mkdtemp(s.dir.data())) {
        fmt::print(stderr, "{}: cannot create a directory in {}\n", name, base);
        return 1;
    }
    return 0;
}

}  // namespace gguftool::bench
