// Metadata values: every type round-trips through the writer and reader, in both byte orders and
// both versions, and llama.cpp reads the same values from the little-endian files.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::ByteOrder;
using gguf::MetaValue;
using gguf::ValueType;

// One key per scalar type (with extreme values), strings and flat arrays of every element type.
gguf::Writer all_types_writer(uint32_t version, ByteOrder order) {
    gguf::Writer w(version, order);
    w.add("t.u8", MetaValue::u8(250));
    w.add("t.i8", MetaValue::i8(-128));
    w.add("t.u16", MetaValue::u16(65535));
    w.add("t.i16", MetaValue::i16(-30000));
    w.add("t.u32", MetaValue::u32(4000000000u));
    w.add("t.i32", MetaValue::i32(std::numeric_limits<int32_t>::min()));
    w.add("t.f32", MetaValue::f32(-1.5e-3f));
    w.add("t.bool_true", MetaValue::boolean(true));
    w.add("t.bool_false", MetaValue::boolean(false));
    w.add("t.string", MetaValue::str("héllo, wörld"));
    w.add("t.empty_string", MetaValue::str(""));
    w.add("t.u64", MetaValue::u64(std::numeric_limits<uint64_t>::max()));
    w.add("t.i64", MetaValue::i64(std::numeric_limits<int64_t>::min()));
    w.add("t.f64", MetaValue::f64(3.141592653589793));
    w.add("a.u8", MetaValue::array_of(std::vector<uint8_t>{0, 1, 255}));
    w.add("a.i8", MetaValue::array_of(std::vector<int8_t>{-1, 0, 127}));
    w.add("a.u16", MetaValue::array_of(std::vector<uint16_t>{1, 65535}));
    w.add("a.i16", MetaValue::array_of(std::vector<int16_t>{-2, 2}));
    w.add("a.u32", MetaValue::array_of(std::vector<uint32_t>{7, 0xdeadbeef}));
    w.add("a.i32", MetaValue::array_of(std::vector<int32_t>{-7, 7, 0}));
    w.add("a.f32", MetaValue::array_of(std::vector<float>{0.5f, -0.0f, 1e30f}));
    w.add("a.bool", MetaValue::array_of(std::vector<bool>{true, false, true}));
    w.add("a.string", MetaValue::array_of(std::vector<std::string>{"a", "", "tokenizer ▁x"}));
    w.add("a.u64", MetaValue::array_of(std::vector<uint64_t>{1ull << 40}));
    w.add("a.i64", MetaValue::array_of(std::vector<int64_t>{-(1ll << 40), 5}));
    w.add("a.f64", MetaValue::array_of(std::vector<double>{1e-300, -2.5}));
    w.add("a.empty", MetaValue::array_of(std::vector<uint32_t>{}));
    w.add("a.empty_strings", MetaValue::array_of(std::vector<std::string>{}));
    return w;
}

const gguf::Value &value(const gguf::File &f, std::string_view key) {
    const gguf::MetadataEntry *e = f.find(key);
    if (!e) throw std::runtime_error("missing key " + std::string(key));
    return e->value;
}

template <class T, class Get>
std::vector<T> elements(const gguf::Value &v, Get get) {
    std::vector<T> out;
    v.for_each_element([&](const gguf::Value &e) { out.push_back(get(e)); });
    return out;
}

void expect_all_types(const gguf::File &f) {
    EXPECT_EQ(f.metadata().size(), 28u);
    EXPECT_EQ(value(f, "t.u8").type(), ValueType::uint8);
    EXPECT_EQ(value(f, "t.u8").as_uint(), 250u);
    EXPECT_EQ(value(f, "t.i8").as_int(), -128);
    EXPECT_EQ(value(f, "t.u16").as_uint(), 65535u);
    EXPECT_EQ(value(f, "t.i16").as_int(), -30000);
    EXPECT_EQ(value(f, "t.u32").as_uint(), 4000000000u);
    EXPECT_EQ(value(f, "t.i32").as_int(), std::numeric_limits<int32_t>::min());
    EXPECT_EQ(value(f, "t.f32").as_double(), static_cast<double>(-1.5e-3f));
    EXPECT_TRUE(value(f, "t.bool_true").as_bool());
    EXPECT_FALSE(value(f, "t.bool_false").as_bool());
    EXPECT_EQ(value(f, "t.string").as_string(), "héllo, wörld");
    EXPECT_EQ(value(f, "t.empty_string").as_string(), "");
    EXPECT_EQ(value(f, "t.u64").as_uint(), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(value(f, "t.i64").as_int(), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(value(f, "t.f64").as_double(), 3.141592653589793);

    const auto as_u = [](const gguf::Value &v) { return v.as_uint(); };
    const auto as_i = [](const gguf::Value &v) { return v.as_int(); };
    const auto as_d = [](const gguf::Value &v) { return v.as_double(); };
    EXPECT_EQ(value(f, "a.u8").array_type(), ValueType::uint8);
    EXPECT_EQ(elements<uint64_t>(value(f, "a.u8"), as_u), (std::vector<uint64_t>{0, 1, 255}));
    EXPECT_EQ(elements<int64_t>(value(f, "a.i8"), as_i), (std::vector<int64_t>{-1, 0, 127}));
    EXPECT_EQ(elements<uint64_t>(value(f, "a.u16"), as_u), (std::vector<uint64_t>{1, 65535}));
    EXPECT_EQ(elements<int64_t>(value(f, "a.i16"), as_i), (std::vector<int64_t>{-2, 2}));
    EXPECT_EQ(elements<uint64_t>(value(f, "a.u32"), as_u), (std::vector<uint64_t>{7, 0xdeadbeef}));
    EXPECT_EQ(elements<int64_t>(value(f, "a.i32"), as_i), (std::vector<int64_t>{-7, 7, 0}));
    const auto f32s = elements<double>(value(f, "a.f32"), as_d);
    ASSERT_EQ(f32s.size(), 3u);
    EXPECT_EQ(f32s[0], 0.5);
    EXPECT_TRUE(f32s[1] == 0.0 && std::signbit(f32s[1]));
    EXPECT_EQ(f32s[2], static_cast<double>(1e30f));
    EXPECT_EQ(elements<bool>(value(f, "a.bool"), [](const gguf::Value &v) { return v.as_bool(); }),
              (std::vector<bool>{true, false, true}));
    EXPECT_EQ(
        elements<std::string>(value(f, "a.string"),
                              [](const gguf::Value &v) { return std::string(v.as_string()); }),
        (std::vector<std::string>{"a", "", "tokenizer ▁x"}));
    EXPECT_EQ(value(f, "a.string").element(2).as_string(), "tokenizer ▁x");
    EXPECT_EQ(elements<uint64_t>(value(f, "a.u64"), as_u), (std::vector<uint64_t>{1ull << 40}));
    EXPECT_EQ(elements<int64_t>(value(f, "a.i64"), as_i), (std::vector<int64_t>{-(1ll << 40), 5}));
    EXPECT_EQ(elements<double>(value(f, "a.f64"), as_d), (std::vector<double>{1e-300, -2.5}));
    EXPECT_EQ(value(f, "a.empty").array_size(), 0u);
    EXPECT_EQ(value(f, "a.empty").array_type(), ValueType::uint32);
    EXPECT_EQ(value(f, "a.empty_strings").array_size(), 0u);
    EXPECT_EQ(value(f, "a.empty_strings").array_type(), ValueType::string);
}

TEST(Metadata, EveryTypeLittleEndianV3MatchesLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("all.gguf");
    all_types_writer(3, ByteOrder::little).write(path);
    const auto f = gguf::File::open(path);
    EXPECT_EQ(f->version(), 3u);
    EXPECT_EQ(f->byte_order(), ByteOrder::little);
    expect_all_types(*f);
    testkit::expect_same_as_llama(path, *f);
}

TEST(Metadata, EveryTypeVersion2MatchesLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("v2.gguf");
    all_types_writer(2, ByteOrder::little).write(path);
    const auto f = gguf::File::open(path);
    EXPECT_EQ(f->version(), 2u);
    expect_all_types(*f);
    testkit::expect_same_as_llama(path, *f);
}

TEST(Metadata, EveryTypeBigEndian) {
    testkit::TempDir dir;
    for (const uint32_t version : {2u, 3u}) {
        const std::string path = dir.file("be.gguf");
        all_types_writer(version, ByteOrder::big).write(path);
        const auto f = gguf::File::open(path);
        EXPECT_EQ(f->version(), version);
        EXPECT_EQ(f->byte_order(), ByteOrder::big);
        expect_all_types(*f);
        // ggml reads only files in the host's byte order.
        ASSERT_NE(testkit::ggml(), nullptr);
        EXPECT_TRUE(testkit::llama_rejects(path));
    }
}

// A big-endian file built field by field (not by our writer), so the byte order handling of the
// reader is not only checked against the writer's.
TEST(Metadata, BigEndianRawBytes) {
    testkit::RawGguf raw(/*big_endian=*/true);
    raw.header(3, 1, 3);
    raw.str("k.u32").u32(static_cast<uint32_t>(ValueType::uint32)).u32(0x01020304);
    raw.str("k.str").u32(static_cast<uint32_t>(ValueType::string)).str("big");
    raw.str("k.arr").u32(static_cast<uint32_t>(ValueType::array));
    raw.u32(static_cast<uint32_t>(ValueType::uint16)).u64(2).u16(0xabcd).u16(7);
    const uint64_t info = raw.pos();
    raw.tensor("w", {8, 2}, static_cast<uint32_t>(GgmlType::f16), 0);
    raw.pad_to(32);
    const uint64_t data_offset = raw.pos();
    raw.zeros(32);
    testkit::TempDir dir;
    testkit::write_file(dir.file("be.gguf"), raw.bytes());

    const auto f = gguf::File::open(dir.file("be.gguf"));
    EXPECT_EQ(f->byte_order(), ByteOrder::big);
    EXPECT_EQ(value(*f, "k.u32").as_uint(), 0x01020304u);
    EXPECT_EQ(value(*f, "k.str").as_string(), "big");
    EXPECT_EQ(value(*f, "k.arr").element(0).as_uint(), 0xabcdu);
    EXPECT_EQ(value(*f, "k.arr").element(1).as_uint(), 7u);
    ASSERT_EQ(f->tensors().size(), 1u);
    const auto &t = f->tensors()[0];
    EXPECT_EQ(t.name, "w");
    EXPECT_EQ(t.ne, (std::array<uint64_t, 4>{8, 2, 1, 1}));
    EXPECT_EQ(t.type, GgmlType::f16);
    EXPECT_EQ(t.bytes, 32u);
    EXPECT_EQ(f->data_offset(), data_offset);
    EXPECT_EQ(f->metadata()[0].offset, 24u);
    EXPECT_GT(info, 24u);
}

TEST(Metadata, NestedArrays) {
    testkit::TempDir dir;
    const std::string path = dir.file("nested.gguf");
    const auto ints = [](std::vector<int32_t> v) { return MetaValue::array_of(v); };
    const auto strs = [](std::vector<std::string> v) { return MetaValue::array_of(v); };
    gguf::Writer w;
    w.add("before", MetaValue::u32(1));
    w.add("ints", MetaValue::array(ValueType::array, {ints({1, 2}), ints({}), ints({3, 4, 5})}));
    w.add("strs", MetaValue::array(ValueType::array, {strs({"x", "yy"}), strs({"zzz"})}));
    w.add("deep",
          MetaValue::array(ValueType::array, {MetaValue::array(ValueType::array, {ints({42})}),
                                              MetaValue::array(ValueType::array, {})}));
    w.add("empty_of_arrays", MetaValue::array(ValueType::array, {}));
    w.add("after", MetaValue::str("end"));
    w.write(path);

    const auto f = gguf::File::open(path);
    const gguf::Value &a = value(*f, "ints");
    EXPECT_EQ(a.array_type(), ValueType::array);
    ASSERT_EQ(a.array_size(), 3u);
    EXPECT_EQ(a.element(0).array_type(), ValueType::int32);
    EXPECT_EQ(a.element(0).element(1).as_int(), 2);
    EXPECT_EQ(a.element(1).array_size(), 0u);
    EXPECT_EQ(a.element(2).array_size(), 3u);
    EXPECT_EQ(a.element(2).element(2).as_int(), 5);
    std::vector<uint64_t> sizes;
    a.for_each_element([&](const gguf::Value &e) { sizes.push_back(e.array_size()); });
    EXPECT_EQ(sizes, (std::vector<uint64_t>{2, 0, 3}));

    const gguf::Value &s = value(*f, "strs");
    EXPECT_EQ(s.element(0).element(1).as_string(), "yy");
    EXPECT_EQ(s.element(1).element(0).as_string(), "zzz");
    EXPECT_EQ(value(*f, "deep").element(0).element(0).element(0).as_int(), 42);
    EXPECT_EQ(value(*f, "deep").element(1).array_size(), 0u);
    EXPECT_EQ(value(*f, "empty_of_arrays").array_size(), 0u);
    EXPECT_EQ(value(*f, "after").as_string(), "end");

    // The spec allows nested arrays; ggml's reader does not.
    ASSERT_NE(testkit::ggml(), nullptr);
    EXPECT_TRUE(testkit::llama_rejects(path));
}

TEST(Metadata, AccessorsRejectWrongTypes) {
    testkit::TempDir dir;
    const std::string path = dir.file("all.gguf");
    all_types_writer(3, ByteOrder::little).write(path);
    const auto f = gguf::File::open(path);
    EXPECT_THROW(value(*f, "t.u32").as_string(), Error);
    EXPECT_THROW(value(*f, "t.string").as_uint(), Error);
    EXPECT_THROW(value(*f, "t.i8").as_uint(), Error);  // negative
    EXPECT_THROW(value(*f, "t.u64").as_int(), Error);  // > INT64_MAX
    EXPECT_THROW(value(*f, "t.u8").as_bool(), Error);
    EXPECT_THROW(value(*f, "t.u8").array_size(), Error);
    EXPECT_THROW(value(*f, "a.u8").element(3), Error);
    EXPECT_EQ(value(*f, "t.bool_true").as_uint(), 1u);
    EXPECT_EQ(value(*f, "t.u16").as_double(), 65535.0);
    EXPECT_EQ(f->find("no.such.key"), nullptr);
    try {
        (void)value(*f, "t.u32").as_string();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("uint32, not string"), std::string::npos) << e.what();
    }
}

// Keys keep their file order and offsets; the first key follows the 24-byte header.
TEST(Metadata, OrderAndOffsets) {
    testkit::TempDir dir;
    const std::string path = dir.file("order.gguf");
    gguf::Writer w;
    w.add("z", MetaValue::u8(1)).add("a", MetaValue::str("xy")).add("m", MetaValue::u64(2));
    w.write(path);
    const auto f = gguf::File::open(path);
    ASSERT_EQ(f->metadata().size(), 3u);
    EXPECT_EQ(f->metadata()[0].key, "z");
    EXPECT_EQ(f->metadata()[1].key, "a");
    EXPECT_EQ(f->metadata()[2].key, "m");
    EXPECT_EQ(f->metadata()[0].offset, 24u);
    EXPECT_EQ(f->metadata()[1].offset, 24u + 8 + 1 + 4 + 1);
    EXPECT_EQ(f->metadata()[2].offset, 38u + 8 + 1 + 4 + 8 + 2);
    testkit::expect_same_as_llama(path, *f);
}

// The spec allows only 0 and 1 for bool; like ggml we read other bytes as true.
TEST(Metadata, BoolByteOtherThanZeroOrOne) {
    testkit::TempDir dir;
    const std::string path = dir.file("bool.gguf");
    gguf::Writer().add("b", MetaValue::bool_byte(2)).write(path);
    const auto f = gguf::File::open(path);
    EXPECT_TRUE(value(*f, "b").as_bool());
    testkit::expect_same_as_llama(path, *f);
}

}  // namespace
}  // namespace gguftool
