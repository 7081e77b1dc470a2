// gguftool tokenizer: a GGUF vocabulary as Hugging Face's tokenizer.json, tokenizer_config.json
// and special_tokens_map.json, tokenizing as llama.cpp does (gguftool/tokenizer_export.hpp).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "gguftool/tokenizer_export.hpp"

namespace gguftool::cli {
namespace {

struct Options {
    std::string model, dir;
    bool quiet = false;
};

int run(const Options &o) {
    const auto start = std::chrono::steady_clock::now();
    const gguf::Model model = gguf::Model::open(o.model);
    // Everything is built (and every check passed) before the directory is made or a file written.
    const tokenizer::TokenizerFiles files = tokenizer::build_tokenizer_files(model);
    std::error_code ec;
    if (!std::filesystem::exists(o.dir, ec) && !std::filesystem::create_directories(o.dir, ec))
        throw Error(o.dir, std::nullopt, "cannot create the directory: " + ec.message());
    tokenizer::write_tokenizer_files(files, o.dir);
    if (!o.quiet) {
        const auto s = tokenizer::summarize_tokenizer(model.first());
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        fmt::print(
            "{}: tokenizer.json ({} bytes), tokenizer_config.json, special_tokens_map.json: "
            "{} tokens, model {}{}{} ({:.2f} s)\n",
            o.dir, files.tokenizer_json.size(), s->vocab_size, s->model,
            s->pre.empty() ? "" : ", pre ", s->pre, seconds);
    }
    return kExitOk;
}

}  // namespace

Runner add_tokenizer(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(
        "tokenizer",
        "Write a GGUF vocabulary as tokenizer.json + tokenizer_config.json (Hugging Face), "
        "tokenizing as llama.cpp does");
    cmd->add_option("MODEL", opt->model, "GGUF file (or any shard; a vocab-only file works)")
        ->required();
    cmd->add_option("OUT_DIR", opt->dir, "Directory for the files (made if missing)")->required();
    cmd->add_flag("-q,--quiet", opt->quiet, "Print nothing on success");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
