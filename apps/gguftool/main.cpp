// gguftool: see, convert, run and verify GGUF model files.
//
// Exit codes: 0 success, 1 invalid input file (gguftool::Error, including a file that cannot be
// opened), 2 usage error (unknown option, missing argument, bad value).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gguftool/error.hpp"

int main(int argc, char **argv) {
    using namespace gguftool::cli;
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
    commands.push_back({"run", add_run(app)});
    commands.push_back({"to-onnx", add_to_onnx(app)});
    commands.push_back({"verify", add_verify(app)});

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version arrive here too, with exit code 0.
        return app.exit(e) == 0 ? kExitOk : kExitUsage;
    }
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
