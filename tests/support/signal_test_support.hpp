// Signal helpers for the output-file tests (tests/base, tests/onnx).
#pragma once

#include <signal.h>

#include <iterator>

#include "gguftool/output_file.hpp"

namespace gguftool::testkit {

// What a program using gguftool/output_file.hpp does for a clean interrupt (as the CLI's
// apps/gguftool/signals.cpp): its own handler removes the pending outputs, then ends by the signal.
inline void remove_outputs_and_end(int sig) {
    remove_pending_outputs();
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

inline void install_cleanup_handler(int sig) {
    struct sigaction sa {};
    sa.sa_handler = remove_outputs_and_end;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
}

// Sets the signals a library might be tempted to handle to their default action (a test runner
// may start us with some ignored), and restores them on destruction.
class DefaultDispositions {
public:
    static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};

    DefaultDispositions() {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &dfl, &saved_[i]);
    }
    ~DefaultDispositions() {
        for (size_t i = 0; i < std::size(kSignals); ++i)
            ::sigaction(kSignals[i], &saved_[i], nullptr);
    }
    DefaultDispositions(const DefaultDispositions &) = delete;
    DefaultDispositions &operator=(const DefaultDispositions &) = delete;

    // The first of kSignals whose disposition is no longer the default, or 0.
    static int changed() {
        for (int sig : kSignals) {
            struct sigaction now {};
            ::sigaction(sig, nullptr, &now);
            if (now.sa_handler != SIG_DFL) return sig;
        }
        return 0;
    }

private:
    struct sigaction saved_[std::size(kSignals)];
};

}  // namespace gguftool::testkit
