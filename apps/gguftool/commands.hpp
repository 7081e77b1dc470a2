// Each subcommand registers itself on the CLI11 app and returns the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace gguftool::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // invalid input file (or, for verify, a mismatch)
inline constexpr int kExitUsage = 2;

using Runner = std::function<int()>;

Runner add_dump(CLI::App &app);
Runner add_run(CLI::App &app);
Runner add_to_onnx(CLI::App &app);
Runner add_verify(CLI::App &app);

}  // namespace gguftool::cli
