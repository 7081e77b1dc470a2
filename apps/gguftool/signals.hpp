// The program's signal policy for commands that write files (gguftool/output_file.hpp).
#pragma once

namespace gguftool::cli {

// On SIGINT, SIGTERM or SIGHUP, removes every pending output file, then ends the process with
// that signal as it would have without a handler. A signal ignored when the program starts
// (nohup, a shell's background job) stays ignored. SIGXFSZ is ignored, so that exceeding a file
// size limit is a write error, reported and cleaned up, rather than a kill.
void remove_outputs_on_signals();

}  // namespace gguftool::cli
