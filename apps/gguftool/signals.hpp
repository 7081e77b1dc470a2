// The program's signal policy for commands that write files (gguftool/output_file.hpp).
#pragma once

#include <signal.h>

namespace gguftool::cli {

// On SIGINT, SIGTERM or SIGHUP, removes every pending output file, then ends the process with
// that signal as it would have without a handler. A signal ignored when the program starts
// (nohup, a shell's background job) stays ignored. SIGXFSZ is ignored, so that exceeding a file
// size limit is a write error, reported and cleaned up, rather than a kill.
void remove_outputs_on_signals();

// While one exists, those signals wait (blocked) and arrive when it is destroyed: for a write
// that must not be cut short, such as edit --in-place's one write of a header.
class DeferEndingSignals {
public:
    DeferEndingSignals();
    ~DeferEndingSignals();
    DeferEndingSignals(const DeferEndingSignals &) = delete;
    DeferEndingSignals &operator=(const DeferEndingSignals &) = delete;

private:
    sigset_t previous_;
};

}  // namespace gguftool::cli
