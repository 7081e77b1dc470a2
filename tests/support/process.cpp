#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char **environ;

namespace gguftool::testkit {

namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GGUFTOOL_TESTKIT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(GGUFTOOL_TESTKIT_ASAN)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

bool named(const char *entry, const std::string &name) {
    return std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
}

// The child's environment: ours, less what is unset or set anew, plus what is set.
std::vector<std::string> child_environment(const ProcessOptions &o) {
    std::vector<std::string> names = o.unset_env;
    for (const std::string &s : o.set_env) names.push_back(s.substr(0, s.find('=')));
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
        if (std::none_of(names.begin(), names.end(),
                         [&](const std::string &n) { return named(*e, n); }))
            env.push_back(*e);
    env.insert(env.end(), o.set_env.begin(), o.set_env.end());
    return env;
}

std::vector<char *> pointers(std::vector<std::string> &strings) {
    std::vector<char *> p;
    for (std::string &s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
}

void close_fd(int &fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

double seconds_of(const timeval &t) {
    return double(t.tv_sec) + double(t.tv_usec) / 1e6;
}

}  // namespace

void limit_memory(ProcessOptions &o, rlim_t bytes) {
    if (kAddressSanitizer) {
        const std::string mib = std::to_string(bytes >> 20);
        o.set_env.push_back("ASAN_OPTIONS=max_allocation_size_mb=" + mib +
                            ":hard_rss_limit_mb=" + mib + ":allocator_may_return_null=1");
    } else {
        o.address_space_limit = bytes;
    }
}

Child spawn(const std::vector<std::string> &argv_in, const ProcessOptions &o) {
    if (argv_in.empty()) throw std::runtime_error("spawn: no program");
    std::vector<std::string> argv_s = argv_in;
    std::vector<std::string> env_s = child_environment(o);
    std::vector<char *> argv = pointers(argv_s), envp = pointers(env_s);

    // Pipes: [0] read end, [1] write end; -1 where the stream is not a pipe.
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1}, exec_pipe[2];
    const auto make_pipe = [](int p[2]) {
        if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    };
    if (o.out == Output::capture) make_pipe(out_pipe);
    if (o.err == Output::capture) make_pipe(err_pipe);
    if (o.stdin_data) {
        make_pipe(in_pipe);
        signal(SIGPIPE, SIG_IGN);  // a child that stops reading ends the write, not us
    }
    make_pipe(exec_pipe);  // closed by exec; an errno arrives through it when exec fails
    const bool discard = o.out == Output::discard || o.err == Output::discard;

    Child c;
    c.start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // only async-signal-safe calls from here
        if (o.file_size_limit) {
            const rlimit limit{*o.file_size_limit, *o.file_size_limit};
            if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
        }
        if (o.address_space_limit) {
            const rlimit limit{*o.address_space_limit, *o.address_space_limit};
            if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(126);
        }
        const int null = discard ? ::open("/dev/null", O_WRONLY) : -1;
        if (o.out == Output::capture) dup2(out_pipe[1], 1);
        if (o.out == Output::discard && null >= 0) dup2(null, 1);
        if (o.err == Output::capture) dup2(err_pipe[1], 2);
        if (o.err == Output::discard && null >= 0) dup2(null, 2);
        if (o.err == Output::merge) dup2(1, 2);
        if (in_pipe[0] >= 0) dup2(in_pipe[0], 0);
        execve(argv[0], argv.data(), envp.data());
        const int e = errno;
        ssize_t ignored = write(exec_pipe[1], &e, sizeof e);
        (void)ignored;
        _exit(127);
    }
    close_fd(out_pipe[1]);
    close_fd(err_pipe[1]);
    close_fd(in_pipe[0]);
    close(exec_pipe[1]);
    int exec_errno = 0;
    ssize_t n;
    do n = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
    while (n < 0 && errno == EINTR);
    close(exec_pipe[0]);
    if (n > 0) {
        close_fd(out_pipe[0]);
        close_fd(err_pipe[0]);
        close_fd(in_pipe[1]);
        waitpid(pid, nullptr, 0);
        throw std::runtime_error("cannot run " + argv_in[0] + ": " + std::strerror(exec_errno));
    }
    c.pid = pid;
    c.out = out_pipe[0];
    c.err = err_pipe[0];
    c.in = in_pipe[1];
    if (o.stdin_data) c.stdin_data = *o.stdin_data;
    if (o.timeout) c.deadline = c.start + *o.timeout;
    return c;
}

ProcessResult finish(Child c) {
    ProcessResult r;
    // Feed stdin and drain stdout and stderr until they close or the deadline comes.
    size_t written = 0;
    char buf[65536];
    while (c.out >= 0 || c.err >= 0 || c.in >= 0) {
        int wait_ms = -1;
        if (c.deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                *c.deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                r.timed_out = true;
                break;
            }
            wait_ms = static_cast<int>(left.count());
        }
        pollfd fds[3] = {{c.out, POLLIN, 0}, {c.err, POLLIN, 0}, {c.in, POLLOUT, 0}};
        if (poll(fds, 3, wait_ms) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int *read_fds[2] = {&c.out, &c.err};
        std::string *sinks[2] = {&r.out, &r.err};
        for (int i = 0; i < 2; ++i) {
            if (*read_fds[i] < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t n = read(*read_fds[i], buf, sizeof buf);
            if (n > 0)
                sinks[i]->append(buf, size_t(n));
            else if (n == 0 || errno != EINTR)
                close_fd(*read_fds[i]);
        }
        if (c.in >= 0 && (fds[2].revents & (POLLOUT | POLLHUP | POLLERR))) {
            const ssize_t n =
                written < c.stdin_data.size()
                    ? write(c.in, c.stdin_data.data() + written, c.stdin_data.size() - written)
                    : 0;
            if (n > 0) written += size_t(n);
            if (written == c.stdin_data.size() || (n < 0 && errno != EINTR && errno != EAGAIN))
                close_fd(c.in);
        }
    }
    close_fd(c.out);
    close_fd(c.err);
    close_fd(c.in);
    if (r.timed_out) kill(c.pid, SIGKILL);
    int status = 0;
    rusage usage{};
    pid_t waited;
    do waited = wait4(c.pid, &status, 0, &usage);
    while (waited < 0 && errno == EINTR);
    if (waited != c.pid) throw std::runtime_error("wait4 failed");
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.start).count();
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r.cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    r.max_rss_kib = usage.ru_maxrss;
    r.minor_faults = usage.ru_minflt;
    return r;
}

ProcessResult run(const std::vector<std::string> &argv, const ProcessOptions &o) {
    return finish(spawn(argv, o));
}

std::vector<std::string> dir_entries(const std::string &dir) {
    std::vector<std::string> names;
    for (const auto &e : std::filesystem::directory_iterator(dir))
        names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string self_dir() {
    return std::filesystem::canonical("/proc/self/exe").parent_path().string();
}

}  // namespace gguftool::testkit
