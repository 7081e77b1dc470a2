// gguftool to-onnx: a GGUF model as an ONNX graph (library: gguftool/onnx_export.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/onnx_export.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string file;
    std::string output;
    std::string graph = "tensors";
    std::string weights = "packed";
    std::optional<int> accuracy_level;
    std::string mode = "packed";
    std::string output_dtype = "float";
    std::vector<std::string> tensor_globs;
    bool external_data = false;
    bool keep_plain_types = false;
    std::optional<uint64_t> max_array;
    std::optional<int> opset;
    unsigned threads = 0;
    bool quiet = false;
};

// A one-line progress bar on stderr, redrawn at most ten times a second.
class ProgressBar {
public:
    void update(uint64_t done, uint64_t total) {
        const auto now = Clock::now();
        if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        const double seconds = std::chrono::duration<double>(now - start_).count();
        const double rate = seconds > 0 ? done / seconds : 0;
        const double fraction = total ? double(done) / double(total) : 1.0;
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(fraction * kWidth);
        std::string left = "--:--";
        if (rate > 0) {
            const auto s = static_cast<uint64_t>((total - done) / rate);
            left = fmt::format("{}:{:02}", s / 60, s % 60);
        }
        fmt::print(stderr, "\r[{}{}] {:3.0f}%  {} / {}  {}/s  {} left ", std::string(filled, '#'),
                   std::string(kWidth - filled, '.'), fraction * 100, human_bytes(done),
                   human_bytes(total), human_bytes(rate), left);
        drawn_ = true;
    }
    void finish() {
        if (drawn_) fmt::print(stderr, "\n");
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point start_ = Clock::now();
    Clock::time_point last_{};
    bool drawn_ = false;
};

int usage(const std::string &what) {
    fmt::print(stderr, "gguftool to-onnx: {}\nRun with --help for more information.\n", what);
    return kExitUsage;
}

// --graph decoder or encoder: the model as a runnable package (gguftool/decoder_export.hpp).
int run_decoder(const Options &opt, std::unique_ptr<ProgressBar> bar) {
    decoder::Options o;
    o.graph = opt.graph == "encoder" ? decoder::Graph::encoder : decoder::Graph::decoder;
    o.opset = opt.opset;
    o.weight_type = *onnx_export::output_type_from_name(opt.output_dtype);
    o.threads = opt.threads;
    o.weights = opt.weights == "nbits" ? decoder::Weights::nbits : decoder::Weights::packed;
    if (opt.accuracy_level) o.accuracy_level = *opt.accuracy_level;  // else the library's
    if (bar) o.progress = [&bar](uint64_t done, uint64_t total) { bar->update(done, total); };
    const gguf::Model model = gguf::Model::open(opt.file);
    decoder::Result r;
    try {
        r = decoder::export_decoder(model, opt.output, o);
    } catch (...) {
        if (bar) bar->finish();
        throw;
    }
    if (bar) bar->finish();
    if (opt.quiet) return kExitOk;
    const decoder::Hparams &h = r.hparams;
    static constexpr const char *kPooling[] = {"none", "mean", "cls", "last"};
    const std::string kind =
        o.graph == decoder::Graph::decoder
            ? std::string("decoder")
            : fmt::format("encoder ({}, pooling {})", h.causal ? "causal" : "bidirectional",
                          kPooling[int(h.pooling)]);
    fmt::print(
        "{}: {} {}, {} {}, {} heads ({} KV) of {}, vocabulary {}; {} nodes at opset {}, {} "
        "weights as DequantizePacked{}, {} of tensor data{}\n",
        r.directory, h.arch, kind, h.n_layer, plural(uint64_t(h.n_layer), "layer"), h.n_head,
        h.n_head_kv, h.head_dim, h.n_vocab, r.nodes, r.opset, r.packed,
        r.opset != 29 ? " (lowered)" : "", human_bytes(double(r.tensor_bytes)),
        r.tokenizer ? "; tokenizer.json" : "");
    for (const auto &[form, count] : r.forms) fmt::print("  {:<44} {}\n", form, count);
    for (const std::string &note : r.notes) fmt::print(stderr, "gguftool: note: {}\n", note);
    return kExitOk;
}

int run(const Options &opt) {
    std::unique_ptr<ProgressBar> bar;
    if (!opt.quiet && ::isatty(STDERR_FILENO)) bar = std::make_unique<ProgressBar>();
    if (opt.graph == "decoder" || opt.graph == "encoder") {
        if (opt.mode != "packed" || !opt.tensor_globs.empty() || opt.keep_plain_types ||
            opt.external_data || opt.max_array)
            return usage(fmt::format(
                "--graph {} takes --weights, --accuracy-level, --opset, --output-dtype and "
                "--threads only (its weights are DequantizePacked or MatMulNBits, its data "
                "external)",
                opt.graph));
        if (opt.output_dtype != "float" && opt.output_dtype != "float16")
            return usage(fmt::format("--graph {}: --output-dtype is float or float16", opt.graph));
        return run_decoder(opt, std::move(bar));
    }
    if (opt.weights != "packed" || opt.accuracy_level)
        return usage("--weights and --accuracy-level apply to --graph decoder and encoder");
    onnx_export::Options o;
    o.mode = *onnx_export::mode_from_name(opt.mode);  // CLI11 checked the names
    o.output_type = *onnx_export::output_type_from_name(opt.output_dtype);
    o.tensor_globs = opt.tensor_globs;
    o.external_data = opt.external_data;
    o.keep_plain_types = opt.keep_plain_types;
    o.max_array = opt.max_array;
    o.threads = opt.threads;
    o.opset = opt.opset;
    if (bar) o.progress = [&bar](uint64_t done, uint64_t total) { bar->update(done, total); };

    const gguf::Model model = gguf::Model::open(opt.file);
    onnx_export::Result r;
    try {
        r = onnx_export::export_model(model, opt.output, o);
    } catch (...) {
        if (bar) bar->finish();
        throw;
    }
    if (bar) bar->finish();
    if (opt.quiet) return kExitOk;
    for (const std::string &note : r.notes) fmt::print(stderr, "gguftool: note: {}\n", note);
    std::string forms;
    if (r.unpacked) forms += fmt::format(", {} as Unpack", r.unpacked);
    if (r.packed) forms += fmt::format(", {} as DequantizePacked", r.packed);
    fmt::print("{}: {} {} ({} mode{}), {} of tensor data", r.model_path, r.tensors,
               plural(r.tensors, "tensor"), opt.mode, forms, human_bytes(double(r.tensor_bytes)));
    if (opt.opset) {
        fmt::print(", lowered to opset {} ({} {}", r.opset, r.lowered_nodes,
                   plural(r.lowered_nodes, "node"));
        if (r.table_bytes) fmt::print(", {} of lookup tables", human_bytes(double(r.table_bytes)));
        fmt::print(")");
    }
    if (!r.data_path.empty())
        fmt::print(" in {}", std::filesystem::path(r.data_path).filename().string());
    fmt::print("\n");
    return kExitOk;
}

}  // namespace

Runner add_to_onnx(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(kToOnnxCommand.name, kToOnnxCommand.summary);
    cmd->add_option("FILE", opt->file, "GGUF file (any shard of a split model)")->required();
    cmd->add_option("OUTPUT", opt->output,
                    "ONNX file to write (--graph decoder or encoder: the package directory, new)")
        ->required();
    std::vector<std::string_view> encoders;  // the encoder-only rows
    const std::vector<std::string_view> decoders = decoder::architectures();
    for (std::string_view a : decoder::architectures(decoder::Graph::encoder))
        if (std::ranges::find(decoders, a) == decoders.end()) encoders.push_back(a);
    cmd->add_option("--graph", opt->graph,
                    fmt::format("tensors: every tensor as a graph output; decoder: the model with "
                                "its KV cache ({}); encoder: each token's hidden state and the "
                                "pooled embedding, for embeddings (those and {})",
                                fmt::join(decoders, ", "), fmt::join(encoders, ", ")))
        ->check(CLI::IsMember({"tensors", "decoder", "encoder"}))
        ->capture_default_str();
    cmd->add_option(
           "--weights", opt->weights,
           "--graph decoder or encoder: packed (DequantizePacked on the GGUF bytes) or nbits "
           "(onnxruntime's MatMulNBits on the repacked blocks, every format; opset 21 "
           "unless --opset)")
        ->check(CLI::IsMember({"packed", "nbits"}))
        ->capture_default_str();
    cmd->add_option("--accuracy-level", opt->accuracy_level,
                    "--weights nbits: MatMulNBits accuracy_level (4, the default: int8 "
                    "activations, as llama.cpp; 0: float activations, slower in onnxruntime)")
        ->check(CLI::IsMember({0, 1, 2, 3, 4}))
        ->type_name("N");
    cmd->add_option("--mode", opt->mode,
                    "packed: DequantizePacked per quantized tensor; unpack: Unpack and standard "
                    "operators where the format allows; dequantized: decoded weights")
        ->check(CLI::IsMember({"packed", "unpack", "dequantized"}))
        ->capture_default_str();
    cmd->add_option("--output-dtype", opt->output_dtype,
                    "Type of the decoded tensors and of the plain f16/bf16/f32/f64 tensors "
                    "(converted, rounded once to nearest even)")
        ->check(CLI::IsMember({"float", "float16", "bfloat16", "double"}))
        ->capture_default_str();
    cmd->add_option("--tensor", opt->tensor_globs,
                    "Only tensors whose name matches GLOB (repeatable)")
        ->type_name("GLOB")
        ->allow_extra_args(false);
    cmd->add_flag("--keep-plain-types", opt->keep_plain_types,
                  "Keep plain f16/bf16/f32/f64 tensors in their stored type and bytes");
    cmd->add_flag("--external-data", opt->external_data,
                  "Put tensor data in OUTPUT.data even when the model is under 2 GB");
    cmd->add_option("--max-array", opt->max_array, "Keep at most N elements of each metadata array")
        ->type_name("N");
    cmd->add_option("--opset", opt->opset,
                    "Write opset N (17-26) instead of 29: DequantizePacked and Unpack lowered to "
                    "standard operators, which onnxruntime runs")
        ->type_name("N")
        ->check(CLI::Range(lower::kMinOpset, lower::kMaxOpset));
    cmd->add_option("--threads", opt->threads,
                    "Decoding threads for --mode dequantized and plain conversions (0: all cores)")
        ->type_name("N");
    cmd->add_flag("-q,--quiet", opt->quiet, "No progress bar, summary or notes");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
