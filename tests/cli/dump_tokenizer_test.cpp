// `gguftool dump`'s tokenizer section (text) and "tokenizer" member (--json): shown when the file
// has a tokenizer (tokenizer.ggml.model), left out otherwise and with --no-metadata.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "cli_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using nlohmann::json;

// The tokenizer section of dump's text output: label -> value, in order of appearance; empty when
// there is no section. The section is the heading line "tokenizer" and the indented lines after it.
std::vector<std::pair<std::string, std::string>> text_section(const std::string &out) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::istringstream in(out);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (!inside) {
            inside = line == "tokenizer";
            continue;
        }
        if (line.rfind("  ", 0) != 0) break;
        // "  <label padded to 14> <value>"
        EXPECT_GE(line.size(), 17u) << line;
        std::string label = line.substr(2, 14);
        label.erase(label.find_last_not_of(' ') + 1);
        rows.emplace_back(label, line.substr(17));
    }
    return rows;
}

std::string dump_text(const std::vector<std::string> &args) {
    std::vector<std::string> a = {"dump"};
    a.insert(a.end(), args.begin(), args.end());
    const RunResult r = run_gguftool(a);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
}

// The sample's tokenizer keys, as llama.cpp's reader sees them: the facts the section must show.
TEST(DumpTokenizer, SampleKeysAsLlamaCppReadsThem) {
    LlamaGguf l(kSample);
    ASSERT_NE(l.ctx, nullptr);
    const reference::Ggml &g = *l.g;
    const auto key = [&](const char *k) { return g.gguf_find_key(l.ctx, k); };
    ASSERT_GE(key("tokenizer.ggml.model"), 0);
    EXPECT_STREQ(g.gguf_get_val_str(l.ctx, key("tokenizer.ggml.model")), "llama");
    EXPECT_EQ(g.gguf_get_arr_n(l.ctx, key("tokenizer.ggml.tokens")), 320u);
    EXPECT_EQ(g.gguf_get_val_u32(l.ctx, key("tokenizer.ggml.bos_token_id")), 1u);
    EXPECT_EQ(g.gguf_get_val_u32(l.ctx, key("tokenizer.ggml.eos_token_id")), 2u);
    EXPECT_EQ(g.gguf_get_val_u32(l.ctx, key("tokenizer.ggml.unknown_token_id")), 0u);
    EXPECT_GE(key("tokenizer.chat_template"), 0);
    EXPECT_LT(key("tokenizer.ggml.pre"), 0);
}

TEST(DumpTokenizer, SampleTextSection) {
    const std::string out = dump_text({kSample});
    const std::vector<std::pair<std::string, std::string>> want = {
        {"model", "llama"},
        {"pre-tokenizer", "-"},
        {"tokens", "320"},
        {"special", "bos 1 (added), eos 2, unk 0"},  // add_bos_token true, add_eos_token false
        {"chat template", "yes"},
        {"exportable", "yes (gguftool tokenizer)"},
    };
    EXPECT_EQ(text_section(out), want) << out;
    // Between the metadata and the tensor table.
    const size_t metadata = out.find("\nmetadata ("), section = out.find("\ntokenizer\n"),
                 tensors = out.find("\ntensors (");
    ASSERT_NE(section, std::string::npos);
    EXPECT_LT(metadata, section);
    EXPECT_LT(section, tensors);
}

TEST(DumpTokenizer, SampleJsonMember) {
    const json doc = dump_json({kSample});
    ASSERT_TRUE(doc.contains("tokenizer"));
    const json want = {{"model", "llama"},  {"pre", nullptr},
                       {"tokens", 320},     {"special_ids", {{"bos", 1}, {"eos", 2}, {"unk", 0}}},
                       {"add_bos", true},   {"add_eos", false},
                       {"add_sep", false},  {"chat_template", true},
                       {"exportable", true}};
    EXPECT_EQ(doc["tokenizer"], want) << doc["tokenizer"].dump();
}

TEST(DumpTokenizer, AbsentWithoutTokenizerKeys) {
    TempDir dir;
    const std::string path = dir.file("plain.gguf");
    gguf::Writer w;
    w.add("general.architecture", gguf::MetaValue::str("llama"));
    w.add("llama.block_count", gguf::MetaValue::u32(1));
    w.add_tensor("t", GgmlType::f32, {4}, std::vector<uint8_t>(16, 0));
    w.write(path);
    const std::string out = dump_text({path});
    EXPECT_NE(out.find("llama.block_count"), std::string::npos) << out;
    EXPECT_EQ(out.find("\ntokenizer\n"), std::string::npos) << out;
    EXPECT_FALSE(dump_json({path}).contains("tokenizer"));
}

TEST(DumpTokenizer, LeftOutWithNoMetadata) {
    EXPECT_EQ(dump_text({"--no-metadata", kSample}).find("\ntokenizer\n"), std::string::npos);
    EXPECT_FALSE(dump_json({"--no-metadata", kSample}).contains("tokenizer"));
    // --no-tensors keeps it: it is part of the metadata.
    EXPECT_TRUE(dump_json({"--no-tensors", kSample}).contains("tokenizer"));
}

// A vocabulary `gguftool tokenizer` refuses: dump says so with the same reason, and leaves out the
// special ids, which are known only once the vocabulary reads.
TEST(DumpTokenizer, UnexportableVocabularyGivesTokenizersReason) {
    TempDir dir;
    const std::pair<const char *, std::vector<std::string>> cases[] = {
        {"rwkv.gguf", {"--set", "tokenizer.ggml.model=string:rwkv"}},
        {"bos.gguf", {"--set", "tokenizer.ggml.bos_token_id=uint32:5000"}},
    };
    for (const auto &[name, edit] : cases) {
        const std::string path = dir.file(name);
        std::vector<std::string> args = {"edit", kSample, "-o", path};
        args.insert(args.end(), edit.begin(), edit.end());
        ASSERT_EQ(run_gguftool(args).status, 0) << name;
        const RunResult refused = run_gguftool({"tokenizer", path, dir.file("out")});
        ASSERT_EQ(refused.status, 1) << name;
        // "gguftool: FILE: KEY: reason" -> "KEY: reason"
        const std::string prefix = "gguftool: " + path + ": ";
        ASSERT_EQ(refused.err.rfind(prefix, 0), 0u) << refused.err;
        const std::string reason =
            refused.err.substr(prefix.size(), refused.err.size() - prefix.size() - 1);

        const json t = dump_json({path})["tokenizer"];
        EXPECT_EQ(t["exportable"], false) << name;
        EXPECT_EQ(t["export_problem"], reason) << name;
        EXPECT_FALSE(t.contains("special_ids")) << name;
        EXPECT_EQ(t["tokens"], 320) << name;

        std::map<std::string, std::string> rows;
        for (const auto &[label, value] : text_section(dump_text({path}))) rows[label] = value;
        EXPECT_EQ(rows["exportable"], "no: " + reason) << name;
        EXPECT_EQ(rows.count("special"), 0u) << name;
    }
}

}  // namespace
}  // namespace gguftool::test
