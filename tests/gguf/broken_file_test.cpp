// One broken file per validation rule, built byte by byte: we must reject each with an error naming
// the file, the byte offset and the problem, and llama.cpp's reader must reject it too (except
// where noted: the differences are documented in docs/VALIDATION.md).
#include <gtest/gtest.h>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"

namespace gguftool {
namespace {

using gguf::ValueType;
using testkit::RawGguf;

constexpr uint32_t kU8 = static_cast<uint32_t>(ValueType::uint8);
constexpr uint32_t kU32 = static_cast<uint32_t>(ValueType::uint32);
constexpr uint32_t kU64 = static_cast<uint32_t>(ValueType::uint64);
constexpr uint32_t kString = static_cast<uint32_t>(ValueType::string);
constexpr uint32_t kArray = static_cast<uint32_t>(ValueType::array);
constexpr uint32_t kF32 = static_cast<uint32_t>(GgmlType::f32);

enum class Llama { rejects, accepts };

// Writes `bytes`, opens them, and checks the error: file, offset and a piece of the message.
void expect_error(const std::vector<uint8_t> &bytes, uint64_t offset, const std::string &text,
                  Llama llama = Llama::rejects) {
    testkit::TempDir dir;
    const std::string path = dir.file("broken.gguf");
    testkit::write_file(path, bytes);
    try {
        gguf::File::open(path);
        ADD_FAILURE() << "accepted a broken file; expected: " << text;
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), path);
        EXPECT_EQ(e.offset(), std::optional<uint64_t>(offset)) << e.what();
        EXPECT_NE(e.problem().find(text), std::string::npos)
            << "message: " << e.what() << "\nexpected to contain: " << text;
    }
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    if (llama == Llama::rejects)
        EXPECT_TRUE(testkit::llama_rejects(path)) << "llama.cpp accepts it: " << text;
    else
        EXPECT_FALSE(testkit::llama_rejects(path)) << "llama.cpp now rejects it too: " << text;
}

// A header with one tensor of `dims` and f32 data, for the tensor-info cases; `field` receives
// the offset of the tensor info.
RawGguf one_tensor(const std::vector<uint64_t> &dims, uint32_t type, uint64_t offset,
                   uint64_t &info_at) {
    RawGguf raw;
    raw.header(3, 1, 0);
    info_at = raw.pos();
    raw.tensor("w", dims, type, offset);
    raw.pad_to(32).zeros(64);
    return raw;
}

// --- header ---

TEST(BrokenFile, Empty) {
    expect_error({}, 0, "unexpected end of file reading magic");
}

TEST(BrokenFile, WrongMagic) {
    RawGguf raw;
    raw.raw("GGUX", 4).u32(3).u64(0).u64(0);
    expect_error(raw.bytes(), 0, "not a GGUF file: magic is 'GGUX', expected 'GGUF'");
}

TEST(BrokenFile, Version1) {
    expect_error(RawGguf().header(1, 0, 0).bytes(), 4, "unsupported GGUF version 1");
}

TEST(BrokenFile, FutureVersion) {
    expect_error(RawGguf().header(4, 0, 0).bytes(), 4, "unsupported GGUF version 4");
}

TEST(BrokenFile, Version0) {
    expect_error(RawGguf().header(0, 0, 0).bytes(), 4, "unsupported GGUF version 0");
}

TEST(BrokenFile, HeaderCutShort) {
    RawGguf raw;
    raw.raw("GGUF", 4).u32(3).u64(0).u32(0);
    expect_error(raw.bytes(), 16, "unexpected end of file reading metadata count");
}

TEST(BrokenFile, TensorCountOf2To63) {
    expect_error(RawGguf().header(3, 1ull << 63, 0).bytes(), 8,
                 "tensor count 9223372036854775808 cannot fit");
}

TEST(BrokenFile, TensorCountLargerThanTheFile) {
    RawGguf raw;
    raw.header(3, 1000, 0).zeros(100);
    expect_error(raw.bytes(), 8, "tensor count 1000 cannot fit in the 100 bytes");
}

TEST(BrokenFile, MetadataCountOf2To63) {
    expect_error(RawGguf().header(3, 0, 1ull << 63).bytes(), 16,
                 "metadata count 9223372036854775808 cannot fit");
}

TEST(BrokenFile, TensorCountLargerThanTheInfos) {
    RawGguf raw;
    raw.header(3, 2, 1).str("k").u32(kU64).u64(1);
    raw.tensor("a", {8}, kF32, 0);
    raw.zeros(8);  // enough for the count check after the header, not for two tensor infos
    expect_error(raw.bytes(), 8, "tensor count 2 cannot fit");
}

// --- metadata ---

TEST(BrokenFile, KeyLengthPastTheEnd) {
    RawGguf raw;
    raw.header(3, 0, 1).u64(1000).raw("abc", 3).zeros(20);
    expect_error(raw.bytes(), 24, "metadata key has length 1000, past the end of the file");
}

TEST(BrokenFile, StringValueLengthPastTheEnd) {
    RawGguf raw;
    raw.header(3, 0, 1).str("k").u32(kString);
    const uint64_t at = raw.pos();
    raw.u64(1ull << 62).raw("xyz", 3);
    expect_error(raw.bytes(), at, "string value has length 4611686018427387904, past the end");
}

TEST(BrokenFile, EmptyKey) {
    RawGguf raw;
    raw.header(3, 0, 1).str("").u32(kU8).u8(1);
    expect_error(raw.bytes(), 24, "metadata key 0 is empty");
}

TEST(BrokenFile, DuplicateKey) {
    RawGguf raw;
    raw.header(3, 0, 2).str("a.b").u32(kU8).u8(1);
    const uint64_t second = raw.pos();
    raw.str("a.b").u32(kU32).u32(2);
    expect_error(raw.bytes(), second, "duplicate key 'a.b' (first at offset 24)");
}

TEST(BrokenFile, InvalidValueType) {
    RawGguf raw;
    raw.header(3, 0, 1).str("k");
    const uint64_t at = raw.pos();
    raw.u32(13).u64(0);
    expect_error(raw.bytes(), at, "key 'k' has invalid value type 13");
}

TEST(BrokenFile, InvalidArrayElementType) {
    RawGguf raw;
    raw.header(3, 0, 1).str("k").u32(kArray);
    const uint64_t at = raw.pos();
    raw.u32(99).u64(0);
    expect_error(raw.bytes(), at, "key 'k': invalid array element type 99");
}

TEST(BrokenFile, ArrayLongerThanTheFile) {
    RawGguf raw;
    raw.header(3, 0, 1).str("k").u32(kArray).u32(kU32);
    const uint64_t at = raw.pos();
    raw.u64(1ull << 62).u32(1).u32(2);
    expect_error(raw.bytes(), at,
                 "key 'k': array of 4611686018427387904 uint32 elements cannot fit");
}

TEST(BrokenFile, StringInArrayPastTheEnd) {
    RawGguf raw;
    raw.header(3, 0, 1).str("tokens").u32(kArray).u32(kString).u64(3).str("a");
    const uint64_t at = raw.pos();
    raw.u64(500).raw("bc", 2).str("d");
    expect_error(raw.bytes(), at, "string in array has length 500, past the end of the file");
}

// Arrays nested `levels` deep: every level but the innermost holds one array.
RawGguf nested(uint32_t levels, uint64_t &value_at) {
    RawGguf raw;
    raw.header(3, 0, 1).str("deep").u32(kArray);
    value_at = raw.pos();
    for (uint32_t level = 1; level < levels; ++level) raw.u32(kArray).u64(1);
    raw.u32(kU8).u64(0);
    return raw;
}

TEST(BrokenFile, ArraysNested1000Deep) {
    uint64_t value_at = 0;
    RawGguf raw = nested(1000, value_at);
    expect_error(raw.bytes(), value_at + 12 * 64, "key 'deep': arrays nested more than 64 levels");
}

TEST(BrokenFile, ArraysNested64DeepAreFine) {
    uint64_t value_at = 0;
    RawGguf raw = nested(64, value_at);
    testkit::TempDir dir;
    testkit::write_file(dir.file("deep.gguf"), raw.bytes());
    const auto f = gguf::File::open(dir.file("deep.gguf"));
    gguf::Value v = f->find("deep")->value;
    for (int level = 1; level < 64; ++level) v = v.element(0);
    EXPECT_EQ(v.array_type(), ValueType::uint8);
    EXPECT_EQ(v.array_size(), 0u);
}

TEST(BrokenFile, AlignmentOfWrongType) {
    RawGguf raw;
    raw.header(3, 0, 2).str("a").u32(kU8).u8(0);
    const uint64_t at = raw.pos();
    raw.str("general.alignment").u32(kU64).u64(32);
    expect_error(raw.bytes(), at, "general.alignment must be of type uint32, not uint64");
}

TEST(BrokenFile, AlignmentZero) {
    RawGguf raw;
    raw.header(3, 0, 1).str("general.alignment").u32(kU32).u32(0);
    expect_error(raw.bytes(), 24, "general.alignment 0 is not a power of two");
}

TEST(BrokenFile, AlignmentThree) {
    RawGguf raw;
    raw.header(3, 0, 1).str("general.alignment").u32(kU32).u32(3);
    expect_error(raw.bytes(), 24, "general.alignment 3 is not a power of two");
}

// --- tensor infos ---

TEST(BrokenFile, TensorNameTooLong) {
    RawGguf raw;
    raw.header(3, 1, 0).tensor(std::string(65, 'n'), {1}, kF32, 0).pad_to(32).zeros(32);
    expect_error(raw.bytes(), 24, "tensor 0: name is 65 bytes long, at most 64 are allowed");
}

TEST(BrokenFile, DuplicateTensorName) {
    RawGguf raw;
    raw.header(3, 2, 0).tensor("w", {8}, kF32, 0);
    const uint64_t second = raw.pos();
    raw.tensor("w", {8}, kF32, 32).pad_to(32).zeros(64);
    expect_error(raw.bytes(), second, "duplicate tensor name 'w' (tensors 0 and 1)");
}

TEST(BrokenFile, FiveDimensions) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({1, 1, 1, 1, 1}, kF32, 0, info);
    expect_error(raw.bytes(), info + 9, "tensor 'w': 5 dimensions, at most 4 are allowed");
}

TEST(BrokenFile, NegativeDimension) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({4, ~0ull}, kF32, 0, info);
    expect_error(raw.bytes(), info + 9 + 4 + 8, "tensor 'w': dimension 1 is negative (-1)");
}

TEST(BrokenFile, ElementCountOverflow) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({(1ull << 32) + 1, 1ull << 32}, kF32, 0, info);
    expect_error(raw.bytes(), info + 9,
                 "element count of shape [4294967297, 4294967296] overflows");
}

// ggml computes the element count in int64 before checking it: 2^32 x 2^32 wraps to 0 and the
// file is accepted.
TEST(BrokenFile, ElementCountOverflowThatWrapsToZero) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({1ull << 32, 1ull << 32}, kF32, 0, info);
    expect_error(raw.bytes(), info + 9, "element count of shape [4294967296, 4294967296] overflows",
                 Llama::accepts);
}

TEST(BrokenFile, DimensionOfInt64Max) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({(1ull << 63) - 1}, kF32, 0, info);
    expect_error(raw.bytes(), info + 9, "overflows int64");
}

TEST(BrokenFile, UnknownTypeId) {
    for (const uint32_t type : {43u, 1000u, 0xffffffffu}) {
        uint64_t info = 0;
        RawGguf raw = one_tensor({8}, type, 0, info);
        expect_error(raw.bytes(), info + 9 + 4 + 8,
                     "tensor 'w': unknown type id " + std::to_string(type));
    }
}

TEST(BrokenFile, RemovedTypeIds) {
    for (const uint32_t type : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
        uint64_t info = 0;
        RawGguf raw = one_tensor({32}, type, 0, info);
        expect_error(raw.bytes(), info + 9 + 4 + 8,
                     "type id " + std::to_string(type) + " (" + type_traits(type)->name +
                         ") is a removed type");
    }
}

TEST(BrokenFile, RowNotAMultipleOfTheBlockSize) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({33, 2}, static_cast<uint32_t>(GgmlType::q4_0), 0, info);
    expect_error(raw.bytes(), info + 9 + 4 + 16,
                 "row of 33 elements is not a multiple of the q4_0 block size 32");
}

TEST(BrokenFile, ByteSizeOverflow) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({1ull << 62}, static_cast<uint32_t>(GgmlType::f64), 0, info);
    expect_error(raw.bytes(), info + 9 + 4 + 8,
                 "size in bytes of shape [4611686018427387904] overflows");
}

// --- data layout ---

TEST(BrokenFile, MisalignedOffset) {
    RawGguf raw;
    raw.header(3, 2, 0).tensor("a", {4}, kF32, 0);
    const uint64_t b = raw.pos();
    raw.tensor("b", {4}, kF32, 16).pad_to(32).zeros(64);
    expect_error(raw.bytes(), b + 9 + 4 + 8 + 4,
                 "tensor 'b': data offset 16 is not a multiple of the alignment 32");
}

// ggml's reader, asked for metadata only (no_alloc, no context), does not look at the data: it
// accepts a file whose last tensor runs past the end.
TEST(BrokenFile, DataPastTheEnd) {
    RawGguf raw;
    raw.header(3, 2, 0).tensor("a", {8}, kF32, 0);
    const uint64_t b = raw.pos();
    raw.tensor("b", {16}, kF32, 32).pad_to(32).zeros(32 + 63);
    expect_error(raw.bytes(), b + 9 + 4 + 8 + 4,
                 "tensor 'b': 64 bytes of data at offset 32 (data section at 96) extend past the "
                 "end of the file (191 bytes)",
                 Llama::accepts);
}

TEST(BrokenFile, OffsetFarPastTheEnd) {
    uint64_t info = 0;
    RawGguf raw = one_tensor({8}, kF32, 1ull << 63, info);
    expect_error(raw.bytes(), info + 9 + 4 + 8 + 4, "extend past the end of the file");
}

TEST(BrokenFile, OverlappingTensors) {
    RawGguf raw;
    raw.header(3, 2, 0).tensor("a", {16}, kF32, 0);
    const uint64_t b = raw.pos();
    raw.tensor("b", {16}, kF32, 32).pad_to(32).zeros(96);
    expect_error(raw.bytes(), b + 9 + 4 + 8 + 4,
                 "tensor 'b': data [32, 96) overlaps the data of tensor 'a' [0, 64)");
}

TEST(BrokenFile, OverlappingTensorsOutOfOrder) {
    RawGguf raw;
    raw.header(3, 3, 0);
    const uint64_t a = raw.pos();
    raw.tensor("a", {16}, kF32, 128).tensor("b", {4}, kF32, 0).tensor("c", {32}, kF32, 64);
    raw.pad_to(32).zeros(192);
    expect_error(raw.bytes(), a + 9 + 4 + 8 + 4,
                 "tensor 'a': data [128, 192) overlaps the data of tensor 'c' [64, 192)");
}

TEST(BrokenFile, PaddingPastTheEnd) {
    RawGguf raw;
    raw.header(3, 1, 0).tensor("w", {0}, kF32, 0);
    const uint64_t end = raw.pos();  // 24 + 8 + 1 + 4 + 8 + 4 + 8 = 57: not aligned
    expect_error(raw.bytes(), end, "padding to the data section (at 64) runs past the end");
}

TEST(BrokenFile, NotAFile) {
    testkit::TempDir dir;
    try {
        gguf::File::open(dir.path());
        ADD_FAILURE() << "opened a directory";
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), dir.path());
        EXPECT_EQ(e.problem(), "not a regular file");
    }
    try {
        gguf::File::open(dir.file("missing.gguf"));
        ADD_FAILURE() << "opened a missing file";
    } catch (const Error &e) {
        EXPECT_NE(e.problem().find("cannot open: No such file"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace gguftool
