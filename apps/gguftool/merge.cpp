// gguftool merge: the shards of a split model back into one file (gguftool/gguf_split.hpp).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "commands.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_split.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string first_shard;
    std::string output;
    bool dry_run = false;
};

int run(const Options &opt) {
    // Refused before the shards are read: the same answer, sooner.
    if (std::filesystem::exists(std::filesystem::symlink_status(opt.output)))
        throw Error(opt.output, std::nullopt, "already exists; not replaced");
    const gguf::Model model = gguf::Model::open(opt.first_shard);
    std::vector<gguf::OutputPlan> plans = {gguf::plan_merge(model, opt.output)};
    const gguf::OutputPlan &p = plans.front();

    Out out(stdout);
    const size_t shards = model.shards().size(), tensors = model.tensors().size();
    out.print("{}: {} {}, {} {}, {} metadata {} -> {} ({} bytes)\n", opt.first_shard, shards,
              plural(shards, "shard"), tensors, plural(tensors, "tensor"), p.header.metadata.size(),
              plural(p.header.metadata.size(), "key"), opt.output, p.size);
    if (opt.dry_run) {
        out.put("dry run: nothing written\n");
    } else {
        out.flush();
        gguf::write_outputs(plans, /*replace=*/false);
        out.print("wrote {}\n", opt.output);
    }
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kExitInvalid;
    }
    return kExitOk;
}

}  // namespace

Runner add_merge(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand("merge", "Merge the shards of a split model into one file");
    cmd->add_option("FIRST_SHARD", opt->first_shard,
                    "A shard of the split model (NAME-00001-of-0000N.gguf)")
        ->required();
    cmd->add_option("OUT", opt->output, "GGUF file to write (must not exist)")->required();
    cmd->add_flag("--dry-run", opt->dry_run, "Check the shards, print the result, write nothing");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
