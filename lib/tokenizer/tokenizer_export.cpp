// The public entry points (gguftool/tokenizer_export.hpp).
#include "gguftool/tokenizer_export.hpp"

#include <filesystem>
#include <memory>

#include "gguftool/error.hpp"
#include "gguftool/output_file.hpp"
#include "vocab.hpp"

namespace gguftool::tokenizer {

TokenizerFiles build_tokenizer_files(const gguf::Model &model) {
    const detail::Vocab v = detail::read_vocab(model.first());
    return {detail::tokenizer_json(v), detail::tokenizer_config_json(v),
            detail::special_tokens_map_json(v)};
}

std::vector<int32_t> end_of_generation_ids(const gguf::File &file) {
    const detail::Vocab v = detail::read_vocab(file);
    return {v.eog.begin(), v.eog.end()};
}

void write_tokenizer_files(const gguf::Model &model, const std::string &dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(dir, std::nullopt, ec ? ec.message() : "not a directory");
    write_tokenizer_files(build_tokenizer_files(model), dir);
}

void write_tokenizer_files(const TokenizerFiles &files, const std::string &dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(dir, std::nullopt, ec ? ec.message() : "not a directory");
    const std::pair<const char *, const std::string *> outputs[] = {
        {"tokenizer.json", &files.tokenizer_json},
        {"tokenizer_config.json", &files.tokenizer_config_json},
        {"special_tokens_map.json", &files.special_tokens_map_json}};
    // All written, then all renamed into place, then kept: a failure leaves none of them.
    std::vector<std::unique_ptr<OutputFile>> out;
    for (const auto &[name, text] : outputs) {
        out.push_back(std::make_unique<OutputFile>((std::filesystem::path(dir) / name).string()));
        out.back()->write(text->data(), text->size());
    }
    for (auto &o : out) o->commit();
    for (auto &o : out) o->keep();
}

std::optional<TokenizerSummary> summarize_tokenizer(const gguf::File &file) {
    const gguf::MetadataEntry *m = file.find("tokenizer.ggml.model");
    if (!m || m->value.type() != gguf::ValueType::string) return std::nullopt;
    TokenizerSummary s;
    s.model = std::string(m->value.as_string());
    if (const gguf::MetadataEntry *p = file.find("tokenizer.ggml.pre");
        p && p->value.type() == gguf::ValueType::string)
        s.pre = std::string(p->value.as_string());
    if (const gguf::MetadataEntry *t = file.find("tokenizer.ggml.tokens");
        t && t->value.type() == gguf::ValueType::array)
        s.vocab_size = t->value.array_size();
    s.chat_template = file.find("tokenizer.chat_template") != nullptr;
    try {
        const detail::Vocab v = detail::read_settings(file);
        for (const auto &[name, id] : v.ids) s.special_ids.emplace_back(name, id);
        s.add_bos = v.add_bos, s.add_eos = v.add_eos, s.add_sep = v.add_sep;
        s.add_space_prefix = v.add_space_prefix;
    } catch (const Error &e) {
        s.problem = e.problem();
    }
    return s;
}

std::vector<std::string> supported_pre_tokenizers() {
    std::vector<std::string> out;
    for (const detail::PreRow &row : detail::pre_rows())
        if (row.refused.empty())
            for (const std::string_view n : row.names)
                if (!n.empty()) out.emplace_back(n);
    return out;
}

std::vector<std::pair<std::string, std::string>> refused_pre_tokenizers() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const detail::PreRow &row : detail::pre_rows())
        if (!row.refused.empty())
            for (const std::string_view n : row.names)
                out.emplace_back(std::string(n), std::string(row.refused));
    return out;
}

}  // namespace gguftool::tokenizer
