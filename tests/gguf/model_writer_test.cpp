// The writers' foundation: MetaValue::from_value, the shared header encoder re-emitting read
// metadata in either byte order, the layout rule, and write_model streaming tensors by copy or by
// producer. Files written are read back by our reader and by llama.cpp's, field by field; where
// llama.cpp's own writer wrote the input, the output must be the same bytes.
#include <gtest/gtest.h>

#include <algorithm>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/mapped_file.hpp"
#include "gguftool/output_file.hpp"
#include "llama_content.hpp"

namespace gguftool {
namespace {

using gguf::ByteOrder;
using gguf::MetaValue;
using gguf::ValueType;

// An open file's header, its metadata as views into it, to be written in `order`.
gguf::Header header_of(const gguf::File &f, ByteOrder order) {
    gguf::Header h;
    h.version = f.version();
    h.order = order;
    h.alignment = f.alignment();
    for (const gguf::MetadataEntry &e : f.metadata())
        h.metadata.push_back(gguf::MetadataItem::of(e));
    for (const gguf::TensorInfo &t : f.tensors())
        h.tensors.push_back({std::string(t.name), static_cast<uint32_t>(t.type),
                             std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), 0});
    return h;
}

std::vector<gguf::TensorData> copies_of(const gguf::File &f) {
    std::vector<gguf::TensorData> d;
    for (const gguf::TensorInfo &t : f.tensors()) d.push_back(gguf::TensorData::copy(f, t));
    return d;
}

void write_copy(const gguf::File &f, ByteOrder order, const std::string &path) {
    gguf::Header h = header_of(f, order);
    OutputFile out(path);
    gguf::write_model(out, h, copies_of(f));
    out.commit();
    out.keep();
}

// Every metadata type, nested arrays included unless `nested` is false (llama.cpp's reader
// refuses arrays of arrays).
gguf::Writer every_type(ByteOrder order, bool nested = true) {
    gguf::Writer w(3, order);
    w.add("u8", MetaValue::u8(0xfe));
    w.add("i8", MetaValue::i8(-3));
    w.add("u16", MetaValue::u16(0xbeef));
    w.add("i16", MetaValue::i16(-30000));
    w.add("u32", MetaValue::u32(0xdeadbeef));
    w.add("i32", MetaValue::i32(-2000000000));
    w.add("f32", MetaValue::f32(-1.5e-3f));
    w.add("bool", MetaValue::boolean(true));
    w.add("string", MetaValue::str(std::string("nul\0inside", 10)));
    w.add("u64", MetaValue::u64(0x0123456789abcdefull));
    w.add("i64", MetaValue::i64(-(1ll << 62)));
    w.add("f64", MetaValue::f64(6.02214076e23));
    w.add("strings", MetaValue::array_of(std::vector<std::string>{"a", "", "ccc"}));
    w.add("u16s", MetaValue::array_of(std::vector<uint16_t>{1, 0x0203, 0xfffe}));
    if (nested)
        w.add("nested", MetaValue::array(
                            ValueType::array,
                            {MetaValue::array_of(std::vector<std::string>{"x", "yz"}),
                             MetaValue::array_of(std::vector<int64_t>{-1, 1ll << 40}),
                             MetaValue::array(ValueType::array,
                                              {MetaValue::array_of(std::vector<double>{0.5})})}));
    w.add("empty", MetaValue::array_of(std::vector<float>{}));
    w.add_tensor("t8", GgmlType::i8, {5}, testkit::filler(5, 7));
    w.add_tensor("t32", GgmlType::i32, {2, 3}, testkit::filler(24, 8));
    return w;
}

// Deep equality of what was written and what a MetaValue holds.
void expect_same(const MetaValue &a, const MetaValue &b, const std::string &what) {
    ASSERT_EQ(a.type(), b.type()) << what;
    if (a.type() == ValueType::string) {
        EXPECT_EQ(a.string(), b.string()) << what;
    } else if (a.type() == ValueType::array) {
        ASSERT_EQ(a.element_type(), b.element_type()) << what;
        ASSERT_EQ(a.elements().size(), b.elements().size()) << what;
        for (size_t i = 0; i < a.elements().size(); ++i)
            expect_same(a.elements()[i], b.elements()[i], what + "[" + std::to_string(i) + "]");
    } else {
        EXPECT_EQ(a.bits(), b.bits()) << what;
    }
}

// Deep equality of two read values (of files in any byte order): numbers by value, strings and
// arrays element by element.
void expect_same(const gguf::Value &a, const gguf::Value &b, const std::string &what) {
    ASSERT_EQ(a.type(), b.type()) << what;
    switch (a.type()) {
        case ValueType::string:
            EXPECT_EQ(a.as_string(), b.as_string()) << what;
            return;
        case ValueType::array: {
            ASSERT_EQ(a.array_type(), b.array_type()) << what;
            ASSERT_EQ(a.array_size(), b.array_size()) << what;
            for (uint64_t i = 0; i < a.array_size(); ++i)
                expect_same(a.element(i), b.element(i), what + "[" + std::to_string(i) + "]");
            return;
        }
        case ValueType::float32:
        case ValueType::float64:
            EXPECT_EQ(a.as_double(), b.as_double()) << what;
            return;
        case ValueType::bool_:
            EXPECT_EQ(a.as_bool(), b.as_bool()) << what;
            return;
        case ValueType::int8:
        case ValueType::int16:
        case ValueType::int32:
        case ValueType::int64:
            EXPECT_EQ(a.as_int(), b.as_int()) << what;
            return;
        default:
            EXPECT_EQ(a.as_uint(), b.as_uint()) << what;
    }
}

void expect_same_metadata(const gguf::File &a, const gguf::File &b) {
    ASSERT_EQ(a.metadata().size(), b.metadata().size());
    for (size_t i = 0; i < a.metadata().size(); ++i) {
        EXPECT_EQ(a.metadata()[i].key, b.metadata()[i].key);
        expect_same(a.metadata()[i].value, b.metadata()[i].value, std::string(a.metadata()[i].key));
    }
}

TEST(MetaValue, FromValueCopiesEveryTypeInEitherByteOrder) {
    testkit::TempDir dir;
    for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
        const gguf::Writer w = every_type(order);
        testkit::write_file(dir.file("all.gguf"), w.to_bytes());
        std::vector<std::pair<std::string, MetaValue>> copies;
        {
            const auto f = gguf::File::open(dir.file("all.gguf"));
            for (const auto &e : f->metadata())
                copies.emplace_back(std::string(e.key), MetaValue::from_value(e.value));
        }  // the copies hold no view into the file
        // Some of what every_type wrote, item by item ...
        ASSERT_EQ(copies.size(), 16u);
        expect_same(copies[0].second, MetaValue::u8(0xfe), "u8");
        expect_same(copies[3].second, MetaValue::i16(-30000), "i16");
        expect_same(copies[6].second, MetaValue::f32(-1.5e-3f), "f32");
        expect_same(copies[8].second, MetaValue::str(std::string("nul\0inside", 10)), "string");
        expect_same(copies[11].second, MetaValue::f64(6.02214076e23), "f64");
        expect_same(
            copies[14].second,
            MetaValue::array(ValueType::array,
                             {MetaValue::array_of(std::vector<std::string>{"x", "yz"}),
                              MetaValue::array_of(std::vector<int64_t>{-1, 1ll << 40}),
                              MetaValue::array(ValueType::array,
                                               {MetaValue::array_of(std::vector<double>{0.5})})}),
            "nested");
        // ... and all of it: the copies written again give the same file.
        gguf::Writer from_copies(3, order);
        for (auto &[key, value] : copies) from_copies.add(key, value);
        from_copies.add_tensor("t8", GgmlType::i8, {5}, testkit::filler(5, 7));
        from_copies.add_tensor("t32", GgmlType::i32, {2, 3}, testkit::filler(24, 8));
        EXPECT_EQ(from_copies.to_bytes(), every_type(order).to_bytes());
    }
}

// llama.cpp's writer is the oracle: its header, re-emitted from our reader's views, is the same.
TEST(HeaderEncoder, ReEmitsALlamaWrittenHeaderByteForByte) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    testkit::TempDir dir;
    testkit::write_content_with_llama(*g, dir.file("llama.gguf"), testkit::content_tensors());
    const auto f = gguf::File::open(dir.file("llama.gguf"));
    gguf::Header h = header_of(*f, ByteOrder::little);
    for (size_t i = 0; i < h.tensors.size(); ++i) h.tensors[i].offset = f->tensors()[i].offset;
    const std::vector<uint8_t> file = testkit::read_file(dir.file("llama.gguf"));
    const std::vector<uint8_t> header = gguf::encode_header(h);
    EXPECT_EQ(header.size(), f->data_offset());
    EXPECT_EQ(gguf::header_size(h), f->data_offset());
    EXPECT_TRUE(std::equal(header.begin(), header.end(), file.begin()));
}

// Little to big and back: every value survives, and the second conversion gives back the bytes
// of the first file.
TEST(HeaderEncoder, ByteOrderRoundTrip) {
    for (bool nested : {true, false}) {
        SCOPED_TRACE(nested ? "nested arrays" : "no nested arrays");
        testkit::TempDir dir;
        const std::vector<uint8_t> little = every_type(ByteOrder::little, nested).to_bytes();
        testkit::write_file(dir.file("le.gguf"), little);
        const auto le = gguf::File::open(dir.file("le.gguf"));
        write_copy(*le, ByteOrder::big, dir.file("be.gguf"));
        const auto be = gguf::File::open(dir.file("be.gguf"));
        EXPECT_EQ(be->byte_order(), ByteOrder::big);
        expect_same_metadata(*le, *be);
        ASSERT_EQ(be->tensors().size(), 2u);
        EXPECT_EQ(be->tensors()[1].ne[1], 3u);
        write_copy(*be, ByteOrder::little, dir.file("le2.gguf"));
        EXPECT_EQ(testkit::read_file(dir.file("le2.gguf")), little);
        if (!nested)
            testkit::expect_same_as_llama(dir.file("le2.gguf"),
                                          *gguf::File::open(dir.file("le2.gguf")));
    }
}

TEST(Layout, InOrderEachAtTheNextMultipleOfTheAlignment) {
    gguf::Header h;
    h.tensors.resize(4);
    const uint64_t sizes[] = {5, 3, 0, 33};
    EXPECT_EQ(gguf::lay_out(h, sizes), 128u);  // 64 + 33, padded to 32
    EXPECT_EQ(h.tensors[0].offset, 0u);
    EXPECT_EQ(h.tensors[1].offset, 32u);
    EXPECT_EQ(h.tensors[2].offset, 64u);  // an empty tensor takes no room
    EXPECT_EQ(h.tensors[3].offset, 64u);
    h.alignment = 3;
    EXPECT_EQ(gguf::lay_out(h, sizes), 42u);  // any alignment: 0, 6, 9, 9; 9 + 33
    EXPECT_EQ(h.tensors[1].offset, 6u);
    EXPECT_EQ(h.tensors[3].offset, 9u);
    h.alignment = 0;
    EXPECT_THROW(gguf::lay_out(h, sizes), Error);
    h.alignment = 32;
    EXPECT_THROW(gguf::lay_out(h, std::span<const uint64_t>(sizes, 3)), Error);
}

// Name length, name, n_dims, dims, type, offset; and a header grows by exactly that.
TEST(TensorInfoSize, WhatTheEncoderWrites) {
    const gguf::TensorHeader t{"blk.0", 2, {32, 4}, 4096};
    EXPECT_EQ(gguf::tensor_info_size(t), 8u + 5 + 4 + 2 * 8 + 4 + 8);
    gguf::Header h;
    h.alignment = 1;  // no padding
    h.metadata.push_back({"general.name", MetaValue::str("x")});
    const uint64_t without = gguf::header_size(h);
    h.tensors.push_back(t);
    EXPECT_EQ(gguf::header_size(h), without + gguf::tensor_info_size(t));
}

TEST(AlignmentOf, TheUint32KeyElse32) {
    std::vector<gguf::MetadataItem> m = {{"general.name", MetaValue::str("x")}};
    EXPECT_EQ(gguf::alignment_of(m), 32u);
    m.push_back({"general.alignment", MetaValue::u64(64)});  // not a uint32: ignored, as ggml does
    EXPECT_EQ(gguf::alignment_of(m), 32u);
    m.push_back({"general.alignment", MetaValue::u32(128)});
    EXPECT_EQ(gguf::alignment_of(m), 128u);
}

// A llama.cpp-written file copied tensor by tensor (copy_file_range), or with every tensor
// produced in 7-byte pieces: the same bytes, and llama.cpp reads it field by field as ours does.
TEST(WriteModel, CopiedOrProducedGivesBackALlamaWrittenFile) {
    const reference::Ggml *g = testkit::ggml();
    ASSERT_NE(g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    testkit::TempDir dir;
    testkit::write_content_with_llama(*g, dir.file("llama.gguf"), testkit::content_tensors());
    const std::vector<uint8_t> original = testkit::read_file(dir.file("llama.gguf"));
    const auto f = gguf::File::open(dir.file("llama.gguf"));

    write_copy(*f, ByteOrder::little, dir.file("copied.gguf"));
    EXPECT_EQ(testkit::read_file(dir.file("copied.gguf")), original);
    testkit::expect_same_as_llama(dir.file("copied.gguf"),
                                  *gguf::File::open(dir.file("copied.gguf")));

    gguf::Header h = header_of(*f, ByteOrder::little);
    std::vector<gguf::TensorData> data;
    for (const gguf::TensorInfo &t : f->tensors())
        data.push_back(gguf::TensorData::produced(t.bytes, [&t](gguf::ByteSink &s) {
            for (size_t at = 0; at < t.data.size(); at += 7)
                s.write(t.data.data() + at, std::min<size_t>(7, t.data.size() - at));
        }));
    uint64_t last_done = 0, last_total = 0;
    {
        OutputFile out(dir.file("produced.gguf"));
        EXPECT_EQ(gguf::write_model(out, h, data,
                                    [&](uint64_t done, uint64_t total) {
                                        EXPECT_GE(done, last_done);
                                        last_done = done;
                                        last_total = total;
                                    }),
                  original.size());
        out.commit();
        out.keep();
    }
    uint64_t tensor_bytes = 0;
    for (const auto &t : f->tensors()) tensor_bytes += t.bytes;
    EXPECT_EQ(last_done, tensor_bytes);
    EXPECT_EQ(last_total, tensor_bytes);
    EXPECT_EQ(testkit::read_file(dir.file("produced.gguf")), original);
    EXPECT_EQ(gguf::planned_size(h, data), original.size());
}

// A general.alignment of 64 lays the data out on 64, as our Writer does, and llama.cpp agrees.
TEST(WriteModel, AlignmentOfTheMetadata) {
    testkit::TempDir dir;
    gguf::Writer w;
    w.add("general.alignment", MetaValue::u32(64));
    w.add_tensor("a", GgmlType::f32, {3}, testkit::filler(12, 1));
    w.add_tensor("b", GgmlType::q8_0, {32, 2}, testkit::filler(68, 2));
    w.add_tensor("c", GgmlType::f16, {1}, testkit::filler(2, 3));
    const std::vector<uint8_t> bytes = w.to_bytes();
    testkit::write_file(dir.file("in.gguf"), bytes);
    const auto f = gguf::File::open(dir.file("in.gguf"));
    write_copy(*f, ByteOrder::little, dir.file("out.gguf"));
    EXPECT_EQ(testkit::read_file(dir.file("out.gguf")), bytes);
    const auto out = gguf::File::open(dir.file("out.gguf"));
    EXPECT_EQ(out->tensors()[1].offset, 64u);
    EXPECT_EQ(out->tensors()[2].offset, 192u);
    testkit::expect_same_as_llama(dir.file("out.gguf"), *out);
}

void expect_error(const std::function<void()> &f, const std::string &text) {
    try {
        f();
        ADD_FAILURE() << "no error; expected: " << text;
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
}

TEST(WriteModel, Errors) {
    testkit::TempDir dir;
    const std::string path = dir.file("out.gguf");
    gguf::Header h;
    h.tensors.push_back({"t", 0, {4}, 0});
    const auto short_producer = gguf::TensorData::produced(
        16, [](gguf::ByteSink &s) { s.write(testkit::filler(15, 1).data(), 15); });
    const auto long_producer = gguf::TensorData::produced(
        16, [](gguf::ByteSink &s) { s.write(testkit::filler(17, 1).data(), 17); });
    expect_error(
        [&] {
            OutputFile out(path);
            gguf::write_model(out, h, {short_producer});
        },
        "tensor t: its producer wrote 15 bytes, expected 16");
    expect_error(
        [&] {
            OutputFile out(path);
            gguf::write_model(out, h, {long_producer});
        },
        "tensor t: its producer wrote more than its 16 bytes");
    expect_error(
        [&] {
            OutputFile out(path);
            gguf::write_model(out, h, {});
        },
        "0 tensor sizes for 1 tensors");
    expect_error(
        [&] {
            gguf::Header aligned = h;
            aligned.metadata.push_back({"general.alignment", MetaValue::u32(64)});
            OutputFile out(path);
            gguf::write_model(out, aligned, {short_producer});
        },
        "data aligned to 32 but general.alignment says 64");
    expect_error(
        [&] {
            OutputFile out(path);
            out.write("x", 1);
            gguf::write_model(out, h, {short_producer});
        },
        "the output is not empty");
    // A copy from a source that ends early names the source and where.
    testkit::write_file(dir.file("src"), testkit::filler(10, 1));
    expect_error(
        [&] {
            const auto src = MappedFile::open(dir.file("src"));
            gguf::TensorData d;
            d.size = 16;
            d.fd = src->fd();
            d.offset = 2;
            d.path = dir.file("src");
            OutputFile out(path);
            gguf::write_model(out, h, {d});
        },
        "cannot read " + dir.file("src") + " at offset 10: it ends there");
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace gguftool
