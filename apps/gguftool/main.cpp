// gguftool: see, convert, run and verify GGUF model files.
//
// Built twice (CMakeLists.txt): as `gguftool`, which links neither ONNX nor protobuf and hands
// run, to-onnx and verify over to the second build, `gguftool-onnx` (GGUFTOOL_ONNX_COMMANDS),
// which has every subcommand. Both parse a command line the same way.
//
// Exit codes: 0 success, 1 invalid input file (gguftool::Error, including a file that cannot be
// opened), 2 usage error (unknown option, missing argument, bad value).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gguftool/error.hpp"
#include "signals.hpp"

int main(int argc, char **argv) {
    using namespace gguftool::cli;
#if !GGUFTOOL_ONNX_COMMANDS
    if (const HelperCommand *c = helper_command(argc, argv)) return exec_helper(*c, argv);
#endif
    CLI::App app{"gguftool: inspect, convert, run and verify GGUF model files"};
    app.name("gguftool");
    app.set_version_flag("--version", "gguftool 0.1.0");
    app.require_subcommand(1);

    struct Command {
        std::string name;
        Runner run;
    };
    std::vector<Command> commands;
    commands.push_back({"dump", add_dump(app)});
    commands.push_back({"diff", add_diff(app)});
    commands.push_back({"split", add_split(app)});
    commands.push_back({"merge", add_merge(app)});
    commands.push_back({"edit", add_edit(app)});
    commands.push_back({"convert-endian", add_convert_endian(app)});
#if GGUFTOOL_ONNX_COMMANDS
    commands.push_back({kRunCommand.name, add_run(app)});
    commands.push_back({kToOnnxCommand.name, add_to_onnx(app)});
    commands.push_back({kLowerCommand.name, add_lower(app)});
    commands.push_back({kVerifyCommand.name, add_verify(app)});
#else
    // Listed by --help; never parsed here (helper_command).
    for (const HelperCommand &c : kHelperCommands) app.add_subcommand(c.name, c.summary);
#endif

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version arrive here too, with exit code 0.
        return app.exit(e) == 0 ? kExitOk : kExitUsage;
    }
    remove_outputs_on_signals();  // the library leaves signals to the program
    try {
        for (const CLI::App *sub : app.get_subcommands())
            for (const Command &c : commands)
                if (sub->get_name() == c.name) return c.run();
    } catch (const gguftool::Error &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());  // "<file>: offset N: <problem>"
        return kExitInvalid;
    } catch (const std::exception &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());
        return kExitInvalid;
    }
    return kExitUsage;
}
