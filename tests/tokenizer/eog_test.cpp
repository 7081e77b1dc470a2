// llama.cpp's end-of-generation set (tokenizer::end_of_generation_ids) against libllama's
// llama_vocab_is_eog on every id of every vocabulary of llama.cpp's tree, also with the EOS key set
// as the instruct models have it; then the decoder package's generation_config.json and
// config.json, and transformers.js' generate() stopping at an end-of-generation id that is not
// the GGUF's EOS.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/output_file.hpp"
#include "gguftool/tokenizer.hpp"
#include "gguftool/tokenizer_export.hpp"
#include "llama_vocabs.hpp"
#include "process.hpp"
#include "tiny_decoder.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kNode = GGUFTOOL_NODE;
const std::string kGenerateDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/ort/decoder_tjs.mjs";

std::shared_ptr<const reference::LlamaLib> llama() {
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama is not available: " + why);
    return lib;
}

std::string work_dir(const std::string &name) {
    const fs::path d = fs::path(GGUFTOOL_BINARY_DIR) / "tokenizer-test" / "eog" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

// Every id libllama says generation stops at.
std::vector<int32_t> llama_eog(const std::string &gguf) {
    reference::LlamaModel::Options o;
    o.vocab_only = true;
    const reference::LlamaModel m(llama(), gguf, o);
    std::vector<int32_t> out;
    for (int32_t id = 0; id < m.n_vocab(); ++id)
        if (m.is_eog(id)) out.push_back(id);
    return out;
}

std::vector<int32_t> derived_eog(const std::string &gguf) {
    return tokenizer::end_of_generation_ids(*gguf::File::open(gguf));
}

// `src` with metadata `key` set to the uint32 `value`, written to `dst` as gguftool edit writes it
// (the header rebuilt, the tensor data copied unchanged).
void set_key(const std::string &src, const std::string &dst, const std::string &key,
             uint32_t value) {
    const auto f = gguf::File::open(src);
    gguf::Header h;
    bool found = false;
    for (const gguf::MetadataEntry &e : f->metadata()) {
        if (e.key == key) {
            h.metadata.push_back({key, gguf::MetaValue::u32(value)});
            found = true;
        } else {
            h.metadata.push_back(gguf::MetadataItem::of(e));
        }
    }
    if (!found) h.metadata.push_back({key, gguf::MetaValue::u32(value)});
    h.version = f->version();
    h.order = f->byte_order();
    h.alignment = gguf::alignment_of(h.metadata);
    std::vector<gguf::TensorData> data;
    for (const gguf::TensorInfo &t : f->tensors()) {
        h.tensors.push_back({std::string(t.name), static_cast<uint32_t>(t.type),
                             std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims),
                             t.offset});
        data.push_back(gguf::TensorData::copy(*f, t));
    }
    OutputFile out(dst);
    gguf::write_model(out, h, data);
    out.commit();
    out.keep();
}

std::string show(const std::vector<int32_t> &ids) {
    std::string s;
    for (const int32_t id : ids) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
    }
    return s;
}

// The derived set is libllama's, id for id, on every vocabulary of llama.cpp's tree.
TEST(EndOfGeneration, EveryLlamaVocabIsLlamaCpps) {
    int n = 0;
    for (const auto &e : fs::directory_iterator(testkit::llama_vocab_dir())) {
        if (e.path().extension() != ".gguf") continue;
        const std::string gguf = e.path().string();
        SCOPED_TRACE(gguf);
        const std::vector<int32_t> want = llama_eog(gguf);
        EXPECT_EQ(derived_eog(gguf), want);
        std::cout << e.path().filename().string() << ": end of generation at " << show(want)
                  << "\n";
        ++n;
    }
    EXPECT_GE(n, 19);
}

// The instruct models' settings: the EOS key set to the chat turn's end, as Llama 3.x Instruct
// (<|eot_id|>), Qwen2.5/3 Instruct (<|im_end|>) and Phi-3.5-mini-instruct (<|endoftext|>) ship it.
TEST(EndOfGeneration, InstructSettingsAreLlamaCpps) {
    struct Case {
        const char *vocab;
        uint32_t eos;
        const char *text;
    };
    for (const Case &c :
         {Case{"llama-bpe", 128009, "<|eot_id|>"}, Case{"qwen2", 151645, "<|im_end|>"},
          Case{"phi-3", 32000, "<|endoftext|>"}}) {
        SCOPED_TRACE(c.vocab);
        const std::string src = testkit::llama_vocab_dir() + "/ggml-vocab-" + c.vocab + ".gguf";
        const std::string gguf = work_dir(c.vocab) + "/instruct.gguf";
        set_key(src, gguf, "tokenizer.ggml.eos_token_id", c.eos);
        reference::LlamaModel::Options o;
        o.vocab_only = true;
        const reference::LlamaModel m(llama(), gguf, o);
        ASSERT_EQ(m.eos(), int32_t(c.eos));
        EXPECT_EQ(m.token_to_piece(int32_t(c.eos), true), c.text);
        const std::vector<int32_t> want = llama_eog(gguf);
        EXPECT_EQ(derived_eog(gguf), want);
        EXPECT_TRUE(std::count(want.begin(), want.end(), int32_t(c.eos)));
        std::cout << c.vocab << " with EOS " << c.eos << ": end of generation at " << show(want)
                  << "\n";
    }
}

json read_json(const std::string &path) {
    std::ifstream in(path);
    return json::parse(in);
}

std::vector<int32_t> eos_list(const json &j) {
    if (j.at("eos_token_id").is_array()) return j["eos_token_id"].get<std::vector<int32_t>>();
    return {j["eos_token_id"].get<int32_t>()};
}

decoder::Result export_package(const std::string &gguf, const std::string &dir) {
    decoder::Options o;
    o.opset = 21;  // standard operators: onnxruntime runs it
    return decoder::export_decoder(gguf::Model::open(gguf), dir, o);
}

// Greedy generation in transformers.js (tests/ort/decoder_tjs.mjs): prompt and generated ids.
std::vector<int32_t> generate(const std::string &package, const std::vector<int32_t> &prompt,
                              int max_new) {
    if (kNode.empty()) throw std::runtime_error("node was not found by CMake");
    std::string ids;
    for (const int32_t t : prompt) {
        if (!ids.empty()) ids += ',';
        ids += std::to_string(t);
    }
    const testkit::ProcessResult r =
        testkit::run({kNode, kGenerateDriver, package, ids, std::to_string(max_new)});
    if (r.status != 0) throw std::runtime_error("transformers.js failed: " + r.err);
    return json::parse(r.out).get<std::vector<int32_t>>();
}

// The package lists the whole set as eos_token_id in generation_config.json and config.json, and
// transformers.js stops at an end-of-generation id that is not the GGUF's EOS: the tiny decoder
// (EOS </s> 2; <|endoftext|> 383 ends generation by its text) with the EOT key set to the token
// its greedy generation picks at the fourth step.
TEST(EndOfGeneration, DecoderPackageStopsAtEvery) {
    const std::string dir = work_dir("package");
    const std::string gguf = dir + "/tiny.gguf";
    testkit::write_tiny_decoder("llama", gguf);
    EXPECT_EQ(derived_eog(gguf), (std::vector<int32_t>{2, 383}));
    EXPECT_EQ(llama_eog(gguf), (std::vector<int32_t>{2, 383}));
    export_package(gguf, dir + "/plain");
    for (const char *f : {"generation_config.json", "config.json"})
        EXPECT_EQ(eos_list(read_json(dir + "/plain/" + f)), (std::vector<int32_t>{2, 383})) << f;

    const std::vector<int32_t> prompt = {1, 17, 42, 300, 7, 99};
    const std::vector<int32_t> free_run = generate(dir + "/plain", prompt, 8);
    ASSERT_EQ(free_run.size(), prompt.size() + 8) << "stopped early: " << show(free_run);
    const std::vector<int32_t> generated(free_run.begin() + long(prompt.size()), free_run.end());
    // The first token from the fourth step on that was not generated before.
    size_t k = 3;
    while (k < generated.size() &&
           std::count(generated.begin(), generated.begin() + long(k), generated[k]))
        ++k;
    ASSERT_LT(k, generated.size()) << show(generated);
    const int32_t stop = generated[k];

    const std::string eot = dir + "/eot.gguf";
    set_key(gguf, eot, "tokenizer.ggml.eot_token_id", uint32_t(stop));
    std::vector<int32_t> want_set = {2, 383, stop};
    std::sort(want_set.begin(), want_set.end());
    EXPECT_EQ(llama_eog(eot), want_set);
    EXPECT_EQ(derived_eog(eot), want_set);
    export_package(eot, dir + "/eot");
    for (const char *f : {"generation_config.json", "config.json"})
        EXPECT_EQ(eos_list(read_json(dir + "/eot/" + f)), want_set) << f;
    EXPECT_EQ(read_json(dir + "/eot/config.json")["bos_token_id"], 1);

    const std::vector<int32_t> stopped = generate(dir + "/eot", prompt, 8);
    std::vector<int32_t> want = prompt;
    want.insert(want.end(), generated.begin(), generated.begin() + long(k) + 1);
    EXPECT_EQ(stopped, want) << "generated without the EOT key: " << show(generated);

    // The C++ tokenizer of the package knows the set (from generation_config.json).
    const tokenizer::Tokenizer t = tokenizer::Tokenizer::load(dir + "/eot");
    EXPECT_EQ(t.end_of_generation_ids(), want_set);
    EXPECT_TRUE(t.is_end_of_generation(stop));
    EXPECT_FALSE(t.is_end_of_generation(generated[0]));
}

}  // namespace
}  // namespace gguftool
