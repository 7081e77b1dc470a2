// gguftool diff: two GGUF models compared — header, metadata key by key, tensors by bytes and by
// their decoded values.
//
// Exit codes (differ from the other commands): 0 identical, 1 different, 2 a usage or file error.
#include "diff.hpp"

#include <fmt/format.h>

#include <memory>

#include "commands.hpp"

namespace gguftool::cli {
namespace diff {
namespace {

int run(const Options &opt) {
    const gguf::Model a = gguf::Model::open(opt.file_a);
    const gguf::Model b = gguf::Model::open(opt.file_b);
    Report r;
    r.header = compare_headers(a, b);
    r.metadata = compare_metadata(a.first(), b.first());
    if (!opt.metadata_only) {
        r.tensors_compared = true;
        r.tensor_subset = !opt.tensor_globs.empty();
        r.tensors = compare_tensors(a, b, opt);
    }
    Out out(stdout);
    if (opt.json)
        write_json(out, a, b, r);
    else
        write_text(out, a, b, r);
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kExitUsage;
    }
    return r.identical() ? kExitOk : kExitInvalid;
}

}  // namespace

bool Report::identical() const {
    for (const TensorDiff &t : tensors)
        if (t.status != Status::same) return false;
    return header.empty() && metadata.same();
}

}  // namespace diff

Runner add_diff(CLI::App &app) {
    auto opt = std::make_shared<diff::Options>();
    auto *cmd = app.add_subcommand(
        "diff", "Compare two GGUF models: header, metadata, tensors (bytes and decoded values)");
    cmd->add_option("A", opt->file_a, "GGUF file (any shard of a split model)")->required();
    cmd->add_option("B", opt->file_b, "GGUF file to compare with, the reference of the numbers")
        ->required();
    cmd->add_flag("--json", opt->json, "Write one JSON document instead of text");
    auto *glob = cmd->add_option("--tensor", opt->tensor_globs,
                                 "Only tensors whose name matches GLOB (repeatable)")
                     ->type_name("GLOB")
                     ->allow_extra_args(false);
    cmd->add_flag("--metadata-only", opt->metadata_only,
                  "Compare the header and metadata only, not the tensors")
        ->excludes(glob);
    cmd->add_option("--threads", opt->threads, "Threads (0 = all cores)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    return [opt] {
        // diff's own exit codes: file errors are 2 here (1 means the models differ).
        try {
            return diff::run(*opt);
        } catch (const std::exception &e) {
            fmt::print(stderr, "gguftool: {}\n", e.what());
            return kExitUsage;
        }
    };
}

}  // namespace gguftool::cli
