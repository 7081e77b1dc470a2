// How gguftool finds and starts gguftool-onnx, which runs the subcommands linking ONNX and
// protobuf (commands.hpp).
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "commands.hpp"

namespace gguftool::cli {
namespace {

constexpr const char *kHelperName = "gguftool-onnx";

}  // namespace

const HelperCommand *helper_command(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg.starts_with('-')) continue;
        for (const HelperCommand &c : kHelperCommands)
            if (arg == c.name) return &c;
        return nullptr;
    }
    return nullptr;
}

int exec_helper(const HelperCommand &command, char **argv) {
    // Beside this program (the build tree), or in the installed libexec directory
    // (GGUFTOOL_HELPER_DIR, relative to the bin directory).
    std::error_code ec;
    const std::filesystem::path dir =
        std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    if (ec) {
        fmt::print(stderr,
                   "gguftool: {} needs {}, but /proc/self/exe does not say where to look: {}\n",
                   command.name, kHelperName, ec.message());
        return kExitNoHelper;
    }
    const std::string beside = (dir / kHelperName).string();
    const std::string installed =
        (dir / GGUFTOOL_HELPER_DIR / kHelperName).lexically_normal().string();
    for (const std::string &path : {beside, installed}) {
        ::execv(path.c_str(), argv);
        if (errno != ENOENT) {
            fmt::print(stderr, "gguftool: cannot run {}: {}\n", path, std::strerror(errno));
            return kExitNoHelper;
        }
    }
    fmt::print(stderr, "gguftool: {} needs {}, which is not installed (looked for {} and {})\n",
               command.name, kHelperName, beside, installed);
    return kExitNoHelper;
}

}  // namespace gguftool::cli
