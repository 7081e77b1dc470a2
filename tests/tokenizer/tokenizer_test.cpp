// gguftool's tokenizer export against llama.cpp: its own test vectors (models/ggml-vocab-*.gguf
// with .inp/.out, from the pinned release's source: llama_vocabs.hpp) tokenized from the exported
// files by transformers.js, by Hugging Face's Rust tokenizers and by gguftool's own C++ interpreter
// (gguftool/tokenizer.hpp), and llama_tokenize of libllama (a vocab-only load) on more text, with
// and without BOS/EOS, plus detokenization, in transformers.js and the C++ interpreter (the UGM
// vocabulary in all three clients); the C++ interpreter also id for id against the Rust client.
// Then the refusals and bad input.
#include "gguftool/tokenizer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

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
const std::string kDriver = std::string(GGUFTOOL_SOURCE_DIR) + "/tests/tokenizer/tokenize.mjs";

// The clients of tokenizer.json (tokenize.mjs).
const std::string kTransformersJs = "transformers.js";
const std::string kTokenizers = "tokenizers";  // Hugging Face's Rust tokenizers (npm binding)
const std::string kCpp = "c++";                // gguftool::tokenizer::Tokenizer, in process

// The vocabularies of llama.cpp's tree with vectors, and those without (live comparison only).
const std::vector<std::string> kWithVectors = {
    "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
    "gemma-4",  "gpt-2",     "llama-bpe",      "llama-spm",    "mpt",
    "phi-3",    "qwen2",     "qwen35",         "refact",       "starcoder"};
const std::vector<std::string> kWithoutVectors = {"aquila", "baichuan", "gpt-neox"};
// The UGM (t5) one, without vectors: compared live in both clients, with variants (Ugm below).
const std::string kUgmVocab = "nomic-bert-moe";

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

// UGM: text on the edges of the charsmap, the whitespace rules and the unknown-token path.
const std::vector<std::string> kUgmTexts = {
    "\U0001FBF0\U0001FBF1 \u32FF \uA7F1",          // compatibility mappings newer than the charsmap
    "s\u0301 \uFF53\u0301 \uFF21\u0308",           // mapped base, then a combining mark
    "e\u0301 a\u0323\u0302 \uFB01 \u00BD \u2460",  // compositions, ligature, fraction, circled
    "\u1100\u1161\u11A8 \u1100\u1161",             // Hangul jamo composing to syllables
    "Tie\u0302\u0301ng Vie\u0323\u0302t",          // Vietnamese, decomposed
    "\u0E2A\u0E27\u0E31\u0E2A\u0E14\u0E35",        // Thai
    "\u0645\u064E\u0631\u0652\u062D\u064E\u0628\u064B\u0627",              // Arabic with harakat
    "\uFF48\uFF45\uFF4C\uFF4C\uFF4F\u3000\uFF57\uFF4F\uFF52\uFF4C\uFF44",  // fullwidth
    "\u216B \u338F \u337B",          // Roman numeral, squared unit, era name
    "\uFF5E ~ \u301C",               // the tildes
    "\uFF1Cs\uFF1E \uFF1C/s\uFF1E",  // spelling <s> and </s> in fullwidth
    "[PAD250001] x",                 // an UNUSED token's text
    "x\r\ny",
    "x\u00A0\u00A0y",
    "a\u200Db \uFEFFx",
    "\u0085 a \u0085",
    std::string("a\0b", 3),
    "\u2581a \u2581\u2581b",                  // SentencePiece's space in the text
    "a  <mask>  b",                           // <mask> strips the spaces on its left
    "\U0001F999\U0001F999 \U0001F999",        // unknown characters, fused
    "\uFF54\uFF48\uFF49\uFF4E\uFF47 \uFF13",  // fullwidth: user-defined texts after the charsmap
};

// The small UGM vocabulary with a hand-made charsmap (UgmCharsmap below).
const std::vector<std::string> kHandMadeCharsmapTexts = {"A\tab  Ab", "ab\nA", "b a", "AAA",
                                                         "a\t\tb"};

struct Encoded {
    std::vector<std::vector<std::vector<int>>> ids;  // [text][add_special false/true]
    std::vector<std::string> decoded;
};

// A client (transformers.js unless said) on the files in `dir`.
Encoded encode(const std::string &dir, const std::vector<std::string> &texts,
               const std::string &client = kTransformersJs) {
    if (client == kCpp) {  // what tokenize.mjs does, in the C++ interpreter
        const tokenizer::Tokenizer t = tokenizer::Tokenizer::load(dir);
        Encoded e;
        for (const std::string &text : texts) {
            std::vector<std::vector<int>> each;
            for (const bool add : {false, true}) {
                const std::vector<int32_t> ids = t.encode(text, add);
                each.emplace_back(ids.begin(), ids.end());
            }
            e.decoded.push_back(
                t.decode(std::vector<int32_t>(each[0].begin(), each[0].end()), false));
            e.ids.push_back(std::move(each));
        }
        return e;
    }
    if (kNode.empty()) throw std::runtime_error("node was not found by CMake");
    testkit::ProcessOptions o;
    o.stdin_data = json{{"texts", texts}, {"add_special", {false, true}}}.dump();
    o.timeout = std::chrono::minutes(5);
    const testkit::ProcessResult r = testkit::run({kNode, kDriver, dir, client}, o);
    if (r.status != 0) throw std::runtime_error(client + " failed: " + r.err);
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

// Compares a client with llama.cpp live on `texts` (parse_special on, add_special off and on) and
// the round trip; returns the counts for the report.
struct Counts {
    int matched = 0, total = 0, roundtrips = 0, roundtrip_total = 0, known = 0;
};
// Known differences, each with its cause: the text must tokenize differently in that client (with
// or without BOS/EOS) for each of the vocabularies, so that a new difference fails and so does one
// that goes away.
struct Known {
    std::vector<std::string> vocabs;
    std::string client, text;
    const char *why;
    bool decoding = false;  // the ids are llama.cpp's; decoding them does not give the text back
};
// The UGM variants (Ugm below) with nomic-bert-moe's charsmap, and those keeping every space.
const std::vector<std::string> kUgmCharsmap = {
    "nomic-bert-moe", "nomic-bert-moe/no-merge", "nomic-bert-moe/no-merge-no-prefix",
    "nomic-bert-moe/merge-no-prefix", "nomic-bert-moe/user-defined"};
const std::vector<std::string> kUgmNoMerge = {"nomic-bert-moe/no-merge",
                                              "nomic-bert-moe/no-merge-no-prefix"};
const std::vector<Known> kKnown = {
    // WPM with strip_accents: llama.cpp's NFD table leaves Hangul syllables whole and strips
    // every mark; transformers.js's NFD decomposes Hangul into jamo and keeps spacing marks.
    {{"bert-bge"}, kTransformersJs, kExtraTexts[7], "NFD of Hangul"},
    {{"bert-bge"}, kTransformersJs, kExtraTexts[8], "Devanagari marks under strip_accents"},
    // UGM in transformers.js: its Precompiled ignores the charsmap and applies node's NFKC (with
    // the charsmap's control and space rules), whose Unicode is newer than the charsmap's.
    {kUgmCharsmap, kTransformersJs, kUgmTexts[0], "NFKC mappings newer than the charsmap"},
    // UGM in Hugging Face's tokenizers (normalizers/precompiled.rs): a grapheme cluster under 6
    // bytes is replaced whole by the replacement of its shortest prefix in the charsmap, a longer
    // one character by character; llama.cpp (as SentencePiece) replaces the longest prefix of the
    // text and goes on after it.
    {kUgmCharsmap, kTokenizers, kUgmTexts[1], "grapheme rule: \"\uFF53\u0301\" becomes \"s\""},
    {kUgmCharsmap, kTokenizers, kUgmTexts[2],
     "grapheme rule: \"a\u0323\u0302\" becomes \"\u1EA1\", not \"\u1EAD\""},
    {kUgmCharsmap, kTokenizers, kUgmTexts[3], "grapheme rule: Hangul jamo are not composed"},
    {kUgmCharsmap, kTokenizers, kUgmTexts[4],
     "grapheme rule: \"e\u0302\u0301\" becomes \"\u00EA\", not \"\u1EBF\""},
    {kUgmNoMerge, kTokenizers, kExtraTexts[2], "grapheme rule: \"\\r\\n\" becomes one space"},
    {kUgmNoMerge, kTokenizers, kUgmTexts[12], "grapheme rule: \"\\r\\n\" becomes one space"},
    {{"hand-made charsmap"}, kTransformersJs, kHandMadeCharsmapTexts[0], "charsmap ignored: A"},
    {{"hand-made charsmap"}, kTransformersJs, kHandMadeCharsmapTexts[1], "charsmap ignored: A"},
    {{"hand-made charsmap"}, kTransformersJs, kHandMadeCharsmapTexts[3], "charsmap ignored: A"},
    // UGM without a charsmap (which maps U+2581 to a space): Metaspace adds no "\u2581" before a
    // text that starts with one; llama.cpp does.
    {{"nomic-bert-moe/no-charsmap"}, kTransformersJs, kUgmTexts[17], "a text starting with U+2581"},
    {{"nomic-bert-moe/no-charsmap"}, kTokenizers, kUgmTexts[17], "a text starting with U+2581"},
    // WPM with strip_accents in Hugging Face's tokenizers too (and so in the C++ interpreter).
    {{"bert-bge"}, kTokenizers, kExtraTexts[7], "NFD of Hangul"},
    {{"bert-bge"}, kTokenizers, kExtraTexts[8], "Devanagari marks under strip_accents"},
    // deepseek's user-defined "\u00F6" (a token of raw UTF-8 in a byte-level vocabulary): the Rust
    // client's decode sends added tokens through the ByteLevel decoder, which reads the character
    // as the byte 0xF6 (U+FFFD); llama.cpp and transformers.js give added tokens' text as it is.
    {{"deepseek-coder", "deepseek-llm"},
     kTokenizers,
     kExtraTexts[5],
     "\u00F6 decodes as U+FFFD",
     true},
};
// The C++ interpreter follows the Rust client's semantics: its differences are the Rust client's.
const Known *known(const std::string &vocab, const std::string &client, const std::string &text,
                   bool decoding = false) {
    const std::string &as = client == kCpp ? kTokenizers : client;
    const auto it = std::find_if(kKnown.begin(), kKnown.end(), [&](const Known &k) {
        return k.client == as && k.text == text && k.decoding == decoding &&
               std::find(k.vocabs.begin(), k.vocabs.end(), vocab) != k.vocabs.end();
    });
    return it == kKnown.end() ? nullptr : &*it;
}
// roundtrip: whether to hold the client's decoding to llama.cpp's (not for WordPiece, whose
// decoder drops the space before the first word that llama.cpp keeps).
Counts compare_live(const std::string &gguf, const std::string &dir,
                    const std::vector<std::string> &texts, const std::string &vocab = "",
                    bool roundtrip = true, const std::string &client = kTransformersJs) {
    reference::LlamaModel::Options opt;
    opt.vocab_only = true;
    const reference::LlamaModel m(llama(), gguf, opt);
    const Encoded got = encode(dir, texts, client);
    Counts c;
    for (size_t i = 0; i < texts.size(); ++i) {
        std::vector<std::vector<int>> want;
        for (int add = 0; add < 2; ++add) {
            const std::vector<int32_t> w = m.tokenize(texts[i], add == 1, true);
            want.emplace_back(w.begin(), w.end());
        }
        if (const Known *k = known(vocab, client, texts[i])) {
            ++c.known;
            if (want[0] == got.ids[i][0] && want[1] == got.ids[i][1])
                ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                              << " is a known difference (" << k->why << ") but " << client
                              << " now matches llama.cpp: drop it from the list";
            continue;
        }
        for (int add = 0; add < 2; ++add) {
            ++c.total;
            if (want[size_t(add)] == got.ids[i][size_t(add)])
                ++c.matched;
            else
                ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                              << " add_special=" << add
                              << "\n  llama.cpp: " << show(want[size_t(add)]) << "\n  " << client
                              << ": " << show(got.ids[i][size_t(add)]);
        }
        // Detokenization: where llama.cpp gives the text back, the client must too.
        if (roundtrip && m.detokenize(m.tokenize(texts[i], false, true), false, true) == texts[i]) {
            if (const Known *k = known(vocab, client, texts[i], true)) {
                ++c.known;
                if (got.decoded[i] == texts[i])
                    ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                                  << " is a known decoding difference (" << k->why << ") but "
                                  << client << " now decodes it: drop it from the list";
                continue;
            }
            ++c.roundtrip_total;
            if (got.decoded[i] == texts[i])
                ++c.roundtrips;
            else
                ADD_FAILURE() << gguf << ": text " << i << " " << json(texts[i]).dump()
                              << " decodes as " << json(got.decoded[i]).dump() << " in " << client;
        }
    }
    return c;
}

// Differences between the C++ interpreter and Hugging Face's Rust client, each with its cause:
// asserted like kKnown (the texts must differ, for the vocabularies named).
const std::vector<Known> kCppVsRust = {};

// The C++ interpreter against the Rust client on `texts` (add_special off and on, and the decoding
// of the ids without special tokens): identical, but for kCppVsRust. Returns texts compared.
int agree_with_rust(const std::string &dir, const std::vector<std::string> &texts,
                    const std::string &vocab) {
    const Encoded cpp = encode(dir, texts, kCpp), rust = encode(dir, texts, kTokenizers);
    int same = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        const bool equal = cpp.ids[i] == rust.ids[i] && cpp.decoded[i] == rust.decoded[i];
        const auto k = std::find_if(kCppVsRust.begin(), kCppVsRust.end(), [&](const Known &x) {
            return x.text == texts[i] &&
                   std::find(x.vocabs.begin(), x.vocabs.end(), vocab) != x.vocabs.end();
        });
        if (k != kCppVsRust.end()) {
            if (equal)
                ADD_FAILURE() << vocab << ": text " << i << " " << json(texts[i]).dump()
                              << " is a known difference (" << k->why
                              << ") but the C++ interpreter now agrees with the Rust client";
            continue;
        }
        if (equal) {
            ++same;
            continue;
        }
        for (int add = 0; add < 2; ++add)
            if (cpp.ids[i][size_t(add)] != rust.ids[i][size_t(add)])
                ADD_FAILURE() << vocab << ": text " << i << " " << json(texts[i]).dump()
                              << " add_special=" << add
                              << "\n  tokenizers: " << show(rust.ids[i][size_t(add)])
                              << "\n  c++:        " << show(cpp.ids[i][size_t(add)]);
        if (cpp.decoded[i] != rust.decoded[i])
            ADD_FAILURE() << vocab << ": text " << i << " " << json(texts[i]).dump()
                          << " decodes as " << json(cpp.decoded[i]).dump() << " in c++, as "
                          << json(rust.decoded[i]).dump() << " in tokenizers";
    }
    return same;
}

// llama.cpp's common test text (the .inp of its vector files): for a vocabulary without vectors.
std::vector<std::string> common_test_texts() {
    return testkit::read_vocab_vectors(testkit::llama_vocab_dir() + "/ggml-vocab-llama-spm.gguf")
        .texts;
}

// A test name from a parameter's words.
std::string test_name(std::string s) {
    for (char &c : s)
        if (!isalnum(uint8_t(c))) c = '_';
    return s;
}
std::string client_name(const std::string &client) {
    return client == kCpp ? "cpp" : client;
}

class Vectors : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

// Every chunk of the vector file, encoded without special tokens as test-tokenizer-0 does, in each
// client.
TEST_P(Vectors, MatchesEveryChunk) {
    const auto &[name, client] = GetParam();
    const std::string gguf = testkit::llama_vocab_dir() + "/ggml-vocab-" + name + ".gguf";
    const testkit::VocabVectors v = testkit::read_vocab_vectors(gguf);
    ASSERT_FALSE(v.texts.empty()) << gguf << " has no vectors";
    const std::string dir = export_dir(name + "-" + client);
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    const Encoded got = encode(dir, v.texts, client);
    int matched = 0;
    for (size_t i = 0; i < v.texts.size(); ++i) {
        if (got.ids[i][0] == v.ids[i])
            ++matched;
        else
            ADD_FAILURE() << "chunk " << i << " " << json(v.texts[i]).dump()
                          << "\n  llama.cpp: " << show(v.ids[i]) << "\n  " << client << ": "
                          << show(got.ids[i][0]);
    }
    std::cout << name << " in " << client << ": " << matched << "/" << v.texts.size()
              << " vector chunks\n";
}
INSTANTIATE_TEST_SUITE_P(Llama, Vectors,
                         testing::Combine(testing::ValuesIn(kWithVectors),
                                          testing::Values(kTransformersJs, kTokenizers, kCpp)),
                         [](const auto &i) {
                             return test_name(std::get<0>(i.param) + "_" +
                                              client_name(std::get<1>(i.param)));
                         });

class Live : public testing::TestWithParam<std::string> {};

// The extra texts and the vector chunks, with and without BOS/EOS, parse_special on.
TEST_P(Live, TransformersJsMatchesLlamaCpp) {
    const std::string gguf = testkit::llama_vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
    const std::string dir = export_dir("live-" + GetParam());
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    std::vector<std::string> texts = kExtraTexts;
    testkit::VocabVectors v = testkit::read_vocab_vectors(gguf);
    if (v.texts.empty()) v.texts = common_test_texts();
    texts.insert(texts.end(), v.texts.begin(), v.texts.end());
    const bool wordpiece = GetParam() == "bert-bge";
    const Counts c = compare_live(gguf, dir, texts, GetParam(), !wordpiece);
    std::cout << GetParam() << ": " << c.matched << "/" << c.total
              << " encodings (extra texts and vector chunks or llama.cpp's common test text, "
                 "add_special off and on); "
              << c.roundtrips << "/" << c.roundtrip_total << " round trips; " << c.known
              << " texts with a known difference\n";
}
// The same texts in the C++ interpreter: against llama.cpp (its differences are the Rust
// client's), then against the Rust client, id for id.
TEST_P(Live, CppMatchesLlamaCppAndRust) {
    const std::string gguf = testkit::llama_vocab_dir() + "/ggml-vocab-" + GetParam() + ".gguf";
    const std::string dir = export_dir("live-cpp-" + GetParam());
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    std::vector<std::string> texts = kExtraTexts;
    testkit::VocabVectors v = testkit::read_vocab_vectors(gguf);
    if (v.texts.empty()) v.texts = common_test_texts();
    texts.insert(texts.end(), v.texts.begin(), v.texts.end());
    const bool wordpiece = GetParam() == "bert-bge";
    const Counts c = compare_live(gguf, dir, texts, GetParam(), !wordpiece, kCpp);
    const int same = agree_with_rust(dir, texts, GetParam());
    std::cout << GetParam() << " in c++: " << c.matched << "/" << c.total
              << " encodings like llama.cpp; " << c.roundtrips << "/" << c.roundtrip_total
              << " round trips; " << c.known << " texts with a known difference; " << same << "/"
              << texts.size() << " texts as the Rust client encodes and decodes them\n";
}
std::vector<std::string> every_vocab() {
    std::vector<std::string> all = kWithVectors;
    all.insert(all.end(), kWithoutVectors.begin(), kWithoutVectors.end());
    return all;
}
INSTANTIATE_TEST_SUITE_P(Llama, Live, testing::ValuesIn(every_vocab()),
                         [](const auto &i) { return test_name(i.param); });

// UGM: nomic-bert-moe's vocabulary (XLM-RoBERTa's SentencePiece unigram: nmt_nfkc charsmap,
// add_space_prefix and remove_extra_whitespaces on, 46 UNUSED tokens scored -10000) as it is, and
// rewritten to reach the exporter's other rules: the other whitespace settings, no charsmap, and
// user-defined tokens. In transformers.js and in Hugging Face's Rust tokenizers.
struct UgmVariant {
    std::string name;
    std::optional<bool> add_space_prefix, remove_extra_whitespaces;  // unset: as in the file
    bool charsmap = true;
    std::vector<std::string> user_defined;  // tokens made USER_DEFINED
};
void PrintTo(const UgmVariant &u, std::ostream *os) {
    *os << u.name;
}
const std::vector<UgmVariant> kUgmVariants = {
    {"as-is", {}, {}, true, {}},
    {"no-merge", true, false, true, {}},
    {"no-merge-no-prefix", false, false, true, {}},
    {"merge-no-prefix", false, true, true, {}},
    {"no-charsmap", {}, {}, false, {}},
    {"user-defined", {}, {}, true, {"ing", "ll", "3"}},
};

// The variant's GGUF (in `dir`), nomic-bert-moe's metadata with the keys the variant changes.
std::string write_ugm_variant(const UgmVariant &u, const std::string &dir) {
    const std::string src = testkit::llama_vocab_dir() + "/ggml-vocab-" + kUgmVocab + ".gguf";
    if (u.name == "as-is") return src;
    const auto f = gguf::File::open(src);
    std::vector<std::string> tokens;
    f->find("tokenizer.ggml.tokens")->value.for_each_element([&](const gguf::Value &e) {
        tokens.emplace_back(e.as_string());
    });
    gguf::Writer w;
    const std::pair<const char *, std::optional<bool>> flags[] = {
        {"tokenizer.ggml.add_space_prefix", u.add_space_prefix},
        {"tokenizer.ggml.remove_extra_whitespaces", u.remove_extra_whitespaces}};
    for (const gguf::MetadataEntry &e : f->metadata()) {
        if (e.key == "tokenizer.ggml.precompiled_charsmap" && !u.charsmap) continue;
        if (std::any_of(std::begin(flags), std::end(flags),
                        [&](const auto &fl) { return e.key == fl.first && fl.second; }))
            continue;
        if (e.key == "tokenizer.ggml.token_type") {
            std::vector<int32_t> types;
            e.value.for_each_element(
                [&](const gguf::Value &t) { types.push_back(int32_t(t.as_int())); });
            for (const std::string &t : u.user_defined) {
                const auto at = std::find(tokens.begin(), tokens.end(), t);
                if (at == tokens.end()) throw std::runtime_error(t + " is not a token");
                types[size_t(at - tokens.begin())] = 4;  // USER_DEFINED
            }
            w.add(std::string(e.key), gguf::MetaValue::array_of(types));
            continue;
        }
        w.add(gguf::MetadataItem::of(e));
    }
    for (const auto &[key, value] : flags)
        if (value) w.add(key, gguf::MetaValue::boolean(*value));
    const std::string out = dir + "/vocab.gguf";
    w.write(out);
    return out;
}

class Ugm : public testing::TestWithParam<std::tuple<UgmVariant, std::string>> {};

// The extra texts and llama.cpp's common test text, with and without BOS/EOS, parse_special on.
TEST_P(Ugm, MatchesLlamaCpp) {
    const auto &[u, client] = GetParam();
    const std::string dir = export_dir("ugm-" + u.name + "-" + client);
    const std::string gguf = write_ugm_variant(u, dir);
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    std::vector<std::string> texts = kExtraTexts;
    const std::vector<std::string> common = common_test_texts();
    texts.insert(texts.end(), kUgmTexts.begin(), kUgmTexts.end());
    texts.insert(texts.end(), common.begin(), common.end());
    const std::string vocab = kUgmVocab + (u.name == "as-is" ? "" : "/" + u.name);
    const Counts c = compare_live(gguf, dir, texts, vocab, true, client);
    std::cout << vocab << " in " << client << ": " << c.matched << "/" << c.total
              << " encodings (extra and UGM texts, llama.cpp's common test text, add_special off "
                 "and on); "
              << c.roundtrips << "/" << c.roundtrip_total << " round trips; " << c.known
              << " texts with a known difference";
    if (client == kCpp)
        std::cout << "; " << agree_with_rust(dir, texts, vocab) << "/" << texts.size()
                  << " texts as the Rust client encodes and decodes them";
    std::cout << "\n";
}
INSTANTIATE_TEST_SUITE_P(NomicBertMoe, Ugm,
                         testing::Combine(testing::ValuesIn(kUgmVariants),
                                          testing::Values(kTransformersJs, kTokenizers, kCpp)),
                         [](const auto &i) {
                             return test_name(std::get<0>(i.param).name + "_" +
                                              client_name(std::get<1>(i.param)));
                         });

// The Unigram scores: llama.cpp's for the tokens of its Viterbi lattice (NORMAL, UNUSED, and 0 for
// USER_DEFINED), the lattice's lowest for the others. The unknown-token penalty is the one known
// difference in the file: Hugging Face takes the lowest of all scores less 10 (here -10010, from
// the UNUSED [PAD...] tokens), llama.cpp the lowest NORMAL score less 10. It cannot change a
// tokenization of this vocabulary: every character of every lattice token is a token itself, so a
// character without a token is covered by <unk> alone on every path.
TEST(UgmScores, AreLlamaCppsLatticeScores) {
    const UgmVariant &u = kUgmVariants.back();
    ASSERT_EQ(u.name, "user-defined");
    const std::string dir = export_dir("ugm-scores");
    const std::string gguf = write_ugm_variant(u, dir);
    tokenizer::write_tokenizer_files(gguf::Model::open(gguf), dir);
    std::ifstream in(dir + "/tokenizer.json");
    const json model = json::parse(in)["model"];
    EXPECT_EQ(model["type"], "Unigram");
    EXPECT_EQ(model["unk_id"], 3);
    EXPECT_EQ(model["byte_fallback"], false);

    const auto f = gguf::File::open(gguf);
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int64_t> types;
    f->find("tokenizer.ggml.tokens")->value.for_each_element([&](const gguf::Value &e) {
        tokens.emplace_back(e.as_string());
    });
    f->find("tokenizer.ggml.scores")->value.for_each_element([&](const gguf::Value &e) {
        scores.push_back(float(e.as_double()));
    });
    f->find("tokenizer.ggml.token_type")->value.for_each_element([&](const gguf::Value &e) {
        types.push_back(e.as_int());
    });
    const json &vocab = model["vocab"];
    ASSERT_EQ(vocab.size(), tokens.size());
    double lowest_normal = INFINITY, lowest_all = INFINITY;
    std::set<std::string> lattice;
    int normal = 0, user_defined = 0, unused = 0, other = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const double s = vocab[i][1].get<double>();
        ASSERT_EQ(vocab[i][0], tokens[i]);
        lowest_all = std::min(lowest_all, s);
        switch (types[i]) {
            case 1:  // NORMAL
                ++normal, lowest_normal = std::min(lowest_normal, double(scores[i]));
                EXPECT_EQ(s, double(scores[i])) << tokens[i];
                lattice.insert(tokens[i]);
                break;
            case 4:  // USER_DEFINED
                ++user_defined, lattice.insert(tokens[i]);
                EXPECT_EQ(s, 0.0) << tokens[i];
                break;
            case 5:  // UNUSED
                ++unused, lattice.insert(tokens[i]);
                EXPECT_EQ(s, -10000.0) << tokens[i];
                break;
            default:  // control, unknown: outside the lattice
                ++other;
                EXPECT_EQ(s, -10000.0) << tokens[i];
        }
    }
    EXPECT_EQ(user_defined, 3);
    EXPECT_EQ(unused, 46);
    EXPECT_EQ(other, 5);
    EXPECT_EQ(lowest_all - 10, -10010.0);           // Hugging Face's unknown penalty
    EXPECT_NEAR(lowest_normal - 10, -30.36, 0.01);  // llama.cpp's
    for (const std::string &t : lattice)
        for (size_t k = 0; k < t.size();) {
            size_t n = 1;
            while (k + n < t.size() && (uint8_t(t[k + n]) & 0xC0) == 0x80) ++n;
            EXPECT_TRUE(lattice.count(t.substr(k, n))) << t << ": " << t.substr(k, n);
            k += n;
        }
}

// The tree holds no vocabulary these tests do not know of (a new one joins a list above).
TEST(LlamaVocabs, EveryVocabFileIsTested) {
    std::vector<std::string> found;
    for (const auto &e : fs::directory_iterator(testkit::llama_vocab_dir())) {
        const std::string f = e.path().filename().string();
        if (f.size() > 5 && f.ends_with(".gguf")) found.push_back(f.substr(11, f.size() - 16));
    }
    std::vector<std::string> known = every_vocab();
    known.push_back(kUgmVocab);
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
        const Counts cpp = compare_live(gguf, dir, kExtraTexts, "", true, kCpp);
        std::cout << name << " in c++: " << cpp.matched << "/" << cpp.total << " encodings; "
                  << cpp.roundtrips << "/" << cpp.roundtrip_total << " round trips; "
                  << agree_with_rust(dir, kExtraTexts, name) << "/" << kExtraTexts.size()
                  << " texts as the Rust client\n";
    }
}

// The CLI: exit 0 and the three files (for an SPM and the UGM vocabulary); a refused type exits 1
// saying why, writing nothing.
TEST(Cli, WritesTheFilesAndRefusesRwkv) {
    const std::string dir = export_dir("cli");
    const std::string vocabs = testkit::llama_vocab_dir();
    for (const std::string name : {"llama-spm", "nomic-bert-moe"}) {
        const auto ok = testkit::run({GGUFTOOL_EXE, "tokenizer",
                                      vocabs + "/ggml-vocab-" + name + ".gguf", dir + "/" + name});
        ASSERT_EQ(ok.status, 0) << ok.err;
        for (const char *f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"})
            EXPECT_TRUE(fs::exists(dir + "/" + name + "/" + f)) << name << ": " << f;
    }
    gguf::Writer w;
    w.add("tokenizer.ggml.model", gguf::MetaValue::str("rwkv"));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array_of(std::vector<std::string>{"a", "b"}));
    w.write(dir + "/rwkv.gguf");
    const auto refused =
        testkit::run({GGUFTOOL_EXE, "tokenizer", dir + "/rwkv.gguf", dir + "/rwkv"});
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("tokenizer.ggml.model: \"rwkv\" cannot be exported"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(dir + "/rwkv"));
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
        const Counts cpp = compare_live(gguf, dir, kExtraTexts, "", true, kCpp);
        EXPECT_EQ(cpp.matched, cpp.total);
        EXPECT_EQ(agree_with_rust(dir, kExtraTexts, pre), int(kExtraTexts.size()));
    }
}

// ---------------------------------------------------------------------------------------------
// The interpreter's components beyond what the exporter writes, on small hand-written
// tokenizer.json documents: the C++ interpreter encodes (with and without special tokens) and
// decodes as Hugging Face's Rust client does.

// A tokenizer.json around `model`; the other parts null unless given.
json document(json model, json normalizer = nullptr, json pre = nullptr, json decoder = nullptr,
              json post = nullptr, json added = json::array()) {
    return {{"version", "1.0"},       {"truncation", nullptr},    {"padding", nullptr},
            {"added_tokens", added},  {"normalizer", normalizer}, {"pre_tokenizer", pre},
            {"post_processor", post}, {"decoder", decoder},       {"model", model}};
}

// A character BPE: [UNK], space, "-", ",", "<0x78>", "\u2581", "a".."e" and merges making "ab",
// "abc", "-a", "a-", ",-", "--" (a piece boundary shows as a merge not made).
json char_bpe(const json &options = json::object()) {
    json vocab = {{"[UNK]", 0}, {" ", 1}, {"-", 2}, {",", 3}, {"<0x78>", 4}, {"\u2581", 5}};
    for (char c = 'a'; c <= 'e'; ++c) vocab[std::string(1, c)] = int(vocab.size());
    const std::vector<std::pair<std::string, std::string>> merges = {
        {"a", "b"}, {"ab", "c"}, {"-", "a"}, {"a", "-"}, {",", "-"}, {"-", "-"}};
    json m = json::array();
    for (const auto &[a, b] : merges) {
        if (!vocab.contains(a + b)) vocab[a + b] = int(vocab.size());
        m.push_back({a, b});
    }
    json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", m}, {"unk_token", "[UNK]"}};
    model.update(options);
    return model;
}

json split(const std::string &regex, const char *behavior, bool invert) {
    return {{"type", "Split"},
            {"pattern", {{"Regex", regex}}},
            {"behavior", behavior},
            {"invert", invert}};
}

json added_token(int id, const std::string &content, bool lstrip, bool rstrip, bool normalized,
                 bool special) {
    return {{"id", id},          {"content", content}, {"single_word", false},
            {"lstrip", lstrip},  {"rstrip", rstrip},   {"normalized", normalized},
            {"special", special}};
}

struct ComponentCase {
    std::string name;
    json doc;
    std::vector<std::string> texts;
};

std::vector<ComponentCase> component_cases() {
    std::vector<ComponentCase> out;
    // Split: every behaviour, inverted or not.
    const std::vector<std::string> punct = {"ab-abc,-a--b", "a,b-c", "--a,,b-", "abcde",
                                            "xyz ab",       "",      "-"};
    for (const char *b :
         {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"})
        for (const bool invert : {false, true})
            out.push_back({std::string("split ") + b + (invert ? " inverted" : ""),
                           document(char_bpe(), nullptr, split("[-,]", b, invert)), punct});
    // Oniguruma's meaning: ^ and $ at line ends, . across a newline, \s with U+0085, \h, \w, \b,
    // \d with every decimal digit, empty matches.
    for (const char *re : {"\\s+$", "^\\w", ".", "\\s", "\\h+", "\\w+", "\\b", "[^\\s,]+",
                           "\\p{L}+", "\\d", "(?=(\\d{3})+(?!\\d))", "\\u0061"})
        out.push_back({std::string("regex ") + re,
                       document(char_bpe(), nullptr, split(re, "Isolated", false)),
                       {"ab  \ncd  ", "a\u0085b\u00A0c\u2028d\u180Ee", "ab\u0301c_d\u00B2\u2460 e",
                        "1234567 \u0663\u0664", "a\r\nb\n", "deadBEEF cafe"}});
    // Unknown characters: fused or not, byte fallback (with a pending unknown), ignore_merges.
    out.push_back({"bpe unk fused", document(char_bpe({{"fuse_unk", true}})), {"axyzb", "xx-yy"}});
    out.push_back({"bpe unk", document(char_bpe()), {"axyzb", "xx-yy"}});
    out.push_back({"bpe byte fallback",
                   document(char_bpe({{"byte_fallback", true}, {"fuse_unk", true}})),
                   {"ayxzb", "yx", "xy", "x"}});
    out.push_back(
        {"bpe ignore_merges", document(char_bpe({{"ignore_merges", true}})), {"abc", "abcd"}});
    // Continuing-subword prefix and end-of-word suffix.
    out.push_back(
        {"bpe prefix and suffix",
         document(
             {{"type", "BPE"},
              {"vocab",
               {{"[UNK]", 0},
                {"a", 1},
                {"##b", 2},
                {"##c</w>", 3},
                {"ab", 4},
                {"abc</w>", 5},
                {"b", 6},
                {"a</w>", 7}}},
              {"merges", json::array({json::array({"a", "##b"}), json::array({"ab", "##c</w>"})})},
              {"unk_token", "[UNK]"},
              {"continuing_subword_prefix", "##"},
              {"end_of_word_suffix", "</w>"}},
             nullptr, {{"type", "BertPreTokenizer"}}),
         {"abc a ab", "b abcx"}});
    // Normalizers, with WordPiece, BertPreTokenizer, a template and the WordPiece decoder.
    const std::vector<std::string> texts = {
        "  \u00C9t\u00E9 \uFF21\uFF22 \u0130stanbul STRASSE \u00DF \t x\u0301y  ",
        std::string("\u4E2D\u6587abc") + '\0' + "\u200Bd\uFFFD\u3000e",
        "\uFB01 \u2460 \u00BD \u1E9B\u0323 \U0001F999"};
    json wp_vocab = {{"[UNK]", 0}, {"[CLS]", 1}, {"[SEP]", 2}};
    for (const char *t : {"a",   "b",    "c",   "d",   "e",   "t",   "x",       "y",      "s",
                          "i",   "##s",  "##t", "##a", "##b", "##e", "\u4E2D",  "\u6587", "\u00E9",
                          "ete", "##te", "abc", "fi",  "1",   ".",   "strasse", "##r",    "##n",
                          "##u", "##l",  "!",   "?",   "'",   ",",   "##c"})
        wp_vocab[t] = int(wp_vocab.size());
    const json word_piece = {{"type", "WordPiece"},
                             {"vocab", wp_vocab},
                             {"unk_token", "[UNK]"},
                             {"continuing_subword_prefix", "##"},
                             {"max_input_chars_per_word", 8}};
    const json bert_pre = {{"type", "BertPreTokenizer"}};
    const json wp_decoder = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
    const json cls_sep = {{"type", "TemplateProcessing"},
                          {"single",
                           {{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
                            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                            {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}}},
                          {"pair",
                           {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                            {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
                          {"special_tokens",
                           {{"[CLS]", {{"id", "[CLS]"}, {"ids", {1}}, {"tokens", {"[CLS]"}}}},
                            {"[SEP]", {{"id", "[SEP]"}, {"ids", {2}}, {"tokens", {"[SEP]"}}}}}}};
    const std::vector<json> normalizers = {
        {{"type", "BertNormalizer"},
         {"clean_text", true},
         {"handle_chinese_chars", true},
         {"strip_accents", nullptr},
         {"lowercase", true}},
        {{"type", "BertNormalizer"},
         {"clean_text", false},
         {"handle_chinese_chars", false},
         {"strip_accents", true},
         {"lowercase", false}},
        {{"type", "Sequence"},
         {"normalizers",
          {{{"type", "NFKC"}},
           {{"type", "Lowercase"}},
           {{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}},
           {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}}}},
        {{"type", "Sequence"},
         {"normalizers",
          {{{"type", "NFD"}},
           {{"type", "StripAccents"}},
           {{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}}}}},
        {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKD"}}, {{"type", "NFC"}}}}}};
    for (const json &n : normalizers)
        out.push_back({"normalizer " + n.dump(),
                       document(word_piece, n, bert_pre, wp_decoder, cls_sep), texts});
    out.push_back(
        {"wordpiece cleanup",
         document(word_piece, nullptr, bert_pre, wp_decoder,
                  {{"type", "BertProcessing"}, {"sep", {"[SEP]", 2}}, {"cls", {"[CLS]", 1}}}),
         {"a . b , c ' s", "ab ! abc ?", "strasse tutu", "abcabcabc"}});
    // Metaspace with each prepend scheme, split or not, around added tokens; Unigram with byte
    // fallback; the Metaspace, ByteFallback, Fuse and Strip decoders.
    const json unigram = {{"type", "Unigram"},
                          {"unk_id", 0},
                          {"byte_fallback", true},
                          {"vocab", [] {
                               json v = json::array();
                               for (const auto &[piece, score] :
                                    std::vector<std::pair<std::string, double>>{{"<unk>", 0.0},
                                                                                {"<s>", 0.0},
                                                                                {"\u2581", -2.0},
                                                                                {"\u2581a", -1.0},
                                                                                {"a", -2.5},
                                                                                {"b", -2.0},
                                                                                {"\u2581ab", -1.5},
                                                                                {"ab", -1.2},
                                                                                {"<0x78>", -5.0},
                                                                                {"<0x79>", -5.0},
                                                                                {"c", -3.0},
                                                                                {"<mark>", 0.0}})
                                   v.push_back(json::array({piece, score}));
                               return v;
                           }()}};
    const json added = json::array({added_token(1, "<s>", false, false, false, true),
                                    added_token(11, "<mark>", true, true, false, false)});
    for (const char *scheme : {"always", "first", "never"})
        for (const bool split_it : {true, false}) {
            const json meta = {{"type", "Metaspace"},
                               {"replacement", "\u2581"},
                               {"prepend_scheme", scheme},
                               {"split", split_it}};
            out.push_back(
                {std::string("metaspace ") + scheme + (split_it ? " split" : ""),
                 document(unigram, nullptr, meta,
                          {{"type", "Sequence"},
                           {"decoders",
                            {meta,
                             {{"type", "ByteFallback"}},
                             {{"type", "Fuse"}},
                             {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 1}}}}},
                          {{"type", "TemplateProcessing"},
                           {"single",
                            {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                           {"pair",
                            {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                             {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
                           {"special_tokens",
                            {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}},
                          added),
                 {"ab a  b", " ab<s>ab", "a <mark>  ab", "xyz ab", "<s>", "a  b  ", "abc c"}});
        }
    // Added tokens matched after normalizing (normalized: true), stripping spaces beside them.
    out.push_back({"added tokens normalized and stripped",
                   document(char_bpe(), {{"type", "Lowercase"}}, nullptr, nullptr, nullptr,
                            json::array({added_token(20, "AB-", true, false, true, false),
                                         added_token(21, "-c", false, true, false, true),
                                         added_token(22, "ZZ", false, false, false, true)})),
                   {"AB- ab-  -c  d", "Ab-ab-", "x -c-c", "aZZb ZZ", "zz"}});
    // Byte-level: GPT-2's regex and a leading space (add_prefix_space), the ByteLevel decoder (a
    // token cut inside a character decodes as U+FFFD), a Sequence post-processor.
    const SmallBpe small = small_bpe();
    json vocab = json::object(), merges = json::array();
    for (size_t i = 0; i < small.tokens.size(); ++i) vocab[small.tokens[i]] = int(i);
    for (const std::string &m : small.merges) merges.push_back(m);  // the legacy "a b" form
    out.push_back(
        {"byte level",
         document({{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}, {{"type", "NFC"}},
                  {{"type", "ByteLevel"},
                   {"add_prefix_space", true},
                   {"trim_offsets", true},
                   {"use_regex", true}},
                  {{"type", "ByteLevel"},
                   {"add_prefix_space", true},
                   {"trim_offsets", true},
                   {"use_regex", true}},
                  {{"type", "Sequence"},
                   {"processors",
                    {{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}},
                     {{"type", "RobertaProcessing"},
                      {"sep", {"<|endoftext|>", 261}},
                      {"cls", {"<user>", 262}},
                      {"trim_offsets", true},
                      {"add_prefix_space", true}}}}},
                  json::array({added_token(261, "<|endoftext|>", false, false, false, true),
                               added_token(262, "<user>", false, false, false, false)})),
         {"the in a", "  the  ", "<user>hi<|endoftext|>", "I've 12 \u00E9\u00E9", "\U0001F999"}});
    return out;
}

class Components : public testing::TestWithParam<size_t> {};

TEST_P(Components, CppAsTheRustClient) {
    const ComponentCase c = component_cases()[GetParam()];
    SCOPED_TRACE(c.name);
    const std::string dir = export_dir("component-" + std::to_string(GetParam()));
    std::ofstream(dir + "/tokenizer.json") << c.doc.dump(2);
    EXPECT_EQ(agree_with_rust(dir, c.texts, c.name), int(c.texts.size()));
}
INSTANTIATE_TEST_SUITE_P(Interpreter, Components,
                         testing::Range(size_t(0), component_cases().size()),
                         [](const auto &i) { return test_name(component_cases()[i.param].name); });

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

// A small UGM vocabulary: t5's default ids (<pad> 0, </s> 1, <unk> 2) and four pieces, and a
// charsmap blob, made here.
struct SmallUgm {
    std::vector<std::string> tokens = {"<pad>", "</s>", "<unk>", "\u2581a", "a", "b", "\u2581ab"};
    std::vector<int32_t> types = {3, 3, 2, 1, 1, 1, 1};
    std::vector<float> scores = {0, 0, 0, -1, -2, -3, -2.5};
    std::optional<std::vector<uint8_t>> charsmap;
};
void write_small_ugm(const SmallUgm &v, const std::string &path) {
    gguf::Writer w;
    w.add("general.architecture", gguf::MetaValue::str("t5"));
    w.add("tokenizer.ggml.model", gguf::MetaValue::str("t5"));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array_of(v.tokens));
    w.add("tokenizer.ggml.token_type", gguf::MetaValue::array_of(v.types));
    w.add("tokenizer.ggml.scores", gguf::MetaValue::array_of(v.scores));
    w.add("tokenizer.ggml.add_space_prefix", gguf::MetaValue::boolean(true));
    w.add("tokenizer.ggml.remove_extra_whitespaces", gguf::MetaValue::boolean(true));
    if (v.charsmap)
        w.add("tokenizer.ggml.precompiled_charsmap", gguf::MetaValue::array_of(*v.charsmap));
    w.write(path);
}
// The blob: the trie's byte count (as given), its units, the replacement strings.
std::vector<uint8_t> charsmap_blob(uint32_t trie_bytes, const std::vector<uint32_t> &units,
                                   const std::string &strings) {
    std::vector<uint8_t> b;
    const auto u32 = [&](uint32_t x) {
        for (int k = 0; k < 4; ++k) b.push_back(uint8_t(x >> (8 * k)));
    };
    u32(trie_bytes);
    for (const uint32_t u : units) u32(u);
    b.insert(b.end(), strings.begin(), strings.end());
    return b;
}
// A darts-clone double array of 256 units by hand: the root's children at unit c (label c, a
// leaf), each key's replacement offset in the unit its base points to (bit 31 set).
std::vector<uint32_t> charsmap_units(const std::vector<std::pair<uint8_t, uint32_t>> &keys) {
    std::vector<uint32_t> units(256, 0);
    uint32_t free_unit = 200;
    for (const auto &[c, offset] : keys) {
        const uint32_t child = free_unit++;
        units[c] = c | 1u << 8 | (c ^ child) << 10;
        units[child] = 1u << 31 | offset;
    }
    return units;
}

// A hand-made charsmap ("\t" and "\n" to a space, "A" to "a"): Hugging Face's tokenizers reads it
// from the base64 and tokenizes as llama.cpp; transformers.js ignores it (kKnown).
TEST(UgmCharsmap, HandMadeMatchesLlamaCpp) {
    SmallUgm v;
    v.charsmap = charsmap_blob(1024, charsmap_units({{'\t', 0}, {'\n', 0}, {'A', 2}}),
                               std::string(" \0a\0", 4));
    for (const std::string &client : {kTransformersJs, kTokenizers, kCpp}) {
        SCOPED_TRACE(client);
        const std::string dir = export_dir("ugm-hand-made-" + client_name(client));
        write_small_ugm(v, dir + "/vocab.gguf");
        tokenizer::write_tokenizer_files(gguf::Model::open(dir + "/vocab.gguf"), dir);
        const Counts c = compare_live(dir + "/vocab.gguf", dir, kHandMadeCharsmapTexts,
                                      "hand-made charsmap", true, client);
        std::cout << "hand-made charsmap in " << client << ": " << c.matched << "/" << c.total
                  << " encodings; " << c.roundtrips << "/" << c.roundtrip_total << " round trips; "
                  << c.known << " texts with a known difference\n";
        EXPECT_EQ(c.known, client == kTransformersJs ? 3 : 0);
    }
}

// Bad UGM input: exit 1 naming the key (and index or trie unit), nothing written.
TEST(BadInput, UgmRefusedNamingKey) {
    const std::vector<uint32_t> units = charsmap_units({});  // a root whose base is 0, no child
    std::vector<uint32_t> far = units, dangling = units;
    far[0] = 1000u << 10;          // the root's children past the 256 units
    dangling[65] = 65u | 1u << 8;  // "A" is a key; its replacement offset (unit 65) is 321
    struct Case {
        const char *name;
        std::function<void(SmallUgm &)> mutate;
        const char *message;
    };
    const std::vector<Case> cases = {
        {"no unknown token",
         [](SmallUgm &v) { v.tokens.resize(2), v.types.resize(2), v.scores.resize(2); },
         "tokenizer.ggml.unknown_token_id: unset, but a t5 vocabulary needs its unknown token"},
        {"score not finite", [](SmallUgm &v) { v.scores[4] = std::nanf(""); },
         "tokenizer.ggml.scores[4]: not finite"},
        {"charsmap too small",
         [](SmallUgm &v) {
             v.charsmap = std::vector<uint8_t>{4, 0, 0};
         },
         "tokenizer.ggml.precompiled_charsmap: 3 bytes: too small"},
        {"trie past the blob",
         [&](SmallUgm &v) { v.charsmap = charsmap_blob(2000, units, std::string(1, '\0')); },
         "tokenizer.ggml.precompiled_charsmap: the trie size 2000 leaves no replacement strings"},
        {"trie in part units",
         [&](SmallUgm &v) { v.charsmap = charsmap_blob(6, units, std::string(1, '\0')); },
         "tokenizer.ggml.precompiled_charsmap: the trie size 6 is not a multiple of 4"},
        {"strings not UTF-8",
         [&](SmallUgm &v) { v.charsmap = charsmap_blob(1024, units, "\xFF\0"); },
         "tokenizer.ggml.precompiled_charsmap: its replacement strings are not valid UTF-8"},
        {"unit past the trie",
         [&](SmallUgm &v) { v.charsmap = charsmap_blob(1024, far, std::string(1, '\0')); },
         "tokenizer.ggml.precompiled_charsmap: trie unit 1000: past the trie's 256 units"},
        {"replacement outside the blob",
         [&](SmallUgm &v) { v.charsmap = charsmap_blob(1024, dangling, std::string("x\0", 2)); },
         "tokenizer.ggml.precompiled_charsmap: trie unit 65: its replacement string at 321"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.name);
        const std::string dir = export_dir("bad-ugm");
        SmallUgm v;
        c.mutate(v);
        write_small_ugm(v, dir + "/vocab.gguf");
        const auto r = testkit::run({GGUFTOOL_EXE, "tokenizer", dir + "/vocab.gguf", dir + "/out"});
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(dir + "/out"));
    }
    // The charsmap as an array of another type.
    const std::string dir = export_dir("bad-ugm");
    gguf::Writer w;
    w.add("tokenizer.ggml.model", gguf::MetaValue::str("t5"));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array_of(SmallUgm().tokens));
    w.add("tokenizer.ggml.precompiled_charsmap",
          gguf::MetaValue::array_of(std::vector<int32_t>{1, 2, 3}));
    w.write(dir + "/vocab.gguf");
    const auto r = testkit::run({GGUFTOOL_EXE, "tokenizer", dir + "/vocab.gguf", dir + "/out"});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("tokenizer.ggml.precompiled_charsmap: not an array of uint8"),
              std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace gguftool
