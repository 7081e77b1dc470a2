// gguftool lower: an ONNX model's DequantizePacked and Unpack nodes rewritten as standard
// operators of an older opset, so that onnxruntime and other runtimes run it (gguftool/lower.hpp).
#include "gguftool/lower.hpp"

#include <fmt/format.h>

#include "commands.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string input;
    std::string output;
    int opset = lower::kDefaultOpset;
    bool quiet = false;
};

int run(const Options &opt) {
    const lower::FileResult r = lower::lower_file(opt.input, opt.output, {opt.opset});
    if (opt.quiet) return kExitOk;
    const lower::Report &rep = r.report;
    fmt::print("{}: opset {}, {} DequantizePacked and {} Unpack {} lowered to {} {}", opt.output,
               rep.opset, rep.dequantize_packed, rep.unpack,
               plural(rep.dequantize_packed + rep.unpack, "node"), rep.nodes_added,
               plural(rep.nodes_added, "node"));
    if (rep.table_bytes) fmt::print(", {} of lookup tables", human_bytes(double(rep.table_bytes)));
    fmt::print("\n");
    for (const std::string &f : r.data_files) fmt::print("{}: external data copied\n", f);
    return kExitOk;
}

}  // namespace

Runner add_lower(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(kLowerCommand.name, kLowerCommand.summary);
    cmd->add_option("INPUT", opt->input, "ONNX model to lower")->required();
    cmd->add_option("OUTPUT", opt->output, "ONNX file to write")->required();
    cmd->add_option("--opset", opt->opset,
                    "Target default-domain opset: BitwiseAnd from 18, BitCast from 26")
        ->check(CLI::Range(lower::kMinOpset, lower::kMaxOpset))
        ->capture_default_str();
    cmd->add_flag("-q,--quiet", opt->quiet, "No summary");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
