// Metadata values from text (gguf_value_text.hpp): every scalar type with its range, exact floats,
// JSON arrays of every element type and nesting, files as strings, and the errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "gguf_test_support.hpp"
#include "gguftool/gguf_value_text.hpp"

namespace gguftool {
namespace {

using gguf::MetaValue;
using gguf::ValueType;

// The message of the gguftool::Error `f` throws ("" if it throws none).
template <class F>
std::string error_of(F &&f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

MetaValue set_value(const std::string &arg) {
    return gguf::parse_set(arg).value;
}

struct IntCase {
    const char *type;
    ValueType value_type;
    const char *min, *max, *below, *above;
    uint64_t min_bits, max_bits;  // the stored bits, zero-extended
};

const IntCase kIntCases[] = {
    {"uint8", ValueType::uint8, "0", "255", "-1", "256", 0, 0xff},
    {"int8", ValueType::int8, "-128", "127", "-129", "128", 0x80, 0x7f},
    {"uint16", ValueType::uint16, "0", "65535", "-1", "65536", 0, 0xffff},
    {"int16", ValueType::int16, "-32768", "32767", "-32769", "32768", 0x8000, 0x7fff},
    {"uint32", ValueType::uint32, "0", "4294967295", "-1", "4294967296", 0, 0xffffffff},
    {"int32", ValueType::int32, "-2147483648", "2147483647", "-2147483649", "2147483648",
     0x80000000, 0x7fffffff},
    {"uint64", ValueType::uint64, "0", "18446744073709551615", "-1", "18446744073709551616", 0,
     UINT64_MAX},
    {"int64", ValueType::int64, "-9223372036854775808", "9223372036854775807",
     "-9223372036854775809", "9223372036854775808", uint64_t(1) << 63, INT64_MAX},
};

TEST(ValueText, IntegersAtTheEndsOfTheirRange) {
    for (const IntCase &c : kIntCases) {
        SCOPED_TRACE(c.type);
        const MetaValue lo = set_value(fmt::format("k={}:{}", c.type, c.min));
        const MetaValue hi = set_value(fmt::format("k={}:{}", c.type, c.max));
        EXPECT_EQ(lo.type(), c.value_type);
        EXPECT_EQ(lo.bits(), c.min_bits);
        EXPECT_EQ(hi.bits(), c.max_bits);
        for (const char *outside : {c.below, c.above}) {
            const std::string err =
                error_of([&] { set_value(fmt::format("my.key={}:{}", c.type, outside)); });
            EXPECT_EQ(err.rfind("my.key: ", 0), 0u) << err;
            EXPECT_NE(err.find(fmt::format("'{}' is out of range for {} ({} to {})", outside,
                                           c.type, c.min, c.max)),
                      std::string::npos)
                << err;
        }
    }
}

TEST(ValueText, Uint8Of4096NamesKeyTypeAndValue) {
    EXPECT_EQ(error_of([] { gguf::parse_set("general.x=uint8:4096"); }),
              "general.x: '4096' is out of range for uint8 (0 to 255)");
}

TEST(ValueText, OnlyPlainDecimalIntegers) {
    for (const char *bad : {"", "1.5", "1e3", "0x10", "+1", " 1", "1 ", "--1", "-", "12a"}) {
        const std::string err = error_of([&] { set_value(std::string("k=int32:") + bad); });
        EXPECT_NE(err.find(fmt::format("'{}' is not an int32", bad)), std::string::npos) << err;
    }
    EXPECT_EQ(set_value("k=int32:-0").bits(), 0u);
    EXPECT_EQ(set_value("k=uint16:007").bits(), 7u);
}

TEST(ValueText, FloatsAreRoundedOnceFromTheDecimalText) {
    EXPECT_EQ(set_value("k=float32:0.1").bits(), 0x3dcccccdu);  // the float nearest 0.1
    EXPECT_EQ(set_value("k=float64:0.1").bits(), 0x3fb999999999999aull);
    // Just above the midpoint between 1 and the next float: through a double it would become
    // the midpoint itself and then round to even (1.0); read once it is the next float up.
    EXPECT_EQ(set_value("k=float32:1.0000000596046447753906251").bits(), 0x3f800001u);
    EXPECT_EQ(set_value("k=float32:-0").bits(), 0x80000000u);
    EXPECT_EQ(set_value("k=float32:1e-45").bits(), 1u);  // the smallest subnormal
    EXPECT_EQ(set_value("k=float32:3.4028235e38").bits(), 0x7f7fffffu);
    EXPECT_EQ(set_value("k=float32:inf").bits(), 0x7f800000u);
    EXPECT_EQ(set_value("k=float32:-inf").bits(), 0xff800000u);
    EXPECT_TRUE(std::isnan(std::bit_cast<float>(uint32_t(set_value("k=float32:nan").bits()))));
    EXPECT_EQ(set_value("k=float64:1e308").bits(), std::bit_cast<uint64_t>(1e308));
    EXPECT_EQ(set_value("k=float32:12").bits(), std::bit_cast<uint32_t>(12.0f));
}

TEST(ValueText, FloatsOutOfRangeOrMalformed) {
    for (const char *arg : {"k=float32:1e39", "k=float32:-1e39", "k=float32:1e-46",
                            "k=float64:1e309", "k=float64:1e-400"}) {
        const std::string err = error_of([&] { set_value(arg); });
        EXPECT_NE(err.find("is out of range for float"), std::string::npos) << arg << ": " << err;
    }
    for (const char *arg :
         {"k=float32:", "k=float32:one", "k=float32:1,5", "k=float32:0x1p3", "k=float64:+1"}) {
        const std::string err = error_of([&] { set_value(arg); });
        EXPECT_NE(err.find("is not a float"), std::string::npos) << arg << ": " << err;
    }
}

TEST(ValueText, BoolsAreTrueOrFalse) {
    EXPECT_EQ(set_value("k=bool:true").bits(), 1u);
    EXPECT_EQ(set_value("k=bool:false").bits(), 0u);
    EXPECT_EQ(set_value("k=bool:false").type(), ValueType::bool_);
    for (const char *bad : {"1", "0", "True", "yes", ""})
        EXPECT_NE(error_of([&] {
                      set_value(std::string("k=bool:") + bad);
                  }).find("is not a bool (true or false)"),
                  std::string::npos)
            << bad;
}

TEST(ValueText, StringsAreTakenAsTheyAre) {
    const gguf::Assignment a = gguf::parse_set("tokenizer.chat_template=string:a=b: {{ x }}");
    EXPECT_EQ(a.key, "tokenizer.chat_template");
    EXPECT_EQ(a.value.type(), ValueType::string);
    EXPECT_EQ(a.value.string(), "a=b: {{ x }}");
    EXPECT_EQ(set_value("k=string:").string(), "");
}

TEST(ValueText, MalformedArguments) {
    EXPECT_NE(error_of([] { gguf::parse_set("novalue"); }).find("expected KEY=TYPE:VALUE"),
              std::string::npos);
    EXPECT_NE(error_of([] { gguf::parse_set("=uint8:1"); }).find("expected KEY=TYPE:VALUE"),
              std::string::npos);
    for (const char *arg : {"k=1", "k=u8:1", "k=UINT8:1", "k=array:[1]"}) {
        const std::string err = error_of([&] { gguf::parse_set(arg); });
        EXPECT_NE(err.find("k: expected KEY=TYPE:VALUE, TYPE one of uint8"), std::string::npos)
            << arg << ": " << err;
    }
    EXPECT_NE(error_of([] { gguf::parse_set("k=array:[1]"); }).find("(arrays: --set-json)"),
              std::string::npos);
}

MetaValue json_value(const std::string &arg) {
    return gguf::parse_set_json(arg).value;
}

std::vector<uint64_t> element_bits(const MetaValue &v) {
    std::vector<uint64_t> out;
    for (const MetaValue &e : v.elements()) out.push_back(e.bits());
    return out;
}

TEST(ValueText, JsonArraysOfEveryScalarType) {
    for (const IntCase &c : kIntCases) {
        SCOPED_TRACE(c.type);
        const MetaValue a = json_value(fmt::format("k={}:[{}, {}, 0]", c.type, c.min, c.max));
        ASSERT_EQ(a.type(), ValueType::array);
        EXPECT_EQ(a.element_type(), c.value_type);
        EXPECT_EQ(element_bits(a), (std::vector<uint64_t>{c.min_bits, c.max_bits, 0}));
    }
    const MetaValue f = json_value("tokenizer.ggml.scores=float32:[0.1, -2.5, 1e-3, 7]");
    EXPECT_EQ(f.element_type(), ValueType::float32);
    EXPECT_EQ(element_bits(f), (std::vector<uint64_t>{
                                   std::bit_cast<uint32_t>(0.1f), std::bit_cast<uint32_t>(-2.5f),
                                   std::bit_cast<uint32_t>(1e-3f), std::bit_cast<uint32_t>(7.0f)}));
    // JSON numbers are read from their text too: once rounded, as with --set.
    EXPECT_EQ(element_bits(json_value("k=float32:[1.0000000596046447753906251]")),
              std::vector<uint64_t>{0x3f800001u});
    const MetaValue d = json_value("k=float64:[0.1]");
    EXPECT_EQ(element_bits(d), std::vector<uint64_t>{std::bit_cast<uint64_t>(0.1)});
    const MetaValue b = json_value("k=bool:[true, false]");
    EXPECT_EQ(b.element_type(), ValueType::bool_);
    EXPECT_EQ(element_bits(b), (std::vector<uint64_t>{1, 0}));
    const MetaValue s = json_value(R"(tokenizer.ggml.tokens=string:["<s>", "a\"b", "", "é"])");
    EXPECT_EQ(s.element_type(), ValueType::string);
    ASSERT_EQ(s.elements().size(), 4u);
    EXPECT_EQ(s.elements()[1].string(), "a\"b");
    EXPECT_EQ(s.elements()[3].string(), "é");
}

TEST(ValueText, JsonScalarsNestingAndEmptyArrays) {
    EXPECT_EQ(json_value("k=uint32:7").type(), ValueType::uint32);
    EXPECT_EQ(json_value(R"(k=string:"x")").string(), "x");
    const MetaValue empty = json_value("k=int32:[]");
    EXPECT_EQ(empty.element_type(), ValueType::int32);
    EXPECT_TRUE(empty.elements().empty());

    const MetaValue nested = json_value("x.pairs=int32:[[1, 2], [], [[3]]]");
    ASSERT_EQ(nested.element_type(), ValueType::array);
    ASSERT_EQ(nested.elements().size(), 3u);
    EXPECT_EQ(nested.elements()[0].element_type(), ValueType::int32);
    EXPECT_EQ(element_bits(nested.elements()[0]), (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(nested.elements()[1].element_type(), ValueType::int32);  // [] of the leaf type
    EXPECT_EQ(nested.elements()[2].element_type(), ValueType::array);  // GGUF allows it
    EXPECT_EQ(nested.elements()[2].elements()[0].elements()[0].bits(), 3u);

    const MetaValue strings = json_value(R"(k=string:[["a"], ["b", "c"]])");
    EXPECT_EQ(strings.elements()[1].elements()[1].string(), "c");

    std::string deep = "k=uint8:" + std::string(64, '[') + "1" + std::string(64, ']');
    EXPECT_EQ(json_value(deep).type(), ValueType::array);
    deep = "k=uint8:" + std::string(65, '[') + "1" + std::string(65, ']');
    EXPECT_NE(error_of([&] { json_value(deep); }).find("nested more than 64 levels"),
              std::string::npos);
}

TEST(ValueText, JsonErrorsNameTheElement) {
    const auto err = [](const std::string &arg) { return error_of([&] { json_value(arg); }); };
    EXPECT_EQ(err("k=uint8:[1, 300]"),
              "k: element [1]: '300' is out of range for uint8 (0 to 255)");
    EXPECT_EQ(err("k=int32:[[1], [2, 1.5]]"),
              "k: element [1][1]: '1.5' is not an int32 (an integer from -2147483648 "
              "to 2147483647)");
    EXPECT_NE(err("k=uint64:[18446744073709551616]").find("out of range for uint64"),
              std::string::npos);
    EXPECT_NE(err(R"(k=float32:["1"])").find("element [0]: the string \"1\" is not a float32"),
              std::string::npos);
    EXPECT_NE(err("k=string:[1]").find("element [0]: 1 is not a string"), std::string::npos);
    EXPECT_NE(err("k=bool:[1]").find("'1' is not a bool"), std::string::npos);
    EXPECT_NE(err("k=int32:[1, [2]]").find("different kinds (int32 and array)"), std::string::npos);
    EXPECT_NE(err("k=int32:[null]").find("null has no GGUF type"), std::string::npos);
    EXPECT_NE(err(R"(k=int32:{"a": 1})").find("a JSON object has no GGUF type"), std::string::npos);
    EXPECT_NE(err("k=int32:[1, 2").find("k: invalid JSON: "), std::string::npos);
    EXPECT_NE(err("k=int32:[1] x").find("invalid JSON"), std::string::npos);
    EXPECT_NE(err("k=int32:").find("invalid JSON"), std::string::npos);
    EXPECT_NE(err("k=[1]").find("expected KEY=TYPE:JSON"), std::string::npos);
}

TEST(ValueText, SetFileTakesTheFileBytes) {
    testkit::TempDir dir;
    const std::vector<uint8_t> bytes = {'{', '%', 0, 0xff, 0xfe, '\n', '%', '}'};
    testkit::write_file(dir.file("t.jinja"), bytes);
    const gguf::Assignment a =
        gguf::parse_set_file("tokenizer.chat_template=" + dir.file("t.jinja"));
    EXPECT_EQ(a.key, "tokenizer.chat_template");
    EXPECT_EQ(a.value.type(), ValueType::string);
    EXPECT_EQ(a.value.string(), std::string(bytes.begin(), bytes.end()));
    testkit::write_file(dir.file("empty"), "");
    EXPECT_EQ(gguf::parse_set_file("k=" + dir.file("empty")).value.string(), "");

    const std::string missing = dir.file("missing.jinja");
    const std::string err = error_of([&] { gguf::parse_set_file("k=" + missing); });
    EXPECT_EQ(err.rfind("k: ", 0), 0u) << err;
    EXPECT_NE(err.find(missing), std::string::npos) << err;
    EXPECT_NE(error_of([&] { gguf::parse_set_file("k=" + dir.path()); }).find(dir.path()),
              std::string::npos);
    EXPECT_EQ(gguf::split_set_file("a.b=x=y.txt"),
              std::make_pair(std::string("a.b"), std::string("x=y.txt")));
    EXPECT_EQ(error_of([] { gguf::split_set_file("k="); }), "k: expected KEY=PATH");
    EXPECT_EQ(error_of([] { gguf::split_set_file("path"); }), "'path': expected KEY=PATH");
}

}  // namespace
}  // namespace gguftool
