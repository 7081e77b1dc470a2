// `gguftool diff`, metadata: keys only in one file, type and value changes, arrays (length, first
// differing index, nested), float bits, and files of different byte orders.
#include <gtest/gtest.h>

#include <cmath>

#include "diff_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using gguf::MetaValue;
using gguf::ValueType;
using nlohmann::json;

MetaValue nested(std::vector<std::vector<int32_t>> v) {
    std::vector<MetaValue> inner;
    for (const auto &x : v) inner.push_back(MetaValue::array_of(x));
    return MetaValue::array(ValueType::array, std::move(inner));
}

class DiffMetadata : public ::testing::Test {
protected:
    void SetUp() override {
        gguf::Writer a, b;
        const auto both = [&](const std::string &key, MetaValue va, MetaValue vb) {
            a.add(key, std::move(va));
            b.add(key, std::move(vb));
        };
        both("general.architecture", MetaValue::str("llama"), MetaValue::str("llama"));
        a.add("only_a.key", MetaValue::u32(1));
        both("type.key", MetaValue::u32(7), MetaValue::i32(7));
        both("value.key", MetaValue::u32(1), MetaValue::u32(2));
        both("string.key", MetaValue::str("abc"), MetaValue::str("abd"));
        both("float.key", MetaValue::f32(0.0f), MetaValue::f32(-0.0f));
        both("float_same.key", MetaValue::f32(1.5f), MetaValue::f32(1.5f));
        both("nan.key", MetaValue::f32(NAN), MetaValue::f32(NAN));
        both("length.key", MetaValue::array_of<int32_t>({1, 2, 3}),
             MetaValue::array_of<int32_t>({1, 2, 3, 4}));
        both("index.key", MetaValue::array_of<std::string>({"a", "b", "c"}),
             MetaValue::array_of<std::string>({"a", "x", "c"}));
        both("element_type.key", MetaValue::array_of<int32_t>({1, 2}),
             MetaValue::array_of<uint32_t>({1, 2}));
        both("nested.key", nested({{1, 2}, {3}}), nested({{1, 2}, {4}}));
        both("nested_same.key", nested({{1}, {2, 3}}), nested({{1}, {2, 3}}));
        b.add("only_b.key", MetaValue::str("x"));
        a.write(dir.file("a.gguf"));
        b.write(dir.file("b.gguf"));
        d = diff_json({dir.file("a.gguf"), dir.file("b.gguf")});
        ASSERT_EQ(d.status, 1) << d.err;
    }

    json changed(const std::string &key) const {
        for (const json &c : d.doc["metadata"]["changed"])
            if (c["key"] == key) return c;
        return nullptr;
    }

    TempDir dir;
    DiffRun d;
};

TEST_F(DiffMetadata, KeysOnlyInOneFile) {
    const json &m = d.doc["metadata"];
    EXPECT_EQ(m["identical"], false);
    ASSERT_EQ(m["only_a"].size(), 1u);
    EXPECT_EQ(m["only_a"][0]["key"], "only_a.key");
    EXPECT_EQ(m["only_a"][0]["type"], "uint32");
    EXPECT_EQ(m["only_a"][0]["value"], 1);
    ASSERT_EQ(m["only_b"].size(), 1u);
    EXPECT_EQ(m["only_b"][0]["key"], "only_b.key");
    EXPECT_EQ(m["only_b"][0]["value"], "x");
    // general.architecture, float_same, nan (the same bits) and nested_same.
    EXPECT_EQ(m["identical_keys"], 4);
    EXPECT_EQ(m["changed"].size(), 8u);
}

TEST_F(DiffMetadata, TypeAndValueChanges) {
    const json type = changed("type.key");
    EXPECT_EQ(type["type_a"], "uint32");
    EXPECT_EQ(type["type_b"], "int32");
    EXPECT_EQ(type["type_changed"], true);
    const json value = changed("value.key");
    EXPECT_EQ(value["type_changed"], false);
    EXPECT_EQ(value["value_a"], 1);
    EXPECT_EQ(value["value_b"], 2);
    EXPECT_EQ(changed("string.key")["value_b"], "abd");
    EXPECT_FALSE(changed("float.key").is_null());  // 0 and -0: floats compare by bits
    EXPECT_TRUE(changed("float_same.key").is_null());
    EXPECT_TRUE(changed("nan.key").is_null());
}

TEST_F(DiffMetadata, Arrays) {
    const json length = changed("length.key");
    EXPECT_EQ(length["length_a"], 3);
    EXPECT_EQ(length["length_b"], 4);
    EXPECT_EQ(length["first_different_index"], 3);  // equal up to A's end
    const json index = changed("index.key");
    EXPECT_EQ(index["array_type_a"], "string");
    EXPECT_EQ(index["first_different_index"], 1);
    const json element_type = changed("element_type.key");
    EXPECT_EQ(element_type["type_changed"], true);
    EXPECT_EQ(element_type["array_type_a"], "int32");
    EXPECT_EQ(element_type["array_type_b"], "uint32");
    EXPECT_TRUE(element_type["first_different_index"].is_null());
    EXPECT_EQ(changed("nested.key")["first_different_index"], 1);
    EXPECT_EQ(changed("nested.key")["value_b"], json::parse("[[1,2],[4]]"));
    EXPECT_TRUE(changed("nested_same.key").is_null());
}

TEST_F(DiffMetadata, TextListsEveryDifference) {
    const RunResult r = run_gguftool({"diff", dir.file("a.gguf"), dir.file("b.gguf")});
    EXPECT_EQ(r.status, 1);
    for (const char *line :
         {"metadata: 8 changed, 1 only in a, 1 only in b; 4 keys identical",
          "only in a  only_a.key", "only in b  only_b.key", "uint32 -> int32  7 -> 7",
          "uint32  1 -> 2", "int32[3] -> int32[4]  first difference at index 3: (none) -> 4",
          "string[3]  first difference at index 1: \"b\" -> \"x\"", "tensors: identical (0)",
          "a and b differ in metadata"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(DiffMetadataByteOrder, SameValuesInBothByteOrdersAreIdentical) {
    TempDir dir;
    for (const gguf::ByteOrder order : {gguf::ByteOrder::little, gguf::ByteOrder::big}) {
        gguf::Writer w(3, order);
        w.add("u32", MetaValue::u32(0x01020304))
            .add("f64", MetaValue::f64(-2.5))
            .add("ints", MetaValue::array_of<int32_t>({1, -2, 70000}))
            .add("strings", MetaValue::array_of<std::string>({"a", "bc"}));
        w.write(dir.file(order == gguf::ByteOrder::big ? "big.gguf" : "little.gguf"));
    }
    const DiffRun d = diff_json({dir.file("little.gguf"), dir.file("big.gguf")});
    EXPECT_EQ(d.status, 1) << d.err;  // the header differs
    EXPECT_EQ(d.doc["header"]["identical"], false);
    EXPECT_EQ(d.doc["metadata"]["identical"], true);
    EXPECT_EQ(d.doc["metadata"]["identical_keys"], 4);
}

}  // namespace
}  // namespace gguftool::test
