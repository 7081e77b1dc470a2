// gguftool dump: everything in a GGUF file. (Being written.)
#include "commands.hpp"

namespace gguftool::cli {

Runner add_dump(CLI::App &app) {
    auto *cmd = app.add_subcommand("dump", "Show header, metadata, tensors, values and statistics");
    auto file = std::make_shared<std::string>();
    cmd->add_option("FILE", *file, "GGUF file (any shard of a split model)")->required();
    return [] { return kExitUsage; };
}

}  // namespace gguftool::cli
