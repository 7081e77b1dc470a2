// gguftool: see, convert, run and verify GGUF model files.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <vector>

#include "commands.hpp"
#include "gguftool/error.hpp"

int main(int argc, char **argv) {
    using namespace gguftool::cli;
    CLI::App app{"gguftool: inspect, convert, run and verify GGUF model files"};
    app.set_version_flag("--version", "gguftool 0.1.0");
    app.require_subcommand(1);

    std::vector<std::pair<CLI::App *, Runner>> commands;
    auto add = [&](Runner (*adder)(CLI::App &)) {
        const size_t before = app.get_subcommands({}).size();
        Runner r = adder(app);
        commands.emplace_back(app.get_subcommands({}).at(before), std::move(r));
    };
    add(add_dump);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitUsage;
    }
    try {
        for (auto &[sub, run] : commands)
            if (sub->parsed()) return run();
    } catch (const gguftool::Error &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());
        return kExitInvalid;
    } catch (const std::exception &e) {
        fmt::print(stderr, "gguftool: {}\n", e.what());
        return kExitInvalid;
    }
    return kExitUsage;
}
