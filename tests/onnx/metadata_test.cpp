// GGUF metadata in metadata_props: scalars as text, arrays as JSON (shortened on request, and
// saying so), valid UTF-8 throughout, plus the source file's name and GGUF version.
#include <nlohmann/json.hpp>

#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using gguf::MetaValue;
using nlohmann::json;

std::map<std::string, std::string> props(const onnx::ModelProto &m) {
    std::map<std::string, std::string> p;
    for (const auto &e : m.metadata_props())
        EXPECT_TRUE(p.emplace(e.key(), e.value()).second) << e.key();
    return p;
}

TEST(Metadata, ScalarsAsTextArraysAsJson) {
    TempDir dir;
    gguf::Writer w(2);
    w.add("general.architecture", MetaValue::str("llama"))
        .add("u8", MetaValue::u8(200))
        .add("i8", MetaValue::i8(-100))
        .add("u16", MetaValue::u16(65535))
        .add("i16", MetaValue::i16(-32768))
        .add("u32", MetaValue::u32(4000000000u))
        .add("i32", MetaValue::i32(-7))
        .add("u64", MetaValue::u64(18446744073709551615ull))
        .add("i64", MetaValue::i64(-9223372036854775807ll - 1))
        .add("f32", MetaValue::f32(0.1f))
        .add("f64", MetaValue::f64(-2.5e-300))
        .add("yes", MetaValue::boolean(true))
        .add("no", MetaValue::boolean(false))
        .add("bad_utf8", MetaValue::str("a\xff"
                                        "b\xc3"))
        .add("ints", MetaValue::array_of<int32_t>({1, -2, 3}))
        .add("floats", MetaValue::array_of<float>({0.1f, 1e30f, -0.0f}))
        .add("strings", MetaValue::array_of<std::string>({"a\"b", "c\\d", "\n", "\xfe"}))
        .add("bools", MetaValue::array_of<bool>({true, false}))
        .add("nested",
             MetaValue::array(gguf::ValueType::array, {MetaValue::array_of<uint8_t>({1, 2}),
                                                       MetaValue::array_of<uint8_t>({})}));
    write_gguf(dir.file("model.gguf"), {{"t", GgmlType::f32, {1}, {0, 0, 0, 0}}}, w);
    onnx_export::export_model(gguf::Model::open(dir.file("model.gguf")), dir.file("m.onnx"), {});
    const auto p = props(check_model(dir.file("m.onnx")));

    EXPECT_EQ(p.at("general.architecture"), "llama");
    EXPECT_EQ(p.at("u8"), "200");
    EXPECT_EQ(p.at("i8"), "-100");
    EXPECT_EQ(p.at("u16"), "65535");
    EXPECT_EQ(p.at("i16"), "-32768");
    EXPECT_EQ(p.at("u32"), "4000000000");
    EXPECT_EQ(p.at("i32"), "-7");
    EXPECT_EQ(p.at("u64"), "18446744073709551615");
    EXPECT_EQ(p.at("i64"), "-9223372036854775808");
    EXPECT_EQ(std::stof(p.at("f32")), 0.1f);
    EXPECT_EQ(p.at("f32"), "0.1");
    EXPECT_EQ(std::stod(p.at("f64")), -2.5e-300);
    EXPECT_EQ(p.at("yes"), "true");
    EXPECT_EQ(p.at("no"), "false");
    EXPECT_EQ(p.at("bad_utf8"),
              "a\xEF\xBF\xBD"
              "b\xEF\xBF\xBD");

    EXPECT_EQ(json::parse(p.at("ints")), json::parse("[1, -2, 3]"));
    const json f = json::parse(p.at("floats"));
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(float(f[0].get<double>()), 0.1f);
    EXPECT_EQ(float(f[1].get<double>()), 1e30f);
    EXPECT_TRUE(std::signbit(f[2].get<double>()));
    EXPECT_EQ(p.at("floats").substr(0, 5), "[0.1,");  // shortest text that reads back
    EXPECT_EQ(json::parse(p.at("strings")), (json{"a\"b", "c\\d", "\n", "\xEF\xBF\xBD"}));
    EXPECT_EQ(json::parse(p.at("bools")), json::parse("[true, false]"));
    EXPECT_EQ(json::parse(p.at("nested")), json::parse("[[1, 2], []]"));

    EXPECT_EQ(p.at("gguftool.source"), "model.gguf");
    EXPECT_EQ(p.at("gguftool.gguf_version"), "2");
    EXPECT_EQ(p.count("gguftool.shortened_arrays"), 0u);
}

TEST(Metadata, MaxArrayShortensAndSaysSo) {
    TempDir dir;
    std::vector<std::string> tokens;
    for (int i = 0; i < 1000; ++i) tokens.push_back("tok" + std::to_string(i));
    gguf::Writer w;
    w.add("tokenizer.ggml.tokens", MetaValue::array_of(tokens))
        .add("short", MetaValue::array_of<int32_t>({1, 2, 3}))
        .add("nested", MetaValue::array(gguf::ValueType::array,
                                        {MetaValue::array_of<int8_t>({1, 2, 3, 4, 5})}));
    write_gguf(dir.file("m.gguf"), {{"t", GgmlType::f32, {1}, {0, 0, 0, 0}}}, w);
    onnx_export::Options o;
    o.max_array = 3;
    const auto r =
        onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
    const auto p = props(check_model(dir.file("m.onnx")));
    EXPECT_EQ(json::parse(p.at("tokenizer.ggml.tokens")), (json{"tok0", "tok1", "tok2"}));
    EXPECT_EQ(json::parse(p.at("short")), (json{1, 2, 3}));
    EXPECT_EQ(json::parse(p.at("nested")), json::parse("[[1, 2, 3]]"));
    EXPECT_EQ(json::parse(p.at("gguftool.shortened_arrays")),
              json::parse(R"({"tokenizer.ggml.tokens": 1000, "nested": 5})"));
    ASSERT_EQ(r.notes.size(), 2u);
    EXPECT_NE(r.notes[0].find("'tokenizer.ggml.tokens' (1000 elements) shortened to 3 elements"),
              std::string::npos)
        << r.notes[0];

    // Without --max-array every element is kept.
    onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("full.onnx"), {});
    EXPECT_EQ(
        json::parse(props(load_model(dir.file("full.onnx"))).at("tokenizer.ggml.tokens")).size(),
        1000u);
}

// A GGUF key that happens to be one of ours wins; the model still has unique keys.
TEST(Metadata, GgufKeysWinOverOurs) {
    TempDir dir;
    gguf::Writer w;
    w.add("gguftool.source", MetaValue::str("theirs"));
    write_gguf(dir.file("m.gguf"), {{"t", GgmlType::f32, {1}, {0, 0, 0, 0}}}, w);
    onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), {});
    EXPECT_EQ(props(check_model(dir.file("m.onnx"))).at("gguftool.source"), "theirs");
}

}  // namespace
}  // namespace gguftool::onnxtest
