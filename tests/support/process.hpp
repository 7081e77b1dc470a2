// The test kit's one process runner: a program started in a child process with environment
// changes, resource limits, a timeout, optional stdin, and its stdout and stderr captured,
// discarded, inherited or merged; its exit code or signal, wall and CPU time and peak RSS. Used by
// the tests, the benchmarks and the tools (no GoogleTest here).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gguftool::testkit {

// Where a child's stdout or stderr goes. `merge` (stderr only) sends it to wherever stdout goes,
// as the shell's 2>&1 does.
enum class Output { capture, discard, inherit, merge };

struct ProcessOptions {
    std::vector<std::string> set_env;           // "NAME=value": added, replacing NAME if it is set
    std::vector<std::string> unset_env;         // names removed from the environment
    std::optional<rlim_t> file_size_limit;      // RLIMIT_FSIZE (SIGXFSZ left to the program)
    std::optional<rlim_t> address_space_limit;  // RLIMIT_AS
    std::optional<std::chrono::milliseconds> timeout;  // then SIGKILL, and `timed_out`
    std::optional<std::string> stdin_data;  // written to its stdin; without it, stdin is inherited
    Output out = Output::capture, err = Output::capture;
};

// Limits a child's memory to `bytes`: RLIMIT_AS, or, in a build under AddressSanitizer (which
// reserves terabytes of address space for its shadow memory), ASan's own limits on any one
// allocation and on the resident size, with allocations beyond them returning null.
void limit_memory(ProcessOptions &o, rlim_t bytes);

struct ProcessResult {
    int status = -1;  // exit code, or -1 when killed by a signal
    int signal = 0;   // the signal that ended it, if one did
    bool timed_out = false;
    std::string out, err;    // what was captured
    double seconds = 0;      // wall time from start to end
    double cpu_seconds = 0;  // user + system
    long max_rss_kib = 0;    // peak resident size
    long minor_faults = 0;   // page faults served without I/O (getrusage's ru_minflt)
};

// A started child: its pid and the read ends of the captured streams (-1 when not captured).
struct Child {
    pid_t pid = -1;
    int out = -1, err = -1, in = -1;
    std::string stdin_data;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::chrono::steady_clock::time_point start;
};

// Starts argv[0] (a path, no PATH search) with argv; throws std::runtime_error when it cannot be
// started (no such program, fork or pipe failing).
Child spawn(const std::vector<std::string> &argv, const ProcessOptions &o = {});

// Feeds its stdin, collects its output, waits for its end (killing it at the deadline), closes
// the pipes.
ProcessResult finish(Child c);

// spawn and finish.
ProcessResult run(const std::vector<std::string> &argv, const ProcessOptions &o = {});

// The names of the entries of `dir`, sorted.
std::vector<std::string> dir_entries(const std::string &dir);

// The directory of the running program (e.g. build/bench, to find build/gguftool from).
std::string self_dir();

}  // namespace gguftool::testkit
