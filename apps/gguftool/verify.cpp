// gguftool verify: our decoding of every tensor against llama.cpp's, bit for bit
// (library: gguftool/verify.hpp).
//
// Exit codes (differ from the other commands): 0 every compared tensor matches, 1 a mismatch,
// 2 a usage or file error (invalid GGUF, llama.cpp's library not loadable, a reference file
// missing or unusable, an ONNX model that cannot be loaded or run).
#include "gguftool/verify.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gguftool/decoder_verify.hpp"
#include "gguftool/encoder_verify.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"
#include "output.hpp"
#include "placement.hpp"

namespace gguftool::cli {
namespace {

namespace vf = gguftool::verify;

constexpr size_t kNameColumnMax = 48;  // longer names push their line out instead of the column

struct Options {
    std::string file;
    std::string ggml_lib;
    std::vector<std::string> tensor_globs;
    bool json = false;
    unsigned threads = 0;
    std::string reference_dir;
    std::string onnx_model;
    std::string backend = "cpu";
    int device = 0;
    std::string decoder_dir;
    std::string encoder_dir;
    std::vector<int32_t> ids;
    std::string prompt;
    int steps = 4;
};

// A one-line progress bar on stderr, redrawn at most ten times a second; cleared before a table
// row is printed (stdout and stderr may be the same terminal) and drawn again after.
class ProgressBar {
public:
    void update(uint64_t done, uint64_t total) {
        done_ = done, total_ = total;
        const auto now = Clock::now();
        if (now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        draw();
    }
    void tensor_done() { ++tensors_; }
    void clear() {
        if (drawn_) fmt::print(stderr, "\r\033[K");
        drawn_ = false;
    }
    void draw() {
        constexpr int kWidth = 30;
        const double fraction = total_ ? double(done_) / double(total_) : 0.0;
        const int filled = static_cast<int>(fraction * kWidth);
        fmt::print(stderr, "\r[{}{}] {:3.0f}%  {} {} verified ", std::string(filled, '#'),
                   std::string(kWidth - filled, '.'), fraction * 100, tensors_,
                   plural(tensors_, "tensor"));
        std::fflush(stderr);
        drawn_ = true;
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point last_{};
    uint64_t done_ = 0, total_ = 0, tensors_ = 0;
    bool drawn_ = false;
};

std::string abs_diff_text(const vf::Diff &d) {
    if (std::isnan(d.max_abs_diff)) return "nan";
    if (std::isinf(d.max_abs_diff)) return "inf";
    return fmt::format("{:.6g}", d.max_abs_diff);
}

std::string ulp_text(const vf::Diff &d) {
    return d.max_ulp == vf::kUlpNaN ? "nan" : std::to_string(d.max_ulp);
}

class TextTable {
public:
    TextTable(size_t name_width, const Style &st) : w_(name_width), st_(st) {}

    void header() const {
        fmt::print("{}{:<{}}  {:<8}  {:>10}  {:>10}  {:>12}  {:>10}  status{}\n", st_.dim, "name",
                   w_, "type", "elements", "mismatches", "max abs diff", "max ULP", st_.reset);
    }

    void row(const vf::TensorResult &r) const {
        std::string mismatches = "-", diff = "-", ulp = "-", status;
        switch (r.status) {
            case vf::Status::match:
                mismatches = "0", diff = "0", ulp = "0";
                status = "match";
                if (!r.note.empty()) status += fmt::format(" ({})", r.note);
                break;
            case vf::Status::mismatch:
                mismatches = std::to_string(r.diff.mismatches);
                if (r.diff.elements) diff = abs_diff_text(r.diff), ulp = ulp_text(r.diff);
                status = fmt::format("{}MISMATCH{}", st_.bold, st_.reset);
                if (r.diff.first_mismatch)
                    status += fmt::format(" (first at element {})", *r.diff.first_mismatch);
                if (!r.note.empty()) status += ": " + r.note;
                break;
            case vf::Status::not_compared:
                status = "not compared: " + r.note;
                break;
        }
        fmt::print("{:<{}}  {:<8}  {:>10}  {:>10}  {:>12}  {:>10}  {}\n", r.name, w_, r.type,
                   r.elements, mismatches, diff, ulp, status);
    }

private:
    size_t w_;
    Style st_;
};

nlohmann::ordered_json number_or_null(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json to_json(const vf::Report &report) {
    using nlohmann::ordered_json;
    ordered_json tensors = ordered_json::array();
    for (const vf::TensorResult &r : report.tensors) {
        const bool compared = r.status != vf::Status::not_compared;
        const bool values = compared && (r.status == vf::Status::match || r.diff.elements);
        ordered_json j;
        j["name"] = r.name;
        j["type"] = r.type;
        j["elements"] = r.elements;
        j["mismatches"] = compared ? ordered_json(r.diff.mismatches) : ordered_json(nullptr);
        j["max_abs_diff"] = values ? number_or_null(r.diff.max_abs_diff) : nullptr;
        j["max_ulp"] = values && r.diff.max_ulp != vf::kUlpNaN ? ordered_json(r.diff.max_ulp)
                                                               : ordered_json(nullptr);
        j["status"] = vf::status_name(r.status);
        j["first_mismatch"] =
            r.diff.first_mismatch ? ordered_json(*r.diff.first_mismatch) : ordered_json(nullptr);
        j["note"] = r.note;
        tensors.push_back(std::move(j));
    }
    ordered_json doc;
    doc["tensors"] = std::move(tensors);
    doc["matched"] = report.matched;
    doc["mismatched"] = report.mismatched;
    doc["not_compared"] = report.not_compared;
    doc["decoding"] = report.decoding;
    doc["reference"] = report.reference;
    return doc;
}

int run(const Options &opt) {
    const Style st = style_for(stdout);
    const gguf::Model model = gguf::Model::open(opt.file);

    vf::Options o;
    o.tensor_globs = opt.tensor_globs;
    o.threads = opt.threads;
    o.ggml_lib = opt.ggml_lib;
    o.reference_dir = opt.reference_dir;
    o.onnx_model = opt.onnx_model;
    o.backend = opt.backend;
    o.device = opt.device;
    // Said once, on stderr, for a backend other than the CPU (a device's name and its driver).
    o.on_backend = [](const runtime::Backend &b) {
        if (b.name() != "cpu") fmt::print(stderr, "backend: {}\n", b.description());
    };
    o.on_placement = placement_printer(opt.backend);

    std::unique_ptr<ProgressBar> bar;
    if (::isatty(STDERR_FILENO)) {
        bar = std::make_unique<ProgressBar>();
        o.progress = [&bar](uint64_t done, uint64_t total) { bar->update(done, total); };
    }
    size_t name_width = 4;
    for (const gguf::TensorInfo &t : model.tensors())
        name_width = std::max(name_width, std::min(t.name.size(), kNameColumnMax));
    TextTable table(name_width, st);
    bool header_printed = false;
    if (!opt.json) {
        o.on_result = [&](const vf::TensorResult &r) {
            if (bar) bar->clear(), bar->tensor_done();
            if (!header_printed) table.header(), header_printed = true;
            table.row(r);
            std::fflush(stdout);
            if (bar) bar->draw();
        };
    } else if (bar) {
        o.on_result = [&](const vf::TensorResult &) { bar->tensor_done(); };
    }

    vf::Report report;
    try {
        report = vf::verify(model, o);
    } catch (...) {
        if (bar) bar->clear();
        throw;
    }
    if (bar) bar->clear();

    if (opt.json) {
        fmt::print("{}\n", to_json(report).dump(2));
    } else {
        uint64_t elements = 0;
        for (const vf::TensorResult &r : report.tensors) elements += r.elements;
        const size_t n = report.tensors.size();
        fmt::print("\n{}{} {}: {} match, {} mismatch, {} not compared{} ({} {})\n", st.bold, n,
                   plural(n, "tensor"), report.matched, report.mismatched, report.not_compared,
                   st.reset, elements, plural(elements, "element"));
        const unsigned threads = thread_count(opt.threads);
        fmt::print("decoded by {} ({} SIMD, {} {})\n", report.decoding, quant::active_target(),
                   threads, plural(threads, "thread"));
        fmt::print("compared with {}\n", report.reference);
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::perror("gguftool: writing output");
        return kExitUsage;
    }
    return report.mismatched ? kExitInvalid : kExitOk;
}

// --decoder: the exported decoder's logits against llama.cpp's, step by step.
int run_decoder(const Options &opt) {
    vf::DecoderVerifyOptions o;
    o.ids = opt.ids;
    o.prompt = opt.prompt;
    o.steps = opt.steps;
    o.threads = opt.threads;
    o.backend = opt.backend;
    o.on_placement = placement_printer(opt.backend);
    if (o.ids.empty() && o.prompt.empty()) o.prompt = "The capital of France is";
    const vf::DecoderReport r = vf::verify_decoder(opt.file, opt.decoder_dir, o);
    if (opt.json) {
        nlohmann::ordered_json j;
        j["model"] = opt.file;
        j["decoder"] = opt.decoder_dir;
        j["tokens"] = r.tokens;
        j["prompt_tokens"] = r.prompt_tokens;
        j["tolerance"] = {{"weights", r.tolerance.weights},
                          {"relative", r.tolerance.relative},
                          {"kl", r.tolerance.kl}};
        for (const vf::DecoderStep &s : r.steps)
            j["steps"].push_back({{"step", s.index},
                                  {"positions", s.positions},
                                  {"max_abs", s.max_abs},
                                  {"spread", s.spread},
                                  {"relative", s.relative},
                                  {"kl", s.kl},
                                  {"top1_agree", s.top1_agree},
                                  {"pass", s.pass}});
        j["pass"] = r.pass;
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{} against llama.cpp ({} prompt {}, {} {})\n", opt.decoder_dir, r.prompt_tokens,
                   plural(uint64_t(r.prompt_tokens), "token"), r.steps.size() - 1,
                   plural(uint64_t(r.steps.size() - 1), "step"));
        fmt::print("{:>4}  {:>9}  {:>10}  {:>9}  {:>10}  {:>10}  {:>5}\n", "step", "positions",
                   "max|Δ|", "spread", "max|Δ|/spr", "KL", "top-1");
        for (const vf::DecoderStep &s : r.steps)
            fmt::print("{:>4}  {:>9}  {:>10.3g}  {:>9.3g}  {:>10.3g}  {:>10.3g}  {:>2}/{:<2}  {}\n",
                       s.index == 0 ? std::string("fill") : std::to_string(s.index), s.positions,
                       s.max_abs, s.spread, s.relative, s.kl, s.top1_agree, s.positions,
                       s.pass ? "ok" : "MISMATCH");
        fmt::print("tokens: {} | {} (llama.cpp's greedy choices, fed to both)\n",
                   fmt::join(r.tokens.begin(), r.tokens.begin() + r.prompt_tokens, " "),
                   fmt::join(r.tokens.begin() + r.prompt_tokens, r.tokens.end(), " "));
        fmt::print(
            "tolerance ({} weights): max|Δ|/spread <= {:g}, KL <= {:g}, top-1 equal but "
            "for near ties\n",
            r.tolerance.weights, r.tolerance.relative, r.tolerance.kl);
        fmt::print("{}\n",
                   r.pass ? "decoder agrees with llama.cpp" : "decoder DIFFERS from llama.cpp");
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::perror("gguftool: writing output");
        return kExitUsage;
    }
    return r.pass ? kExitOk : kExitInvalid;
}

// --encoder: the exported encoder's vectors against llama.cpp's embeddings.
int run_encoder(const Options &opt) {
    vf::EncoderVerifyOptions o;
    o.ids = opt.ids;
    o.prompt = opt.prompt;
    o.threads = opt.threads;
    o.backend = opt.backend;
    o.on_placement = placement_printer(opt.backend);
    if (o.ids.empty() && o.prompt.empty()) o.prompt = "The capital of France is Paris.";
    const vf::EncoderReport r = vf::verify_encoder(opt.file, opt.encoder_dir, o);
    auto diff_json = [](const vf::EncoderDiff &d) {
        return nlohmann::ordered_json{{"vectors", d.vectors},       {"max_abs", d.max_abs},
                                      {"spread", d.spread},         {"relative", d.relative},
                                      {"min_cosine", d.min_cosine}, {"pass", d.pass}};
    };
    if (opt.json) {
        nlohmann::ordered_json j;
        j["model"] = opt.file;
        j["encoder"] = opt.encoder_dir;
        j["tokens"] = r.tokens;
        j["pooling"] = r.pooling;
        j["tolerance"] = {{"weights", r.tolerance.weights},
                          {"relative", r.tolerance.relative},
                          {"cosine", r.tolerance.cosine}};
        j["per_token"] = diff_json(r.tokens_diff);
        if (r.pooled_diff.vectors) j["pooled"] = diff_json(r.pooled_diff);
        j["pass"] = r.pass;
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print(
            "{} against llama.cpp's embeddings ({} {} and its first half, one padded "
            "batch; pooling {})\n",
            opt.encoder_dir, r.tokens.size(), plural(r.tokens.size(), "token"), r.pooling);
        fmt::print("{:<10}  {:>7}  {:>10}  {:>9}  {:>10}  {:>10}\n", "", "vectors", "max|Δ|",
                   "spread", "max|Δ|/spr", "min cosine");
        auto row = [](const char *what, const vf::EncoderDiff &d) {
            fmt::print("{:<10}  {:>7}  {:>10.3g}  {:>9.3g}  {:>10.3g}  {:>10.8f}  {}\n", what,
                       d.vectors, d.max_abs, d.spread, d.relative, d.min_cosine,
                       d.pass ? "ok" : "MISMATCH");
        };
        row("per token", r.tokens_diff);
        if (r.pooled_diff.vectors) row("pooled", r.pooled_diff);
        fmt::print("tokens: {}\n", fmt::join(r.tokens, " "));
        fmt::print("tolerance ({} weights): max|Δ|/spread <= {:g}, cosine >= {:g}\n",
                   r.tolerance.weights, r.tolerance.relative, r.tolerance.cosine);
        fmt::print("{}\n",
                   r.pass ? "encoder agrees with llama.cpp" : "encoder DIFFERS from llama.cpp");
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::perror("gguftool: writing output");
        return kExitUsage;
    }
    return r.pass ? kExitOk : kExitInvalid;
}

}  // namespace

Runner add_verify(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(kVerifyCommand.name, kVerifyCommand.summary);
    cmd->add_option("MODEL", opt->file, "GGUF file (any shard of a split model)")->required();
    auto *lib = cmd->add_option("--ggml-lib", opt->ggml_lib,
                                "llama.cpp's libggml-base.so (default: $GGUFTOOL_GGML_LIB, the "
                                "set-up's copy, then the system library path)")
                    ->type_name("PATH");
    cmd->add_option("--tensor", opt->tensor_globs,
                    "Only tensors whose name matches GLOB (repeatable)")
        ->type_name("GLOB")
        ->allow_extra_args(false);
    cmd->add_flag("--json", opt->json, "Write one JSON document instead of the table");
    cmd->add_option("--threads", opt->threads, "Threads (0 = all cores)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    auto *ref = cmd->add_option("--reference", opt->reference_dir,
                                "Compare with DIR/<tensor name>.npy instead of llama.cpp")
                    ->type_name("DIR");
    auto *onnx = cmd->add_option("--onnx", opt->onnx_model,
                                 "Compare the outputs of this converted model, run by the "
                                 "executor, instead of the decoder's")
                     ->type_name("MODEL.onnx");
    auto *dec = cmd->add_option("--decoder", opt->decoder_dir,
                                "Compare this decoder package (to-onnx --graph decoder), run by "
                                "the executor, with llama.cpp's logits on MODEL")
                    ->type_name("DIR");
    auto *enc = cmd->add_option("--encoder", opt->encoder_dir,
                                "Compare this encoder package (to-onnx --graph encoder), run by "
                                "the executor, with llama.cpp's embeddings on MODEL")
                    ->type_name("DIR");
    auto *ids =
        cmd->add_option("--ids", opt->ids, "With --decoder or --encoder: the prompt as token ids")
            ->delimiter(',')
            ->type_name("I,J,...");
    auto *prompt = cmd->add_option("--prompt", opt->prompt,
                                   "With --decoder or --encoder: the prompt as text, tokenized "
                                   "by llama.cpp")
                       ->type_name("TEXT")
                       ->excludes(ids);
    cmd->add_option("--steps", opt->steps, "With --decoder: single-token steps after the prompt")
        ->check(CLI::Range(0, 4096))
        ->type_name("N")
        ->capture_default_str()
        ->needs(dec);
    auto *backend = cmd->add_option("--backend", opt->backend,
                                    "With --onnx, --decoder or --encoder: the backend that runs "
                                    "the model")
                        ->check(CLI::IsMember(runtime::backend_names()))
                        ->capture_default_str();
    cmd->add_option("--device", opt->device,
                    "With --onnx: device number, for a backend with devices")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N")
        ->capture_default_str()
        ->needs(onnx);
    lib->excludes(ref);
    dec->excludes(ref)->excludes(onnx)->excludes(enc);
    enc->excludes(ref)->excludes(onnx);
    return [opt, backend, ids, prompt] {
        if (backend->count() && opt->onnx_model.empty() && opt->decoder_dir.empty() &&
            opt->encoder_dir.empty()) {
            fmt::print(stderr,
                       "gguftool verify: --backend requires --onnx, --decoder or --encoder\nRun "
                       "with --help for more information.\n");
            return kExitUsage;
        }
        if ((ids->count() || prompt->count()) && opt->decoder_dir.empty() &&
            opt->encoder_dir.empty()) {
            fmt::print(stderr,
                       "gguftool verify: --ids and --prompt require --decoder or --encoder\nRun "
                       "with --help for more information.\n");
            return kExitUsage;
        }
        // verify's own exit codes: file errors are 2 here (1 means a mismatch).
        try {
            if (!opt->decoder_dir.empty()) return run_decoder(*opt);
            if (!opt->encoder_dir.empty()) return run_encoder(*opt);
            return run(*opt);
        } catch (const std::exception &e) {
            fmt::print(stderr, "gguftool: {}\n", e.what());
            return kExitUsage;
        }
    };
}

}  // namespace gguftool::cli
