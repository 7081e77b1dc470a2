// gguftool: see, convert, run and verify GGUF model files.
//
// Built twice (CMakeLists.txt): as `gguftool`, which links neither ONNX nor protobuf and hands
// run, to-onnx and verify over to the second build, `gguftool-onnx` (GGUFTOOL_ONNX_COMMANDS),
// which has every subcommand. Both parse a command line the same way.
//
// Exit codes: 0 success, 1 invalid input file (gguftool::Error, including a file that cannot be
// opened), 2 usage error (unknown option, missing argument, bad value).
// hash has llama-gguf-hash's codes instead (hash.cpp): its usage errors are 1, as 2 is a mismatch.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
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

    // Each subcommand registers itself (its name is written once, where it is added) and returns
    // its runner; hash keeps llama-gguf-hash's usage exit code.
    struct Command {
        Runner (*add)(CLI::App &);
        int usage_exit = kExitUsage;
    };
    static constexpr Command kCommands[] = {
        {add_dump},
        {add_diff},
        {add_split},
        {add_merge},
        {add_edit},
        {add_convert_endian},
        {add_hash, kHashExitUsage},
        {add_tokenizer},
#if GGUFTOOL_ONNX_COMMANDS
        {add_run},
        {add_to_onnx},
        {add_lower},
        {add_verify},
        {add_generate},
#endif
    };
    struct Added {
        const CLI::App *sub;
        Runner run;
        int usage_exit;
    };
    std::vector<Added> commands;
    for (const Command &c : kCommands) {
        Runner run = c.add(app);
        const auto every = [](const CLI::App *) { return true; };
        commands.push_back(
            {std::as_const(app).get_subcommands(every).back(), std::move(run), c.usage_exit});
    }
#if !GGUFTOOL_ONNX_COMMANDS
    // Listed by --help; never parsed here (helper_command).
    for (const HelperCommand &c : kHelperCommands) app.add_subcommand(c.name, c.summary);
#endif

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version arrive here too, with exit code 0.
        if (app.exit(e) == 0) return kExitOk;
        for (const Added &c : commands)
            if (c.sub->parsed()) return c.usage_exit;
        return kExitUsage;
    }
    remove_outputs_on_signals();  // the library leaves signals to the program
    try {
        for (const Added &c : commands)
            if (c.sub->parsed()) return c.run();
    } catch (const gguftool::Error &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());  // "<file>: offset N: <problem>"
        return kExitInvalid;
    } catch (const std::exception &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());
        return kExitInvalid;
    }
    return kExitUsage;
}
