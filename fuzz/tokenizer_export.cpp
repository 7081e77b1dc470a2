// Fuzz target: the tokenizer exporter on mutated vocabularies. Any bytes must give the three
// documents (which must then parse as JSON) or a gguftool::Error: never a crash.
#include "gguftool/tokenizer_export.hpp"

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "gguftool/error.hpp"
#include "gguftool/gguf.hpp"

using namespace gguftool;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fuzz::MemoryFile file;
    const std::string &path = file.write(data, size);
    try {
        const gguf::Model model = gguf::Model::open(path);
        const tokenizer::TokenizerFiles files = tokenizer::build_tokenizer_files(model);
        for (const std::string *doc :
             {&files.tokenizer_json, &files.tokenizer_config_json, &files.special_tokens_map_json})
            if (nlohmann::json::parse(*doc, nullptr, false).is_discarded()) std::abort();
        (void)tokenizer::summarize_tokenizer(model.first());
    } catch (const Error &) {
    }
    return 0;
}
