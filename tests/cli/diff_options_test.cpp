// `gguftool diff`: --tensor, --metadata-only, split models, errors and exit codes, and the
// JSON document's keys and their types.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "diff_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using gguf::MetaValue;
using nlohmann::json;

std::vector<std::string> names_of(const json &doc) {
    std::vector<std::string> out;
    for (const json &t : doc["tensors"]) out.push_back(t["name"]);
    return out;
}

// a.gguf and b.gguf: t.same equal, t.diff different, t.a only in a, t.b only in b; the metadata
// equal.
class DiffFiles : public ::testing::Test {
protected:
    void SetUp() override {
        gguf::Writer a, b;
        for (gguf::Writer *w : {&a, &b}) {
            w->add("general.architecture", MetaValue::str("llama"));
            w->add_tensor("t.same", GgmlType::f32, {8}, f32_bytes(test_weights(8, 1)));
        }
        a.add_tensor("t.diff", GgmlType::f32, {8}, f32_bytes(test_weights(8, 2)));
        b.add_tensor("t.diff", GgmlType::f32, {8}, f32_bytes(test_weights(8, 3)));
        a.add_tensor("t.a", GgmlType::f16, {4, 2}, std::vector<uint8_t>(16));
        b.add_tensor("t.b", GgmlType::q8_0, {32},
                     llama_quantize(GgmlType::q8_0, test_weights(32, 4), 32));
        a.write(file_a);
        b.write(file_b);
    }
    TempDir dir;
    const std::string file_a = dir.file("a.gguf"), file_b = dir.file("b.gguf");
};

TEST_F(DiffFiles, TensorGlobsSelectTensors) {
    const DiffRun same = diff_json({"--tensor", "t.same", file_a, file_b});
    EXPECT_EQ(same.status, 0) << same.err;
    EXPECT_EQ(names_of(same.doc), std::vector<std::string>{"t.same"});
    EXPECT_EQ(same.doc["identical"], true);
    const RunResult text = run_gguftool({"diff", "--tensor", "t.same", file_a, file_b});
    EXPECT_NE(text.out.find("identical (in the tensors selected)"), std::string::npos) << text.out;

    const DiffRun two = diff_json({"--tensor", "t.s*", "--tensor", "t.d*", file_a, file_b});
    EXPECT_EQ(two.status, 1);
    EXPECT_EQ(names_of(two.doc), (std::vector<std::string>{"t.same", "t.diff"}));
}

TEST_F(DiffFiles, MetadataOnlyLeavesTheTensorsOut) {
    const DiffRun d = diff_json({"--metadata-only", file_a, file_b});
    EXPECT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(d.doc["identical"], true);
    EXPECT_EQ(d.doc["tensors_compared"], false);
    EXPECT_TRUE(d.doc["tensors"].empty());
    const RunResult text = run_gguftool({"diff", "--metadata-only", file_a, file_b});
    EXPECT_EQ(text.status, 0);
    EXPECT_EQ(text.out.find("tensors:"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("identical (header and metadata)"), std::string::npos) << text.out;
    // Together they make no sense: a usage error.
    EXPECT_EQ(run_gguftool({"diff", "--metadata-only", "--tensor", "x", file_a, file_b}).status, 2);
}

TEST_F(DiffFiles, JsonKeysAndTypes) {
    const DiffRun d = diff_json({file_a, file_b});
    ASSERT_EQ(d.status, 1) << d.err;
    const json &doc = d.doc;
    EXPECT_TRUE(doc["identical"].is_boolean());
    EXPECT_TRUE(doc["a"].is_string() && doc["b"].is_string());
    EXPECT_TRUE(doc["header"]["identical"].is_boolean());
    for (const char *k : {"version_a", "version_b", "alignment_a", "alignment_b"})
        EXPECT_TRUE(doc["header"][k].is_number_unsigned()) << k;
    for (const char *k : {"byte_order_a", "byte_order_b"})
        EXPECT_TRUE(doc["header"][k].is_string()) << k;
    for (const char *k : {"only_a", "only_b", "changed"})
        EXPECT_TRUE(doc["metadata"][k].is_array()) << k;
    EXPECT_TRUE(doc["metadata"]["identical"].is_boolean());
    ASSERT_TRUE(doc["tensors"].is_array());
    EXPECT_EQ(names_of(doc), (std::vector<std::string>{"t.same", "t.diff", "t.a", "t.b"}));
    std::map<std::string, std::string> status;
    for (const json &t : doc["tensors"]) {
        SCOPED_TRACE(t.dump());
        status[t["name"]] = t["status"];
        EXPECT_TRUE(t["name"].is_string());
        EXPECT_TRUE(t["note"].is_string());
        for (const char *k : {"type_a", "type_b", "block_a", "block_b"})
            EXPECT_TRUE(t[k].is_string() || t[k].is_null()) << k;
        for (const char *k : {"dims_a", "dims_b"}) EXPECT_TRUE(t[k].is_array() || t[k].is_null());
        for (const char *k : {"max_abs_diff", "rmse", "nmse", "cosine"})
            EXPECT_TRUE(t[k].is_number() || t[k].is_null()) << k;
        for (const char *k : {"mismatches", "first_different_block", "elements_a", "elements_b",
                              "bytes_a", "bytes_b"})
            EXPECT_TRUE(t[k].is_number_unsigned() || t[k].is_null()) << k;
    }
    EXPECT_EQ(status["t.same"], "same");
    EXPECT_EQ(status["t.diff"], "different");
    EXPECT_EQ(status["t.a"], "only_a");
    EXPECT_EQ(status["t.b"], "only_b");
    const json only_a = tensor_entry(doc, "t.a");
    EXPECT_EQ(only_a["type_a"], "f16");
    EXPECT_EQ(only_a["dims_a"], json({4, 2}));
    EXPECT_TRUE(only_a["type_b"].is_null());
    EXPECT_EQ(doc["summary"], json::parse(R"({"same":1,"different":1,"only_a":1,"only_b":1})"));
}

TEST_F(DiffFiles, TextListsWhatDiffers) {
    const RunResult r = run_gguftool({"diff", file_a, file_b});
    EXPECT_EQ(r.status, 1);
    // Lines of the text; the name column is as wide as the longest name listed.
    for (const char *line : {R"(tensors: 1 different, 1 same, 1 only in a, 1 only in b)",
                             R"(  only in a  t\.a +f16 4 x 2 \(16 bytes\)\n)",
                             R"(  only in b  t\.b +q8_0 32 \(34 bytes\)\n)",
                             R"(  different  t\.diff +f32 8 \(32 bytes\)\n)",
                             R"(first different block: 0\n)", R"(header: identical)",
                             R"(metadata: identical \(1 key\))", R"(a and b differ in tensors)"})
        EXPECT_TRUE(std::regex_search(r.out, std::regex(line))) << line << "\n" << r.out;
    EXPECT_EQ(r.out.find("t.same"), std::string::npos) << r.out;  // nothing to say about it
}

// The same model written whole and as two shards (named as llama.cpp's gguf-split names them).
class DiffSplit : public ::testing::Test {
protected:
    void SetUp() override {
        gguf::Writer whole;
        whole.add("general.architecture", MetaValue::str("llama"));
        gguf::Writer shards[2];
        for (uint16_t no = 0; no < 2; ++no) {
            if (no == 0) shards[no].add("general.architecture", MetaValue::str("llama"));
            shards[no].add("split.no", MetaValue::u16(no));
            shards[no].add("split.count", MetaValue::u16(2));
            shards[no].add("split.tensors.count", MetaValue::i32(4));
            for (int k = 0; k < 2; ++k) {
                const std::string name = fmt::format("blk.{}.w{}", no, k);
                const std::vector<uint8_t> data =
                    llama_quantize(GgmlType::q4_0, test_weights(64, 10 * no + k), 32);
                whole.add_tensor(name, GgmlType::q4_0, {32, 2}, data);
                shards[no].add_tensor(name, GgmlType::q4_0, {32, 2}, data);
            }
        }
        whole.write(dir.file("whole.gguf"));
        shards[0].write(dir.file("split-00001-of-00002.gguf"));
        shards[1].write(dir.file("split-00002-of-00002.gguf"));
    }
    TempDir dir;
};

TEST_F(DiffSplit, SplitModelIsIdenticalToTheWholeOne) {
    const DiffRun d = diff_json({dir.file("split-00001-of-00002.gguf"), dir.file("whole.gguf")});
    EXPECT_EQ(d.status, 0) << d.err << d.doc.dump(2);
    EXPECT_EQ(d.doc["identical"], true);
    EXPECT_EQ(d.doc["tensors"].size(), 4u);
    for (const json &t : d.doc["tensors"]) EXPECT_EQ(t["status"], "same");
    // From any shard, on either side.
    const RunResult r =
        run_gguftool({"diff", dir.file("whole.gguf"), dir.file("split-00002-of-00002.gguf")});
    EXPECT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("4 tensors in 2 shards"), std::string::npos) << r.out;
}

TEST_F(DiffSplit, MismatchedSplitSetIsAnError) {
    gguf::Writer other;  // shard 2 of another model: split.count 3
    other.add("split.no", MetaValue::u16(1));
    other.add("split.count", MetaValue::u16(3));
    other.add("split.tensors.count", MetaValue::i32(4));
    other.write(dir.file("split-00002-of-00002.gguf"));
    const RunResult r =
        run_gguftool({"diff", dir.file("whole.gguf"), dir.file("split-00001-of-00002.gguf")});
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("gguftool: " + dir.file("split-00002-of-00002.gguf")), std::string::npos)
        << r.err;
}

TEST(DiffErrors, UnreadableFilesExitTwoNamingTheFile) {
    TempDir dir;
    const std::string missing = dir.file("missing.gguf");
    RunResult r = run_gguftool({"diff", kSample, missing});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("gguftool: " + missing), std::string::npos) << r.err;

    const std::string junk = dir.file("junk.gguf");
    write_file(junk, std::vector<uint8_t>(64, 'x'));
    r = run_gguftool({"diff", junk, kSample});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("gguftool: " + junk), std::string::npos) << r.err;

    EXPECT_EQ(run_gguftool({"diff", kSample}).status, 2);  // usage: B missing
}

}  // namespace
}  // namespace gguftool::test
