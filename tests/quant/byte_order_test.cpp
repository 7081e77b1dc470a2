// quant::swap_byte_order: every type's words reversed where formats/SPEC.md's layout tables put
// them, bytes left alone, and the conversion its own inverse.
#include "gguftool/byte_order.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "ggml_data.hpp"
#include "gguftool/error.hpp"

namespace gguftool {
namespace {

// A run of `size` bytes at `offset` made of numbers `width` bytes wide (1: bytes).
struct SpecRun {
    uint32_t offset, size, width;
};

// Written from formats/SPEC.md's tables (offsets and field types), not from the library's table:
// f16 and f32 fields and the u16/u32 words are numbers, every other field bytes.
const std::map<GgmlType, std::vector<SpecRun>> &spec_layouts() {
    static const std::map<GgmlType, std::vector<SpecRun>> m = {
        {GgmlType::f32, {{0, 4, 4}}},
        {GgmlType::f16, {{0, 2, 2}}},
        {GgmlType::bf16, {{0, 2, 2}}},
        {GgmlType::f64, {{0, 8, 8}}},
        {GgmlType::i8, {{0, 1, 1}}},
        {GgmlType::i16, {{0, 2, 2}}},
        {GgmlType::i32, {{0, 4, 4}}},
        {GgmlType::i64, {{0, 8, 8}}},
        {GgmlType::q4_0, {{0, 2, 2}, {2, 16, 1}}},
        {GgmlType::q4_1, {{0, 2, 2}, {2, 2, 2}, {4, 16, 1}}},
        {GgmlType::q5_0, {{0, 2, 2}, {2, 4, 4}, {6, 16, 1}}},  // qh: "32-bit"
        {GgmlType::q5_1, {{0, 2, 2}, {2, 2, 2}, {4, 4, 4}, {8, 16, 1}}},
        {GgmlType::q8_0, {{0, 2, 2}, {2, 32, 1}}},
        {GgmlType::q8_1, {{0, 2, 2}, {2, 2, 2}, {4, 32, 1}}},  // s: f16
        {GgmlType::q1_0, {{0, 2, 2}, {2, 16, 1}}},
        {GgmlType::q2_0, {{0, 2, 2}, {2, 16, 1}}},
        {GgmlType::mxfp4, {{0, 17, 1}}},
        {GgmlType::nvfp4, {{0, 36, 1}}},
        {GgmlType::q2_k, {{0, 80, 1}, {80, 2, 2}, {82, 2, 2}}},
        {GgmlType::q3_k, {{0, 108, 1}, {108, 2, 2}}},
        {GgmlType::q4_k, {{0, 2, 2}, {2, 2, 2}, {4, 140, 1}}},
        {GgmlType::q5_k, {{0, 2, 2}, {2, 2, 2}, {4, 172, 1}}},
        {GgmlType::q6_k, {{0, 208, 1}, {208, 2, 2}}},
        {GgmlType::q8_k, {{0, 4, 4}, {4, 256, 1}, {260, 32, 2}}},  // binary32 d, int16 bsums
        {GgmlType::tq1_0, {{0, 52, 1}, {52, 2, 2}}},
        {GgmlType::tq2_0, {{0, 64, 1}, {64, 2, 2}}},
        {GgmlType::iq2_xs, {{0, 2, 2}, {2, 64, 2}, {66, 8, 1}}},  // u16 codes
        {GgmlType::iq2_s, {{0, 2, 2}, {2, 80, 1}}},
        {GgmlType::iq3_xxs, {{0, 2, 2}, {2, 64, 1}, {66, 32, 4}}},  // u32 aux per sub-block
        {GgmlType::iq3_s, {{0, 2, 2}, {2, 108, 1}}},
        {GgmlType::iq1_s, {{0, 2, 2}, {2, 32, 1}, {34, 16, 2}}},  // u16 h per sub-block
        {GgmlType::iq1_m, {{0, 48, 1}, {48, 8, 2}}},              // u16 sc[4]
        {GgmlType::iq4_nl, {{0, 2, 2}, {2, 16, 1}}},
        {GgmlType::iq4_xs, {{0, 2, 2}, {2, 2, 2}, {4, 132, 1}}},  // u16 scales_h
    };
    return m;
}

// The converted bytes by the layout's definition: each number's bytes in reverse order.
std::vector<uint8_t> expected_swap(const std::vector<SpecRun> &layout, uint32_t block_bytes,
                                   const std::vector<uint8_t> &in) {
    std::vector<uint8_t> out(in.size());
    for (size_t b = 0; b < in.size(); b += block_bytes)
        for (const SpecRun &r : layout)
            for (uint32_t w = r.offset; w < r.offset + r.size; w += r.width)
                for (uint32_t k = 0; k < r.width; ++k) out[b + w + k] = in[b + w + r.width - 1 - k];
    return out;
}

TEST(ByteOrder, EveryTypeHasASpecLayoutOrIsRefused) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const auto t = static_cast<GgmlType>(id);
        const bool spec = spec_layouts().count(t) != 0;
        SCOPED_TRACE(kTypeTable[id].name);
        EXPECT_EQ(quant::byte_order_refusal(t) == nullptr, spec);
        if (spec) {
            uint32_t covered = 0;
            for (const SpecRun &r : spec_layouts().at(t)) covered += r.size;
            EXPECT_EQ(covered, kTypeTable[id].type_size) << "the test's own table";
        }
    }
}

TEST(ByteOrder, WordsReversedWhereTheSpecPutsThem) {
    for (const auto &[t, layout] : spec_layouts()) {
        SCOPED_TRACE(type_name(t));
        const uint32_t bytes = traits(t).type_size;
        const uint64_t nblocks = 300;  // more than one internal run of blocks for every size
        const std::vector<uint8_t> in = testkit::random_bytes(bytes * nblocks, uint32_t(t) + 1);
        std::vector<uint8_t> out(in.size());
        quant::swap_byte_order(t, in.data(), out.data(), nblocks);
        EXPECT_EQ(out, expected_swap(layout, bytes, in));
        std::vector<uint8_t> in_place = in;
        quant::swap_byte_order(t, in_place.data(), in_place.data(), nblocks);
        EXPECT_EQ(in_place, out);
    }
}

TEST(ByteOrder, SwappingTwiceIsTheIdentity) {
    for (const auto &[t, layout] : spec_layouts()) {
        SCOPED_TRACE(type_name(t));
        const uint64_t nblocks = 17;
        const std::vector<uint8_t> in =
            testkit::random_bytes(traits(t).type_size * nblocks, 100 + uint32_t(t));
        std::vector<uint8_t> once(in.size()), twice(in.size());
        quant::swap_byte_order(t, in.data(), once.data(), nblocks);
        quant::swap_byte_order(t, once.data(), twice.data(), nblocks);
        EXPECT_EQ(twice, in);
        EXPECT_EQ(once != in, quant::byte_order_changes(t));
    }
}

template <class U>
U reversed(U v) {
    U r = 0;
    for (size_t k = 0; k < sizeof(U); ++k) r = U(r << 8 | ((v >> (8 * k)) & 0xff));
    return r;
}

// Plain types: element by element, as a big-endian machine stores the same numbers.
TEST(ByteOrder, PlainElementsAsABigEndianMachineStoresThem) {
    const std::vector<uint8_t> in = testkit::random_bytes(8 * 64, 7);
    const auto check = [&]<class U>(GgmlType t, U) {
        SCOPED_TRACE(type_name(t));
        const size_t n = in.size() / sizeof(U);
        std::vector<uint8_t> out(in.size());
        quant::swap_byte_order(t, in.data(), out.data(), n);
        for (size_t i = 0; i < n; ++i) {
            U le, be;
            std::memcpy(&le, in.data() + i * sizeof(U), sizeof(U));
            std::memcpy(&be, out.data() + i * sizeof(U), sizeof(U));
            ASSERT_EQ(be, reversed(le)) << "element " << i;
        }
    };
    check(GgmlType::f32, uint32_t{});
    check(GgmlType::i32, uint32_t{});
    check(GgmlType::f16, uint16_t{});
    check(GgmlType::bf16, uint16_t{});
    check(GgmlType::i16, uint16_t{});
    check(GgmlType::f64, uint64_t{});
    check(GgmlType::i64, uint64_t{});
    check(GgmlType::i8, uint8_t{});
}

// The fields the library reports are its conversion: the same runs as SPEC's, field by field
// (a SPEC run of bytes may be several fields of the struct).
TEST(ByteOrder, ReportedFieldsCoverTheBlock) {
    for (const auto &[t, layout] : spec_layouts()) {
        SCOPED_TRACE(type_name(t));
        std::vector<uint32_t> width_at(traits(t).type_size, 0), spec_width(width_at.size(), 0);
        for (const quant::ByteOrderField &f : quant::byte_order_fields(t))
            for (uint32_t i = f.offset; i < f.offset + f.size; ++i) width_at.at(i) = f.width;
        for (const SpecRun &r : layout)
            for (uint32_t i = r.offset; i < r.offset + r.size; ++i) spec_width[i] = r.width;
        EXPECT_EQ(width_at, spec_width);
    }
}

TEST(ByteOrder, RefusesWhatHasNoCertainLayout) {
    uint8_t block[66] = {};
    try {
        quant::swap_byte_order(GgmlType::iq2_xxs, block, block, 1);
        FAIL() << "iq2_xxs converted";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("iq2_xxs"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("grid indices"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(quant::byte_order_fields(GgmlType::iq2_xxs).empty());
    const auto removed = static_cast<GgmlType>(4);  // q4_2
    ASSERT_NE(quant::byte_order_refusal(removed), nullptr);
    EXPECT_THROW(quant::swap_byte_order(removed, block, block, 1), Error);
}

}  // namespace
}  // namespace gguftool
