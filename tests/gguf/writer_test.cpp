// gguf::Writer: exact header bytes in both byte orders, layout options, and atomic writes.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::ByteOrder;
using gguf::MetaValue;
using gguf::ValueType;

std::vector<uint8_t> prefix(const std::vector<uint8_t> &v, size_t n) {
    return {v.begin(), v.begin() + static_cast<ptrdiff_t>(std::min(n, v.size()))};
}

TEST(Writer, HeaderBytesInBothByteOrders) {
    gguf::Writer le(2, ByteOrder::little), be(3, ByteOrder::big);
    for (gguf::Writer *w : {&le, &be}) {
        w->add("k", MetaValue::u16(0x0102));
        w->add_tensor("t", GgmlType::i8, {1}, {0x7f});
    }
    const std::vector<uint8_t> expect_le = {'G', 'G', 'U', 'F', 2, 0, 0, 0,  // magic, version
                                            1,   0,   0,   0,   0, 0, 0, 0,  // tensors
                                            1,   0,   0,   0,   0, 0, 0, 0,  // keys
                                            1,   0,   0,   0,   0, 0, 0, 0,  // key length
                                            'k', 2,   0,   0,   0, 2, 1};    // key, type, value
    EXPECT_EQ(prefix(le.to_bytes(), expect_le.size()), expect_le);
    const std::vector<uint8_t> expect_be = {'G', 'G', 'U', 'F', 0, 0, 0, 3,  //
                                            0,   0,   0,   0,   0, 0, 0, 1,  //
                                            0,   0,   0,   0,   0, 0, 0, 1,  //
                                            0,   0,   0,   0,   0, 0, 0, 1,  //
                                            'k', 0,   0,   0,   2, 1, 2};
    EXPECT_EQ(prefix(be.to_bytes(), expect_be.size()), expect_be);
}

TEST(Writer, LayoutAndPadding) {
    gguf::Writer w;
    w.add_tensor("a", GgmlType::i8, {5}, testkit::filler(5, 1));
    w.add_tensor("b", GgmlType::i8, {3}, testkit::filler(3, 2), 96);  // explicit, leaves a gap
    w.add_tensor("c", GgmlType::i8, {1}, testkit::filler(1, 3));      // after the furthest data
    const std::vector<uint8_t> bytes = w.to_bytes();
    testkit::TempDir dir;
    testkit::write_file(dir.file("x.gguf"), bytes);
    const auto f = gguf::File::open(dir.file("x.gguf"));
    EXPECT_EQ(f->tensors()[0].offset, 0u);
    EXPECT_EQ(f->tensors()[1].offset, 96u);
    EXPECT_EQ(f->tensors()[2].offset, 128u);
    EXPECT_EQ(bytes.size(), f->data_offset() + 160);  // the data section is padded at the end
    EXPECT_EQ(f->tensors()[2].data[0], testkit::filler(1, 3)[0]);
}

// The general.alignment key sets the layout; set_alignment overrides it (to build broken files).
TEST(Writer, AlignmentKeyAndOverride) {
    gguf::Writer w;
    w.add("general.alignment", MetaValue::u32(64));
    w.add_tensor("a", GgmlType::i8, {1}, {1});
    w.add_tensor("b", GgmlType::i8, {1}, {2});
    testkit::TempDir dir;
    testkit::write_file(dir.file("x.gguf"), w.to_bytes());
    const auto f = gguf::File::open(dir.file("x.gguf"));
    EXPECT_EQ(f->alignment(), 64u);
    EXPECT_EQ(f->tensors()[1].offset, 64u);
    EXPECT_EQ(f->data_offset() % 64, 0u);
    testkit::expect_same_as_llama(dir.file("x.gguf"), *f);

    w.set_alignment(16);
    testkit::write_file(dir.file("y.gguf"), w.to_bytes());
    try {
        gguf::File::open(dir.file("y.gguf"));
        ADD_FAILURE() << "accepted an offset that does not follow general.alignment";
    } catch (const Error &e) {
        EXPECT_NE(e.problem().find("data offset 16 is not a multiple of the alignment 64"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Writer, RejectsWhatItCannotWrite) {
    EXPECT_THROW(MetaValue::array(ValueType::uint32, {MetaValue::u8(1)}), Error);
    gguf::Writer w;
    w.set_alignment(0);
    EXPECT_THROW(w.to_bytes(), Error);
}

TEST(Writer, WritesAtomically) {
    testkit::TempDir dir;
    const std::string path = dir.file("model.gguf");
    testkit::write_file(path, std::vector<uint8_t>(10000, 0xee));
    gguf::Writer().add("k", MetaValue::str("v")).write(path);
    EXPECT_EQ(gguf::File::open(path)->find("k")->value.as_string(), "v");
    EXPECT_EQ(testkit::read_file(path), gguf::Writer().add("k", MetaValue::str("v")).to_bytes());
    size_t entries = 0;
    for (const auto &e : std::filesystem::directory_iterator(dir.path())) {
        (void)e;
        ++entries;
    }
    EXPECT_EQ(entries, 1u);  // no temporary file left behind

    const std::string nowhere = dir.file("no/such/dir/model.gguf");
    try {
        gguf::Writer().write(nowhere);
        ADD_FAILURE() << "wrote into a missing directory";
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), nowhere);
        EXPECT_NE(e.problem().find("cannot create a temporary file"), std::string::npos);
    }
}

}  // namespace
}  // namespace gguftool
