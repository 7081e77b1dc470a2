// gguftool's tokenizer export against llama.cpp: its own test vectors (models/ggml-vocab-*.gguf
// with .inp/.out, from the pinned release's source: llama_vocabs.hpp) tokenized by transformers.js
// from the exported files, and llama_tokenize of libllama (a vocab-only load) on more text, with
// and without BOS/EOS, plus detokenization. Then the refusals and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "gguftool/gguf_writer.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/tokenizer_export.hpp"
#include "llama_vocabs.hpp"
#include "process.hpp"
#include "tiny_decoder.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kNode = GGUFTOOL_NODE;
const std::string kDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/tokenizer/tokenize_tjs.mjs";

// The vocabularies of llama.cpp's tree with vectors, and those without (live comparison only).
const std::vector<std::string> kWithVectors = {
    "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
    "gemma-4",  "gpt-2",     "llama-bpe",      "llama-spm",    "mpt",
    "phi-3",    "qwen2",     "qwen35",         "refact",       "starcoder"};
const std::vector<std::string> kWithoutVectors = {"aquila", "baichuan", "gpt-neox"};

// Text beyond the vectors: multilingual, code, whitespace runs, emoji, numbers, chat markup.
const std::vector<std::string> kExtraTexts = {
    "Hello, world! How are you doing today?",
    "  two leading spaces and two trailing  ",
    "\t\ttabs\tand\nnew\n\nlines\r\n",
    "    indented code: for (int i = 0; i < 10; ++i) { x += i * 2; }",
    "def f(x):\n    return x ** 2  # square\n",
    "Ünïcödé façade naïve café résumé Ångström",
    "Привет, мир! ПриветМир CamelCase ΑλφαΒήτα",
    "日本語のテキストと中文文本，還有한국어 텍스트。",
    "مرحبا بالعالم ١٢٣٤٥ नमस्ते दुनिया",
    "emoji 🦙🚀 😶‍🌫️ 👍🏽 family 👨‍👩‍👧‍👦",
    "numbers 1 12 123 1234 12345 123456 3.14159 1,000,000 0x1F",
    "I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like tea? We'Ve "
    "a'lL",
    "~ ~~ ~~~ tilde~test --- === ... !!! ???",
    "<s>Hello</s> <|endoftext|>after<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n4<|end|>",
    "[CLS] masked [MASK] text [SEP]",
    "",
    " ",
    "\n",
    "a",
};

struct Encoded {
    std::vector<std::vector<std::vector<int>>> ids;  // [text][add_special false/true]
    std::vector<std::string> decoded;
};

// transformers.js on the files in `dir`.
Encoded tjs_encode(const std::string &dir, const std::vector<std::string> &texts) {
    if (kNode.empty()) throw std::runtime_error("node was not found by CMake");
    testkit::ProcessOptions o;
    o.stdin_data = json{{"texts", texts}, {"add_special", {false, true}}}.dump();
    o.timeout = std::chrono::minutes(5);
    const testkit::ProcessResult r = testkit::run({kNode, kDriver, dir}, o);
    if (r.status != 0) throw std::runtime_error("transformers.js failed: " + r.err);
    const json j = json::parse(r.out);
    return {j["ids"].get<std::vector<std::vector<std::vector<int>>>>(),
            j["decoded"].get<std::vector<std::string>>()};
}

std::string export_dir(const std::string &name) {
    const fs::path d = fs::path(GGUFTOOL_BINARY_DIR) / "tokenizer-test" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

std::shared_ptr<const reference::LlamaLib> llama() {
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama is not available: " + why);
    return lib;
}

std::string show(const std::vector<int> &ids) {
    std::string s;
    for (const int id : ids) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
    }
    return s;
}

// Compares transformers.js with llama.cpp live on `texts` (parse_special on, add_special off and
// on) and the round trip; returns the counts for the report.
struct Counts {
    int matched = 0, total = 0, roundtrips = 0, roundtrip_total = 0, known = 0;
};
// Known differences, each with its reason; counted and reported, not failed.
struct Known {
    std::string vocab;
    size_t extra_text;  // index into kExtraTexts
    const char *why;
};
const std::vector<Known> kKnown = {
    // WPM with strip_accents: llama.cpp's NFD table leaves Hangul syllables whole and strips
    // every mark; transformers.js's NFD decomposes Hangul into jamo and keeps spacing marks.
    {"bert-bge", 7, "NFD of Hangul"},
    {"bert-bge", 8, "Devanagari marks under strip_accents"},
};
bool known(const std::string &vocab, const std::string &text) {
    return std::any_of(kKnown.begin(), kKnown.end(), [&](const Known &k) {
        return k.vocab == vocab && kExtraTexts[k.extra_text] == text;
    });
}
// roundtrip: whether to hold transformers.js's decoding to llama.cpp's (not for WordPiece, whose
// decoder drops the space before the first word that llama.cpp keeps).
Counts compare_live(const std::string &gguf, const std::string &dir,
                    const std::vector<std::string> &texts, const std::string &vocab = "",
                    bool roundtrip = true) {
    reference::LlamaModel::Options opt;
    opt.vocab_only = true;
    const reference::LlamaModel m(llama(), gguf, opt);
    const Encoded got = tjs_encode(dir, texts);
    Counts c;
    for (size_t i = 0; i < texts.size(); ++i) {
        if (known(vocab, texts[i])) {
            ++c.known;
            continue;
        }
        for (int add = 0; add < 2; ++add) {
            const std::vector<int32_t> want = m.tokenize(texts[i], add == 1, true);
            const std::vector<int> w(want.begin(), want.end());
            ++c.total;
            if (w == got.ids[i][size_t(add)])
                ++c.matched;
            else
                ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                              << " add_special=" << add << "\n  llama.cpp:       " << show(w)
                              << "\n  transformers.js: " << show(got.ids[i][size_t(add)]);
        }
        // Detokenization: where llama.cpp gives the text back, transformers.js must too.
        const std::vector<int32_t> ids = m.tokenize(texts[i], false, true);
        if (roundtrip && m.detokenize(ids, false, true) == texts[i]) {
            ++c.roundtrip_total;
            if (got.decoded[i] == texts[i])
                ++c.roundtrips;
            else
                ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                              << " decodes as " << json(got.decoded[i]).dump();
        }
    }
    return c;
}

class Vectors : public testing::TestWithParam<std::string> {};

// Every chunk of the vector file, encoded without special tokens as test-tokenizer-0 does.
TEST_P(Vectors, TransformersJsMatchesEveryChunk) {
    const std::string gguf = testkit::llama_vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
    const testkit::VocabVectors v = testkit::read_vocab_vectors(gguf);
    ASSERT_FALSE(v.texts.empty()) << gguf << " has no vectors";
    const std::string dir = export_dir(GetParam());
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    const Encoded got = tjs_encode(dir, v.texts);
    int matched = 0;
    for (size_t i = 0; i < v.texts.size(); ++i) {
        if (got.ids[i][0] == v.ids[i])
            ++matched;
        else
            ADD_FAILURE() << "chunk " << i << " " << json(v.texts[i]).dump()
                          << "\n  llama.cpp:       " << show(v.ids[i])
                          << "\n  transformers.js: " << show(got.ids[i][0]);
    }
    std::cout << GetParam() << ": " << matched << "/" << v.texts.size() << " vector chunks\n";
}
INSTANTIATE_TEST_SUITE_P(Llama, Vectors, testing::ValuesIn(kWithVectors), [](const auto &i) {
    std::string s = i.param;
    for (char &c : s)
        if (!isalnum(uint8_t(c))) c = '_';
    return s;
});

class Live : public testing::TestWithParam<std::string> {};

// The extra texts and the vector chunks, with and without BOS/EOS, parse_special on.
TEST_P(Live, TransformersJsMatchesLlamaCpp) {
    const std::string gguf = testkit::llama_vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
    const std::string dir = export_dir("live-" + GetParam());
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    std::vector<std::string> texts = kExtraTexts;
    const testkit::VocabVectors v = testkit::read_vocab_vectors(gguf);
    texts.insert(texts.end(), v.texts.begin(), v.texts.end());
    const bool wordpiece = GetParam() == "bert-bge";
    const Counts c = compare_live(gguf, dir, texts, GetParam(), !wordpiece);
    std::cout << GetParam() << ": " << c.matched << "/" << c.total
              << " encodings (extra texts and vector chunks, add_special off and on); "
              << c.roundtrips << "/" << c.roundtrip_total << " round trips; " << c.known
              << " texts with a known difference\n";
}
std::vector<std::string> every_vocab() {
    std::vector<std::string> all = kWithVectors;
    all.insert(all.end(), kWithoutVectors.begin(), kWithoutVectors.end());
    return all;
}
INSTANTIATE_TEST_SUITE_P(Llama, Live, testing::ValuesIn(every_vocab()), [](const auto &i) {
    std::string s = i.param;
    for (char &c : s)
        if (!isalnum(uint8_t(c))) c = '_';
    return s;
});

// The tree holds no vocabulary these tests do not know of (a new one joins a list above).
TEST(LlamaVocabs, EveryVocabFileIsTested) {
    std::vector<std::string> found;
    for (const auto &e : fs::directory_iterator(testkit::llama_vocab_dir())) {
        const std::string f = e.path().filename().string();
        if (f.size() > 5 && f.ends_with(".gguf")) found.push_back(f.substr(11, f.size() - 16));
    }
    std::vector<std::string> known = every_vocab();
    known.push_back("nomic-bert-moe");  // refused: UGM (below)
    std::sort(found.begin(), found.end());
    std::sort(known.begin(), known.end());
    EXPECT_EQ(found, known);
}

// The vocabularies of the decoder issue's tiny test models (a synthetic SPM vocabulary).
TEST(TinyDecoders, TransformersJsMatchesLlamaCpp) {
    for (const std::string &name : testkit::tiny_decoder_names()) {
        const std::string dir = export_dir("tiny-" + name);
        const std::string gguf = dir + "/model.gguf";
        testkit::write_tiny_decoder(name, gguf);
        tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
        const Counts c = compare_live(gguf, dir, kExtraTexts);
        std::cout << name << ": " << c.matched << "/" << c.total << " encodings; " << c.roundtrips
                  << "/" << c.roundtrip_total << " round trips\n";
    }
}

// The CLI: exit 0 and the three files; a refused type exits 1 saying why, writing nothing.
TEST(Cli, WritesTheFilesAndRefusesUgm) {
    const std::string dir = export_dir("cli");
    const std::string vocabs = testkit::llama_vocab_dir();
    const auto ok = testkit::run(
        {GGUFTOOL_EXE, "tokenizer", vocabs + "/ggml-vocab-llama-spm.gguf", dir + "/out"});
    ASSERT_EQ(ok.status, 0) << ok.err;
    for (const char *f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"})
        EXPECT_TRUE(fs::exists(dir + "/out/" + f)) << f;
    const auto refused = testkit::run(
        {GGUFTOOL_EXE, "tokenizer", vocabs + "/ggml-vocab-nomic-bert-moe.gguf", dir + "/t5"});
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("tokenizer.ggml.model: \"t5\" cannot be exported"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(dir + "/t5"));
}

// A small byte-level BPE vocabulary: the 256 byte symbols, a few merges, two special tokens.
struct SmallBpe {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    std::vector<float> scores;
    std::vector<std::string> merges;
    std::string pre = "gpt-2";
};
SmallBpe small_bpe() {
    SmallBpe v;
    // GPT-2's bytes_to_unicode.
    for (int b = 0, extra = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const uint32_t cp = printable ? uint32_t(b) : uint32_t(256 + extra++);
        std::string s;
        if (cp < 0x80) {
            s += char(cp);
        } else {
            s += char(0xC0 | (cp >> 6));
            s += char(0x80 | (cp & 0x3F));
        }
        v.tokens.push_back(s);
    }
    for (const auto &[a, b] : std::vector<std::pair<std::string, std::string>>{
             {"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}, {"i", "n"}, {"\xC4\xA0", "a"}}) {
        v.merges.push_back(a + " " + b);
        v.tokens.push_back(a + b);
    }
    v.types.assign(v.tokens.size(), 1);
    v.tokens.push_back("<|endoftext|>");
    v.types.push_back(3);
    v.tokens.push_back("<user>");
    v.types.push_back(4);
    v.scores.assign(v.tokens.size(), 0.0f);
    return v;
}
void write_small_bpe(const SmallBpe &v, const std::string &path,
                     const std::vector<std::pair<std::string, gguf::MetaValue>> &extra = {}) {
    gguf::Writer w;
    w.add("general.architecture", gguf::MetaValue::str("gpt2"));
    w.add("tokenizer.ggml.model", gguf::MetaValue::str("gpt2"));
    w.add("tokenizer.ggml.pre", gguf::MetaValue::str(v.pre));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array_of(v.tokens));
    w.add("tokenizer.ggml.token_type", gguf::MetaValue::array_of(v.types));
    w.add("tokenizer.ggml.scores", gguf::MetaValue::array_of(v.scores));
    w.add("tokenizer.ggml.merges", gguf::MetaValue::array_of(v.merges));
    for (const auto &[k, val] : extra) w.add(k, val);
    w.write(path);
}

// Every pre-tokenizer name the exporter supports, on a small byte-level vocabulary: the file loads
// in transformers.js (every regex compiles) and splits as llama.cpp does on the extra texts.
TEST(PreTokenizers, EverySupportedNameMatchesLlamaCpp) {
    for (const std::string &pre : tokenizer::supported_pre_tokenizers()) {
        if (pre == "gemma4" || pre == "granite-embed-multi-311m" || pre == "sarvam-moe")
            continue;  // not byte-level: covered by the gemma-4 vocabulary
        SCOPED_TRACE(pre);
        const std::string dir = export_dir("pre-" + pre);
        SmallBpe v = small_bpe();
        v.pre = pre;
        const std::string gguf = dir + "/vocab.gguf";
        write_small_bpe(v, gguf,
                        {{"tokenizer.ggml.bos_token_id", gguf::MetaValue::u32(256 + 5)},
                         {"tokenizer.ggml.eos_token_id", gguf::MetaValue::u32(256 + 5)}});
        tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
        const Counts c = compare_live(gguf, dir, kExtraTexts);
        EXPECT_EQ(c.matched, c.total);
    }
}

// Bad input: exit 1 naming the key (and index), nothing written.
TEST(BadInput, RefusedNamingKeyAndIndex) {
    struct Case {
        const char *name;
        std::function<void(SmallBpe &)> mutate;
        std::vector<std::pair<std::string, gguf::MetaValue>> extra;
        const char *message;
    };
    const std::vector<Case> cases = {
        {"short scores", [](SmallBpe &v) { v.scores.pop_back(); }, {}, "tokenizer.ggml.scores: "},
        {"short types", [](SmallBpe &v) { v.types.pop_back(); }, {}, "tokenizer.ggml.token_type: "},
        {"malformed merge",
         [](SmallBpe &v) { v.merges[2] = "nospace"; },
         {},
         "tokenizer.ggml.merges[2]: malformed"},
        {"duplicate token",
         [](SmallBpe &v) { v.tokens[300 - 39] = v.tokens[5]; },
         {},
         "tokenizer.ggml.tokens[261]: duplicate of token 5"},
        {"invalid UTF-8",
         [](SmallBpe &v) { v.tokens[7] = "\xFF"; },
         {},
         "tokenizer.ggml.tokens[7]: not valid UTF-8"},
        {"unknown pre",
         [](SmallBpe &v) { v.pre = "no-such-pre"; },
         {},
         "tokenizer.ggml.pre: unknown pre-tokenizer \"no-such-pre\""},
        {"refused pre",
         [](SmallBpe &v) { v.pre = "kimi-k2"; },
         {},
         "tokenizer.ggml.pre: \"kimi-k2\" cannot be exported exactly"},
        {"special id out of range",
         [](SmallBpe &) {},
         {{"tokenizer.ggml.eos_token_id", gguf::MetaValue::u32(100000)}},
         "tokenizer.ggml.eos_token_id: 100000 is out of range"},
        {"add_bos without bos",
         [](SmallBpe &v) { v.pre = "glm4"; },  // glm4: no default BOS
         {{"tokenizer.ggml.add_bos_token", gguf::MetaValue::boolean(true)}},
         "tokenizer.ggml.bos_token_id: unset, but add_bos is on"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.name);
        const std::string dir = export_dir("bad");
        SmallBpe v = small_bpe();
        c.mutate(v);
        std::vector<std::pair<std::string, gguf::MetaValue>> extra = c.extra;
        if (std::string(c.name) != "add_bos without bos")
            extra.push_back({"tokenizer.ggml.bos_token_id", gguf::MetaValue::u32(5)});
        write_small_bpe(v, dir + "/vocab.gguf", extra);
        const auto r = testkit::run({GGUFTOOL_EXE, "tokenizer", dir + "/vocab.gguf", dir + "/out"});
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(dir + "/out"));
    }
}

}  // namespace
}  // namespace gguftool
