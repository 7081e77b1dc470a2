#include "signals.hpp"

#include <pthread.h>
#include <signal.h>

#include "gguftool/output_file.hpp"

namespace gguftool::cli {
namespace {

void remove_outputs_and_end(int sig) {
    gguftool::remove_pending_outputs();
    // The signal is blocked while its handler runs: raised again with the default action, it
    // ends the process as soon as the handler returns.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

void remove_outputs_on_signals() {
    struct sigaction handler {};
    handler.sa_handler = remove_outputs_and_end;
    // While one is handled the others wait: one handler at a time.
    sigemptyset(&handler.sa_mask);
    for (int sig : kEndingSignals) sigaddset(&handler.sa_mask, sig);
    for (int sig : kEndingSignals) {
        struct sigaction previous {};
        ::sigaction(sig, nullptr, &previous);
        if (previous.sa_handler != SIG_IGN) ::sigaction(sig, &handler, nullptr);
    }
    ::signal(SIGXFSZ, SIG_IGN);
}

DeferEndingSignals::DeferEndingSignals() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : kEndingSignals) sigaddset(&block, sig);
    ::pthread_sigmask(SIG_BLOCK, &block, &previous_);
}

DeferEndingSignals::~DeferEndingSignals() {
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace gguftool::cli
