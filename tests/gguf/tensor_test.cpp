// Tensor infos and data: every ggml type, every rank, alignments, layouts ggml's writer never
// produces but the spec allows, and valid edge cases. Cross-checked with llama.cpp's reader.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::MetaValue;

std::vector<uint8_t> bytes_for(GgmlType t, const std::vector<uint64_t> &dims, uint32_t seed) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    return testkit::filler(*row_bytes(t, n), seed);
}

bool same_bytes(std::span<const uint8_t> a, const std::vector<uint8_t> &b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST(Tensors, EveryTypeMatchesLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("types.gguf");
    gguf::Writer w;
    w.add("general.architecture", MetaValue::str("test"));
    std::vector<std::vector<uint8_t>> data;
    std::vector<GgmlType> types;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const TypeTraits *tt = type_traits(id);
        if (tt->removed) continue;
        const auto t = static_cast<GgmlType>(id);
        const std::vector<uint64_t> dims = {2ull * tt->block_size, 3};
        data.push_back(bytes_for(t, dims, id));
        types.push_back(t);
        w.add_tensor(fmt::format("t.{}", tt->name), t, dims, data.back());
    }
    w.write(path);

    const auto f = gguf::File::open(path);
    ASSERT_EQ(f->tensors().size(), types.size());
    for (size_t i = 0; i < types.size(); ++i) {
        const gguf::TensorInfo &t = f->tensors()[i];
        const TypeTraits &tt = traits(types[i]);
        EXPECT_EQ(t.name, fmt::format("t.{}", tt.name));
        EXPECT_EQ(t.type, types[i]);
        EXPECT_EQ(t.n_dims, 2u);
        EXPECT_EQ(t.ne, (std::array<uint64_t, 4>{2ull * tt.block_size, 3, 1, 1}));
        EXPECT_EQ(t.elements, 6ull * tt.block_size);
        EXPECT_EQ(t.bytes, 6ull * tt.type_size);
        EXPECT_EQ(t.offset % 32, 0u);
        EXPECT_EQ(t.file_offset, f->data_offset() + t.offset);
        EXPECT_EQ(t.shard, 0u);
        EXPECT_TRUE(same_bytes(t.data, data[i])) << t.name;
        EXPECT_EQ(t.data.data(), f->bytes().data() + t.file_offset);
    }
    EXPECT_EQ(f->data_offset() % 32, 0u);
    testkit::expect_same_as_llama(path, *f);
}

TEST(Tensors, EveryRankMatchesLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("ranks.gguf");
    gguf::Writer w;
    const std::vector<std::vector<uint64_t>> shapes = {{}, {5}, {3, 2}, {2, 3, 4}, {1, 2, 3, 4}};
    for (size_t i = 0; i < shapes.size(); ++i)
        w.add_tensor(fmt::format("r{}", i), GgmlType::f32, shapes[i],
                     bytes_for(GgmlType::f32, shapes[i], 7));
    w.write(path);
    const auto f = gguf::File::open(path);
    ASSERT_EQ(f->tensors().size(), shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
        const gguf::TensorInfo &t = f->tensors()[i];
        EXPECT_EQ(t.n_dims, shapes[i].size());
        for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < shapes[i].size() ? shapes[i][d] : 1);
    }
    EXPECT_EQ(f->tensors()[0].elements, 1u);  // rank 0: a scalar
    testkit::expect_same_as_llama(path, *f);
}

TEST(Tensors, AlignmentFromMetadataMatchesLlama) {
    for (const uint32_t alignment : {1u, 8u, 64u, 4096u}) {
        testkit::TempDir dir;
        const std::string path = dir.file("align.gguf");
        gguf::Writer w;
        w.add("general.alignment", MetaValue::u32(alignment));
        w.add_tensor("a", GgmlType::f16, {3}, bytes_for(GgmlType::f16, {3}, 1));
        w.add_tensor("b", GgmlType::q8_0, {32}, bytes_for(GgmlType::q8_0, {32}, 2));
        w.write(path);
        const auto f = gguf::File::open(path);
        EXPECT_EQ(f->alignment(), alignment);
        EXPECT_EQ(f->data_offset() % alignment, 0u);
        EXPECT_EQ(f->tensors()[1].offset, (6 + alignment - 1) / alignment * alignment);
        testkit::expect_same_as_llama(path, *f);
    }
}

// The spec wants offsets aligned and data inside the file; it does not ask for file order or
// for no gaps. ggml's reader does (offsets must be the running sum of padded sizes).
TEST(Tensors, OutOfOrderDataWithGaps) {
    testkit::TempDir dir;
    const std::string path = dir.file("shuffled.gguf");
    const auto a = testkit::filler(100, 1), b = testkit::filler(64, 2), c = testkit::filler(32, 3);
    gguf::Writer w;
    w.add_tensor("a", GgmlType::i8, {100}, a, 256);
    w.add_tensor("b", GgmlType::f32, {16}, b, 0);
    w.add_tensor("c", GgmlType::i32, {8}, c, 1024);
    w.write(path);
    const auto f = gguf::File::open(path);
    ASSERT_EQ(f->tensors().size(), 3u);
    EXPECT_EQ(f->tensors()[0].offset, 256u);
    EXPECT_EQ(f->tensors()[1].offset, 0u);
    EXPECT_EQ(f->tensors()[2].offset, 1024u);
    EXPECT_TRUE(same_bytes(f->tensors()[0].data, a));
    EXPECT_TRUE(same_bytes(f->tensors()[1].data, b));
    EXPECT_TRUE(same_bytes(f->tensors()[2].data, c));
    ASSERT_NE(testkit::ggml(), nullptr);
    EXPECT_TRUE(testkit::llama_rejects(path));
}

TEST(Tensors, ZeroSizedTensorsMatchLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("zero.gguf");
    gguf::Writer w;
    w.add_tensor("empty", GgmlType::f32, {0, 4}, {});
    w.add_tensor("full", GgmlType::f32, {4}, testkit::filler(16));
    w.add_tensor("empty_q", GgmlType::q4_k, {256, 0, 3}, {});
    w.write(path);
    const auto f = gguf::File::open(path);
    ASSERT_EQ(f->tensors().size(), 3u);
    EXPECT_EQ(f->tensors()[0].elements, 0u);
    EXPECT_EQ(f->tensors()[0].bytes, 0u);
    EXPECT_EQ(f->tensors()[2].bytes, 0u);
    EXPECT_EQ(f->tensors()[1].bytes, 16u);
    testkit::expect_same_as_llama(path, *f);
}

TEST(Tensors, NoTensorsMatchesLlama) {
    testkit::TempDir dir;
    const std::string path = dir.file("meta_only.gguf");
    gguf::Writer().add("k", MetaValue::str("abc")).write(path);
    const auto f = gguf::File::open(path);
    EXPECT_TRUE(f->tensors().empty());
    // Like ggml: with no tensors the data section starts right after the metadata, unpadded.
    EXPECT_EQ(f->data_offset(), 24u + 8 + 1 + 4 + 8 + 3);
    testkit::expect_same_as_llama(path, *f);

    const std::string empty = dir.file("empty.gguf");
    gguf::Writer().write(empty);
    const auto e = gguf::File::open(empty);
    EXPECT_TRUE(e->metadata().empty());
    EXPECT_EQ(e->data_offset(), 24u);
    testkit::expect_same_as_llama(empty, *e);
}

// The spec allows names of up to 64 bytes; ggml (GGML_MAX_NAME 64, with the terminating NUL)
// up to 63.
TEST(Tensors, NameLengthLimits) {
    testkit::TempDir dir;
    const std::string p63 = dir.file("n63.gguf"), p64 = dir.file("n64.gguf");
    gguf::Writer()
        .add_tensor(std::string(63, 'x'), GgmlType::f32, {1}, testkit::filler(4))
        .write(p63);
    gguf::Writer()
        .add_tensor(std::string(64, 'y'), GgmlType::f32, {1}, testkit::filler(4))
        .write(p64);
    const auto f63 = gguf::File::open(p63);
    testkit::expect_same_as_llama(p63, *f63);
    const auto f64 = gguf::File::open(p64);
    EXPECT_EQ(f64->tensors()[0].name, std::string(64, 'y'));
    ASSERT_NE(testkit::ggml(), nullptr);
    EXPECT_TRUE(testkit::llama_rejects(p64));
}

TEST(Tensors, ModelOfOneFile) {
    testkit::TempDir dir;
    const std::string path = dir.file("single-00001-of-00002.gguf");  // name alone means nothing
    gguf::Writer w;
    w.add_tensor("x", GgmlType::f32, {2}, testkit::filler(8, 1));
    w.add_tensor("y", GgmlType::f16, {4}, testkit::filler(8, 2));
    w.write(path);
    const gguf::Model m = gguf::Model::open(path);
    ASSERT_EQ(m.shards().size(), 1u);
    EXPECT_EQ(m.first().path(), path);
    ASSERT_EQ(m.tensors().size(), 2u);
    ASSERT_NE(m.find_tensor("y"), nullptr);
    EXPECT_EQ(m.find_tensor("y")->type, GgmlType::f16);
    EXPECT_TRUE(same_bytes(m.find_tensor("y")->data, testkit::filler(8, 2)));
    EXPECT_EQ(m.find_tensor("z"), nullptr);
}

}  // namespace
}  // namespace gguftool
