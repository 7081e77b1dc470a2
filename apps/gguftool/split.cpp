// gguftool split: a model as shards in llama.cpp gguf-split's conventions
// (gguftool/gguf_split.hpp).
#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_split.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string input;
    std::string prefix;
    uint64_t max_tensors = 0;
    std::string max_size;
    bool dry_run = false;
};

// A --max-size: a whole number of bytes, or with K, M, G or T for powers of 1000 (as gguf-split
// counts its M and G) or Ki, Mi, Gi, Ti for powers of 1024. Nullopt when it is not one (or is 0).
std::optional<uint64_t> parse_size(const std::string &text) {
    uint64_t n = 0;
    const char *end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, n);
    if (ec != std::errc() || at == text.data() || n == 0) return std::nullopt;
    const std::string unit(at, end);
    static constexpr std::pair<const char *, uint64_t> kUnits[] = {
        {"", 1},
        {"K", 1000},
        {"M", 1000 * 1000},
        {"G", 1000 * 1000 * 1000},
        {"T", uint64_t{1000} * 1000 * 1000 * 1000},
        {"Ki", 1024},
        {"Mi", 1024 * 1024},
        {"Gi", 1024 * 1024 * 1024},
        {"Ti", uint64_t{1024} * 1024 * 1024 * 1024}};
    for (const auto &[name, factor] : kUnits)
        if (unit == name) {
            if (n > UINT64_MAX / factor) return std::nullopt;
            return n * factor;
        }
    return std::nullopt;
}

std::string size_problem(const std::string &text) {
    return parse_size(text) ? ""
                            : fmt::format(
                                  "'{}' is not a size: a whole number of bytes above 0, "
                                  "optionally with K, M, G, T (powers of 1000) or Ki, "
                                  "Mi, Gi, Ti (powers of 1024)",
                                  text);
}

int run(const Options &opt) {
    const gguf::Model model = gguf::Model::open(opt.input);
    gguf::SplitLimit limit;
    limit.max_tensors = opt.max_tensors;
    if (!opt.max_size.empty()) limit.max_bytes = *parse_size(opt.max_size);  // checked by CLI11
    std::vector<gguf::OutputPlan> plans = gguf::plan_split(model, opt.prefix, limit);

    Out out(stdout);
    const size_t n = model.tensors().size();
    out.print("{}: {} {} in {} {} of at most {}\n", opt.input, n, plural(n, "tensor"), plans.size(),
              plural(plans.size(), "shard"),
              limit.max_tensors
                  ? fmt::format("{} {}", limit.max_tensors, plural(limit.max_tensors, "tensor"))
                  : fmt::format("{} bytes", limit.max_bytes));
    size_t width = 5;
    for (const auto &p : plans) width = std::max(width, p.path.size());
    out.print("  {:<{}}  {:>7}  {:>13}  {}\n", "shard", width, "tensors", "bytes", "first tensor");
    uint64_t total = 0;
    for (const auto &p : plans) {
        const std::string_view first = model.tensors()[p.first_tensor].name;
        out.print("  {:<{}}  {:>7}  {:>13}  ", p.path, width, p.data.size(), p.size);
        put_display_string(out, first, 64);
        if (p.over_limit) out.put("  (one tensor, over the limit)");
        out.put('\n');
        total += p.size;
    }
    if (opt.dry_run) {
        out.print("dry run: nothing written ({} bytes planned)\n", total);
    } else {
        out.flush();
        gguf::write_outputs(plans, /*replace=*/true);
        out.print("wrote {} {}, {} bytes\n", plans.size(), plural(plans.size(), "shard"), total);
    }
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kExitInvalid;
    }
    return kExitOk;
}

}  // namespace

Runner add_split(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(
        "split", "Split a model into shards as llama.cpp's gguf-split does (by tensors or size)");
    cmd->add_option("IN", opt->input, "GGUF file (or any shard of a split model)")->required();
    cmd->add_option("OUT_PREFIX", opt->prefix,
                    "Shards are written as OUT_PREFIX-00001-of-0000N.gguf ...")
        ->required();
    // Exactly one of the two limits.
    auto *limit = cmd->add_option_group("limit", "How to cut (exactly one)");
    auto *tensors =
        limit->add_option("--max-tensors", opt->max_tensors, "At most N tensors a shard")
            ->type_name("N")
            ->check(CLI::PositiveNumber);
    auto *size = limit
                     ->add_option("--max-size", opt->max_size,
                                  "Shard files of at most SIZE bytes, header included (500M, 2G, "
                                  "1536Mi)")
                     ->type_name("SIZE")
                     ->check(CLI::Validator(size_problem, "", "Size"));
    tensors->excludes(size);
    limit->require_option(1, 1);
    cmd->add_flag("--dry-run", opt->dry_run, "Print the shards and write nothing");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
