// gguftool dump: everything in a GGUF file — header, metadata, tensors, values and statistics.
#include "dump.hpp"

#include <charconv>
#include <memory>

#include "commands.hpp"
#include "gguftool/prefault.hpp"

namespace gguftool::cli {
namespace dump {

std::vector<TensorReport> select_tensors(const gguf::Model &model, const Options &opt) {
    std::vector<TensorReport> out;
    reserve_prefaulted(out, opt.tensor_globs.empty() ? model.tensors().size() : 0);
    for (const gguf::TensorInfo &t : model.tensors())
        if (gguf::name_matches(t.name, opt.tensor_globs)) out.emplace_back().info = &t;
    return out;
}

int run(const Options &opt) {
    const gguf::Model model = gguf::Model::open(opt.file);
    std::vector<TensorReport> reports;
    if (!opt.no_tensors) reports = select_tensors(model, opt);
    // A tensor that cannot be decoded (a format without a decoder, quantized data of a
    // big-endian file) is reported in the output and on stderr, and the others still shown.
    std::vector<std::string> problems;
    for (TensorReport &r : reports) {
        if (opt.values == 0 && !opt.stats) break;  // nothing to decode
        Decoded &d = *(r.decoded = std::make_unique<Decoded>());
        try {
            if (opt.values > 0) d.values = first_values(model, *r.info, opt.values);
            if (opt.stats) d.stats = tensor_stats(model, *r.info);
        } catch (const Error &e) {
            d.values.reset();
            d.stats.reset();
            d.error = e.problem();
            const Error located(model.shards().at(r.info->shard)->path(), r.info->file_offset,
                                fmt::format("tensor {}: {}", r.info->name, e.problem()));
            problems.push_back(located.what());
        }
    }
    Out out(stdout);
    if (opt.json)
        write_json(out, model, opt, reports);
    else
        write_text(out, model, opt, reports);
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kExitInvalid;
    }
    for (const std::string &p : problems) fmt::print(stderr, "gguftool: {}\n", p);
    return problems.empty() ? kExitOk : kExitInvalid;
}

// Why `text` is not a --values count, or "" when it is one. Checked before CLI11 converts it, so
// that the message says what the option takes (CLI11's own: "Could not convert: --values = x").
std::string values_count_problem(const std::string &text) {
    uint64_t n = 0;
    const char *end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, n);
    if (text.empty() || ec != std::errc() || at != end)
        return fmt::format("'{}' is not a count (a whole number of values to print)", text);
    if (n == 0) return "takes a count of at least 1 (the number of values to print)";
    return "";
}

}  // namespace dump

Runner add_dump(CLI::App &app) {
    auto opt = std::make_shared<dump::Options>();
    auto *cmd = app.add_subcommand("dump", "Show header, metadata, tensors, values and statistics");
    cmd->add_option("FILE", opt->file, "GGUF file (any shard of a split model)")->required();
    cmd->add_flag("--json", opt->json, "Write one JSON document instead of text");
    cmd->add_flag("--no-metadata", opt->no_metadata, "Leave out the metadata key-value pairs");
    auto *no_tensors =
        cmd->add_flag("--no-tensors", opt->no_tensors, "Leave out the tensor table and summary");
    auto *glob = cmd->add_option("--tensor", opt->tensor_globs,
                                 "Only tensors whose name matches GLOB (repeatable)")
                     ->type_name("GLOB")
                     ->allow_extra_args(false);
    auto *values = cmd->add_option("--values", opt->values,
                                   "Show the first N decoded values of each selected tensor")
                       ->type_name("N")
                       ->check(CLI::Validator(dump::values_count_problem, "", "Count"));
    auto *stats =
        cmd->add_flag("--stats", opt->stats,
                      "Show min, max, mean, std and NaN/Inf counts of each selected tensor");
    no_tensors->excludes(glob)->excludes(values)->excludes(stats);
    return [opt] { return dump::run(*opt); };
}

}  // namespace gguftool::cli
