// The C++ tokenizer.json interpreter (gguftool/tokenizer.hpp) on what only it decides: errors that
// name the file and the JSON path, bounded regexes, bad text and ids, and what a package's other
// files add (BOS/EOS from tokenizer_config.json, the end-of-generation ids). Its tokenization is
// compared with llama.cpp and Hugging Face's Rust client in tokenizer_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguftool/error.hpp"
#include "gguftool/tokenizer.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tokenizer::Tokenizer;

// A character-level BPE over "a", "b", " ", with "<s>" and "</s>" as special added tokens.
json small() {
    return {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens",
             {{{"id", 3}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
              {{"id", 4}, {"content", "</s>"}, {"special", true}, {"normalized", false}}}},
            {"normalizer", nullptr},
            {"pre_tokenizer", nullptr},
            {"post_processor", nullptr},
            {"decoder", nullptr},
            {"model",
             {{"type", "BPE"},
              {"vocab", {{"a", 0}, {"b", 1}, {" ", 2}, {"<s>", 3}, {"</s>", 4}, {"ab", 5}}},
              {"merges", json::array({json::array({"a", "b"})})}}}};
}

// The message of the Error `f` throws ("" if none).
template <class F>
std::string error_of(F &&f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

std::string package(const std::string &name,
                    const std::vector<std::pair<std::string, json>> &files) {
    const fs::path d = fs::path(GGUFTOOL_BINARY_DIR) / "tokenizer-test" / "interpreter" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    for (const auto &[file, j] : files) std::ofstream(d / file) << j.dump(2);
    return d.string();
}

TEST(Interpreter, EncodesAndDecodes) {
    const Tokenizer t = Tokenizer::from_json(small().dump(), "small.json");
    EXPECT_EQ(t.encode("ab a<s>b", false), (std::vector<int32_t>{5, 2, 0, 3, 1}));
    // No decoder: the tokens joined by spaces (token 2 is a space itself).
    EXPECT_EQ(t.decode(std::vector<int32_t>{5, 2, 0, 3, 1}, false), "ab   a <s> b");
    EXPECT_EQ(t.decode(std::vector<int32_t>{5, 2, 0, 3, 1}, true), "ab   a b");
    EXPECT_EQ(t.token_id("</s>"), 4);
    EXPECT_EQ(t.token_id("zz"), -1);
    EXPECT_EQ(t.vocab_size(), 6);
    EXPECT_TRUE(t.end_of_generation_ids().empty());
}

// Each error names the file and where in it.
TEST(Interpreter, RefusesNamingFileAndJsonPath) {
    struct Case {
        const char *name;
        std::function<void(json &)> edit;
        const char *message;
    };
    const std::vector<Case> cases = {
        {"no model", [](json &j) { j.erase("model"); }, "t.json: /: has no \"model\""},
        {"unknown normalizer",
         [](json &j) {
             j["normalizer"] = {{"type", "Sequence"},
                                {"normalizers", {{{"type", "Lowercase"}}, {{"type", "Nmt"}}}}};
         },
         "t.json: /normalizer/normalizers/1: normalizer \"Nmt\" is not implemented"},
        {"unknown pre-tokenizer",
         [](json &j) {
             j["pre_tokenizer"] = {{"type", "Digits"}};
         },
         "t.json: /pre_tokenizer: pre-tokenizer \"Digits\" is not implemented"},
        {"unknown decoder",
         [](json &j) {
             j["decoder"] = {{"type", "CTC"}};
         },
         "t.json: /decoder: decoder \"CTC\" is not implemented"},
        {"unknown model", [](json &j) { j["model"]["type"] = "WordLevel"; },
         "t.json: /model: model \"WordLevel\" is not implemented"},
        {"unknown post-processor",
         [](json &j) {
             j["post_processor"] = {{"type", "Nope"}};
         },
         "t.json: /post_processor: post-processor \"Nope\" is not implemented"},
        {"truncation",
         [](json &j) {
             j["truncation"] = {{"max_length", 4}};
         },
         "t.json: /truncation: not implemented"},
        {"version", [](json &j) { j["version"] = "2.0"; },
         "t.json: /version: unknown tokenizer version \"2.0\""},
        {"merge not in vocab",
         [](json &j) {
             j["model"]["merges"].push_back(json::array({"b", "a"}));
         },
         "t.json: /model/merges/1: merge token \"ba\" is not in the vocab"},
        {"bad id", [](json &j) { j["model"]["vocab"]["a"] = -1; },
         "t.json: /model/vocab/a: -1 is out of range"},
        {"bad regex",
         [](json &j) {
             j["pre_tokenizer"] = {{"type", "Split"},
                                   {"pattern", {{"Regex", "(a"}}},
                                   {"behavior", "Isolated"},
                                   {"invert", false}};
         },
         "t.json: /pre_tokenizer/pattern: regex \"(a\": missing closing parenthesis"},
        {"bad behavior",
         [](json &j) {
             j["pre_tokenizer"] = {{"type", "Split"},
                                   {"pattern", {{"String", " "}}},
                                   {"behavior", "Sideways"},
                                   {"invert", false}};
         },
         "t.json: /pre_tokenizer/behavior: unknown behavior \"Sideways\""},
        {"single_word", [](json &j) { j["added_tokens"][0]["single_word"] = true; },
         "t.json: /added_tokens/0/single_word: single_word is not implemented"},
        {"template without its token",
         [](json &j) {
             j["post_processor"] = {
                 {"type", "TemplateProcessing"},
                 {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}}},
                 {"special_tokens", json::object()}};
         },
         "t.json: /post_processor/single/0: special token \"<s>\" is not in special_tokens"},
        {"charsmap",
         [](json &j) {
             j["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AAA="}};
         },
         "t.json: /normalizer: precompiled_charsmap: 2 bytes"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.name);
        json j = small();
        c.edit(j);
        const std::string e = error_of([&] { Tokenizer::from_json(j.dump(), "t.json"); });
        EXPECT_NE(e.find(c.message), std::string::npos) << e;
    }
    // Sequences nested past 64 levels (built recursively).
    json deep = {{"type", "Lowercase"}};
    for (int i = 0; i < 100; ++i) deep = {{"type", "Sequence"}, {"normalizers", {deep}}};
    json j = small();
    j["normalizer"] = deep;
    std::string e = error_of([&] { Tokenizer::from_json(j.dump(), "t.json"); });
    EXPECT_NE(e.find("Sequence nested too deep"), std::string::npos) << e;
    // A syntax error: the byte offset.
    e = error_of([] { Tokenizer::from_json("{\"model\": [1, 2,,]}", "t.json"); });
    EXPECT_NE(e.find("t.json: offset 16: not valid JSON"), std::string::npos) << e;
    const std::string missing = error_of([] { Tokenizer::load("/nonexistent-package"); });
    EXPECT_NE(missing.find("/nonexistent-package/tokenizer.json: cannot be read"),
              std::string::npos)
        << missing;
}

// A regex that backtracks exponentially stops at PCRE2's match limit with an Error naming the
// component, in bounded time.
TEST(Interpreter, CatastrophicRegexIsBounded) {
    json j = small();
    j["pre_tokenizer"] = {{"type", "Split"},
                          {"pattern", {{"Regex", "(a|aa)+$"}}},
                          {"behavior", "Isolated"},
                          {"invert", false}};
    const Tokenizer t = Tokenizer::from_json(j.dump(), "t.json");
    EXPECT_EQ(t.encode("aaab", false), (std::vector<int32_t>{0, 0, 5}));  // an ordinary text
    const auto start = std::chrono::steady_clock::now();
    const std::string e = error_of([&] { t.encode(std::string(2000, 'a') + "b", false); });
    EXPECT_NE(e.find("t.json: /pre_tokenizer/pattern: regex match from byte 0"), std::string::npos)
        << e;
    EXPECT_NE(e.find("limit"), std::string::npos) << e;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(Interpreter, RefusesBadTextAndIds) {
    const Tokenizer t = Tokenizer::from_json(small().dump(), "small.json");
    std::string e = error_of([&] { t.encode("ab\xC3(", false); });
    EXPECT_NE(e.find("text to encode: offset 2: not valid UTF-8"), std::string::npos) << e;
    e = error_of([&] { t.encode(std::string("a\xED\xA0\x80"), false); });  // a surrogate
    EXPECT_NE(e.find("offset 1: not valid UTF-8"), std::string::npos) << e;
    e = error_of([&] { t.decode(std::vector<int32_t>{0, 99}, false); });
    EXPECT_NE(e.find("small.json: decode: id 99 is not in the vocabulary"), std::string::npos) << e;
}

// BOS/EOS from tokenizer_config.json when tokenizer.json has no post-processor; the
// end-of-generation ids from generation_config.json, else config.json, else the EOS token.
TEST(Interpreter, PackageFiles) {
    const json config = {{"add_bos_token", true},
                         {"add_eos_token", true},
                         {"bos_token", "<s>"},
                         {"eos_token", {{"content", "</s>"}, {"special", true}}}};
    std::string dir =
        package("config", {{"tokenizer.json", small()}, {"tokenizer_config.json", config}});
    Tokenizer t = Tokenizer::load(dir);
    EXPECT_EQ(t.encode("ab", true), (std::vector<int32_t>{3, 5, 4}));
    EXPECT_EQ(t.encode("ab", false), (std::vector<int32_t>{5}));
    EXPECT_EQ(t.end_of_generation_ids(), (std::vector<int32_t>{4}));  // the EOS token

    dir = package("configs", {{"tokenizer.json", small()},
                              {"tokenizer_config.json", config},
                              {"config.json", {{"eos_token_id", 1}}}});
    EXPECT_EQ(Tokenizer::load(dir).end_of_generation_ids(), (std::vector<int32_t>{1}));
    dir = package("generation", {{"tokenizer.json", small()},
                                 {"config.json", {{"eos_token_id", 1}}},
                                 {"generation_config.json", {{"eos_token_id", {4, 2, 4}}}}});
    t = Tokenizer::load(dir);
    EXPECT_EQ(t.end_of_generation_ids(), (std::vector<int32_t>{2, 4}));
    EXPECT_TRUE(t.is_end_of_generation(2));
    EXPECT_FALSE(t.is_end_of_generation(1));
    EXPECT_EQ(t.encode("ab", true), (std::vector<int32_t>{5}));  // no config: nothing added

    // A post-processor in tokenizer.json wins over the config's flags.
    json with_post = small();
    with_post["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
          {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
        {"special_tokens", {{"</s>", {{"id", "</s>"}, {"ids", {4}}, {"tokens", {"</s>"}}}}}}};
    dir = package("post", {{"tokenizer.json", with_post}, {"tokenizer_config.json", config}});
    EXPECT_EQ(Tokenizer::load(dir).encode("ab", true), (std::vector<int32_t>{5, 4}));

    dir = package(
        "bad", {{"tokenizer.json", small()}, {"generation_config.json", {{"eos_token_id", "x"}}}});
    const std::string e = error_of([&] { Tokenizer::load(dir); });
    EXPECT_NE(e.find("generation_config.json: /eos_token_id: not an integer"), std::string::npos)
        << e;
}

}  // namespace
}  // namespace gguftool
