// gguftool generate: text from a decoder package, streamed as it comes (library:
// gguftool/generate.hpp).
#include "gguftool/generate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gguftool/runtime.hpp"
#include "placement.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string package;
    std::vector<int32_t> ids;
    std::string prompt;
    int max_new = 128;
    generate::Sampling sampling;
    std::string backend = "cpu";
    int device = 0;
    unsigned threads = 0;
    bool json = false;
    bool chat = false;
};

int run(const Options &opt) {
    if (opt.chat) {
        // Chat templates are Jinja programs; Debian 12 packages no Jinja for C++ (jinja2cpp and
        // minja are not packaged), and the project does not write its own.
        fmt::print(stderr,
                   "gguftool generate: --chat: no Jinja implementation for C++ can be had on "
                   "Debian 12 to run the package's chat template; apply it with transformers.js "
                   "(tokenizer.apply_chat_template) and pass the text with --prompt\n");
        return kExitUsage;
    }
    generate::Options o;
    o.ids = opt.ids;
    o.prompt = opt.prompt;
    o.max_new = opt.max_new;
    o.sampling = opt.sampling;
    o.backend = opt.backend;
    o.device = opt.device;
    o.threads = opt.threads;
    o.on_placement = placement_printer(opt.backend);
    if (!opt.json)
        o.on_text = [](std::string_view text) {
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
        };
    const generate::Result r = generate::generate(opt.package, o);
    if (opt.json) {
        nlohmann::ordered_json j;
        j["prompt_ids"] = r.prompt_ids;
        j["ids"] = r.ids;
        j["text"] = r.text;
        j["stopped"] = r.stopped;
        j["prompt_tokens_per_s"] = r.prompt_tokens_per_s();
        j["tokens_per_s"] = r.tokens_per_s();
        fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
        if (r.text.empty()) fmt::print("{}", fmt::join(r.ids, " "));  // no tokenizer.json
        fmt::print("\n");
        fmt::print(stderr,
                   "prompt: {} tokens, {:.1f} tokens/s; generated: {} tokens ({}), {:.1f} "
                   "tokens/s\n",
                   r.prompt_ids.size(), r.prompt_tokens_per_s(), r.ids.size(),
                   r.stopped ? "stopped at an end-of-generation token" : "the budget",
                   r.tokens_per_s());
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::perror("gguftool: writing output");
        return kExitUsage;
    }
    return kExitOk;
}

}  // namespace

Runner add_generate(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(kGenerateCommand.name, kGenerateCommand.summary);
    cmd->add_option("PACKAGE", opt->package, "Decoder package (to-onnx --graph decoder)")
        ->required();
    auto *ids = cmd->add_option("--ids", opt->ids, "The prompt as token ids")
                    ->delimiter(',')
                    ->type_name("I,J,...");
    auto *prompt = cmd->add_option("--prompt", opt->prompt,
                                   "The prompt as text, encoded by the package's tokenizer.json")
                       ->type_name("TEXT")
                       ->excludes(ids);
    cmd->add_option("-n,--max-tokens", opt->max_new, "Tokens to generate at most")
        ->check(CLI::Range(1, 1 << 20))
        ->type_name("N")
        ->capture_default_str();
    cmd->add_option("--temperature", opt->sampling.temperature, "0: greedy")
        ->check(CLI::NonNegativeNumber)
        ->type_name("T")
        ->capture_default_str();
    cmd->add_option("--top-k", opt->sampling.top_k, "Sample among the K likeliest (0: all)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("K")
        ->capture_default_str();
    cmd->add_option("--top-p", opt->sampling.top_p,
                    "Sample among the likeliest whose probability reaches P (1: all)")
        ->check(CLI::Range(0.0, 1.0))
        ->type_name("P")
        ->capture_default_str();
    cmd->add_option("--seed", opt->sampling.seed, "The draw's seed (the same seed, the same text)")
        ->type_name("S")
        ->capture_default_str();
    cmd->add_option("--backend", opt->backend, "The backend that runs the model")
        ->check(CLI::IsMember(runtime::backend_names()))
        ->capture_default_str();
    cmd->add_option("--device", opt->device, "Device number, for a backend with devices")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N")
        ->capture_default_str();
    cmd->add_option("--threads", opt->threads, "Threads (0 = all cores)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    cmd->add_flag("--json", opt->json,
                  "One JSON object at the end (prompt_ids, ids, text, stopped, "
                  "prompt_tokens_per_s, tokens_per_s) instead of the text as it comes");
    cmd->add_flag("--chat", opt->chat,
                  "Apply the package's chat template (not available: no C++ Jinja on Debian 12)");
    return [opt, ids, prompt] {
        if (!ids->count() && !prompt->count()) {
            fmt::print(stderr,
                       "gguftool generate: --ids or --prompt is required\nRun with --help for "
                       "more information.\n");
            return kExitUsage;
        }
        return run(*opt);
    };
}

}  // namespace gguftool::cli
