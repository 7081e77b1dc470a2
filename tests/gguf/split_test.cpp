// Split models (llama.cpp's gguf-split): shards named by llama.cpp's own llama_split_path, opened
// from any shard, joined in order; missing or foreign shards are errors.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::MetaValue;

// llama_split_path from llama.cpp's libllama (next to libggml-base.so).
using SplitPathFn = int (*)(char *, size_t, const char *, int, int);
SplitPathFn llama_split_path() {
    static const SplitPathFn fn = []() -> SplitPathFn {
        const reference::Ggml *g = testkit::ggml();
        if (!g) return nullptr;
        const auto dir = std::filesystem::path(g->path).parent_path();
        for (const auto &e : std::filesystem::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            if (name.starts_with("libllama") && name.ends_with(".so"))
                if (void *h = dlopen(e.path().c_str(), RTLD_NOW | RTLD_LOCAL))
                    return reinterpret_cast<SplitPathFn>(dlsym(h, "llama_split_path"));
        }
        return nullptr;
    }();
    return fn;
}

std::string shard_path(const std::string &prefix, int no, int count) {
    SplitPathFn fn = llama_split_path();
    if (!fn) throw std::runtime_error("llama_split_path not found in libllama");
    char buf[4096];
    fn(buf, sizeof buf, prefix.c_str(), no, count);
    return buf;
}

struct ShardOptions {
    uint16_t count = 3;
    int32_t tensors = 6;
    int no = -1;  // split.no to write; -1: the shard's own number
};

// Shard `no` of a 3-shard model with two tensors each: s<no>.a and s<no>.b.
gguf::Writer shard(uint16_t no, const ShardOptions &o = {}) {
    gguf::Writer w;
    if (no == 0) w.add("general.architecture", MetaValue::str("llama"));
    w.add("split.no", MetaValue::u16(o.no < 0 ? no : static_cast<uint16_t>(o.no)));
    w.add("split.count", MetaValue::u16(o.count));
    w.add("split.tensors.count", MetaValue::i32(o.tensors));
    w.add_tensor(fmt::format("s{}.a", no), GgmlType::f32, {4}, testkit::filler(16, 10 * no + 1));
    w.add_tensor(fmt::format("s{}.b", no), GgmlType::q8_0, {32, 2},
                 testkit::filler(68, 10 * no + 2));
    return w;
}

struct SplitModel {
    testkit::TempDir dir;
    std::string prefix = dir.file("model");
    std::string path(int no) const { return shard_path(prefix, no, 3); }
    void write_all() {
        for (uint16_t i = 0; i < 3; ++i) shard(i).write(path(i));
    }
};

void expect_error(const std::string &open, const std::string &where, const std::string &text) {
    try {
        gguf::Model::open(open);
        ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), where);
        EXPECT_NE(e.problem().find(text), std::string::npos)
            << "message: " << e.what() << "\nexpected to contain: " << text;
    }
}

TEST(Split, OpensEveryShardFromAnyShard) {
    SplitModel m;
    m.write_all();
    EXPECT_TRUE(m.path(1).ends_with("model-00002-of-00003.gguf"));
    for (int opened = 0; opened < 3; ++opened) {
        const gguf::Model model = gguf::Model::open(m.path(opened));
        ASSERT_EQ(model.shards().size(), 3u);
        for (int i = 0; i < 3; ++i) EXPECT_EQ(model.shards()[i]->path(), m.path(i));
        EXPECT_EQ(model.first().find("general.architecture")->value.as_string(), "llama");
        ASSERT_EQ(model.tensors().size(), 6u);
        for (uint32_t i = 0; i < 6; ++i) {
            const gguf::TensorInfo &t = model.tensors()[i];
            const uint32_t s = i / 2;
            EXPECT_EQ(t.shard, s);
            EXPECT_EQ(t.name, fmt::format("s{}.{}", s, i % 2 ? 'b' : 'a'));
            const auto expected = testkit::filler(t.bytes, 10 * s + 1 + i % 2);
            EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), expected.begin())) << t.name;
            EXPECT_EQ(t.data.data(), model.shards()[s]->bytes().data() + t.file_offset);
        }
        ASSERT_NE(model.find_tensor("s2.b"), nullptr);
        EXPECT_EQ(model.find_tensor("s2.b")->shard, 2u);
    }
    for (int i = 0; i < 3; ++i)
        testkit::expect_same_as_llama(m.path(i), *gguf::File::open(m.path(i)));
}

TEST(Split, MissingShard) {
    SplitModel m;
    m.write_all();
    std::filesystem::remove(m.path(2));
    expect_error(m.path(0), m.path(2), "missing shard 3 of 3 of split model");
}

TEST(Split, WrongSplitNo) {
    SplitModel m;
    m.write_all();
    shard(1, {.count = 3, .tensors = 6, .no = 2}).write(m.path(1));
    expect_error(m.path(0), m.path(1), "wrong shard: split.no is 2, expected 1");
}

TEST(Split, ShardOfAnotherModel) {
    SplitModel m;
    m.write_all();
    shard(2, {.count = 4, .tensors = 6, .no = -1}).write(m.path(2));
    expect_error(m.path(0), m.path(2),
                 "shard belongs to another model: split.count is 4, expected 3");
    shard(2, {.count = 3, .tensors = 9, .no = -1}).write(m.path(2));
    expect_error(m.path(0), m.path(2),
                 "shard belongs to another model: split.tensors.count is 9, expected 6");
}

TEST(Split, TensorCountMismatch) {
    SplitModel m;
    for (uint16_t i = 0; i < 3; ++i)
        shard(i, {.count = 3, .tensors = 7, .no = -1}).write(m.path(i));
    expect_error(m.path(1), m.path(0), "split.tensors.count is 7 but the 3 shards hold 6 tensors");
}

TEST(Split, ShardNotNamedByTheConvention) {
    SplitModel m;
    m.write_all();
    const std::string odd = m.dir.file("renamed.gguf");
    shard(0).write(odd);
    expect_error(odd, odd,
                 "shard 1 of 3 of a split model must be named <prefix>-00001-of-00003.gguf");
}

TEST(Split, SameTensorInTwoShards) {
    SplitModel m;
    m.write_all();
    for (uint16_t i = 0; i < 2; ++i)
        shard(i, {.count = 3, .tensors = 7, .no = -1}).write(m.path(i));
    gguf::Writer w2;
    w2.add("split.no", MetaValue::u16(2)).add("split.count", MetaValue::u16(3));
    w2.add("split.tensors.count", MetaValue::i32(7));
    w2.add_tensor("s2.a", GgmlType::f32, {4}, testkit::filler(16));
    w2.add_tensor("s2.b", GgmlType::f32, {4}, testkit::filler(16));
    w2.add_tensor("s0.a", GgmlType::f32, {4}, testkit::filler(16));
    w2.write(m.path(2));
    expect_error(m.path(0), m.path(2), "tensor 's0.a' is also in shard 1");
}

TEST(Split, SplitCountOfOneIsASingleFile) {
    testkit::TempDir dir;
    const std::string path = dir.file("one.gguf");
    gguf::Writer w;
    w.add("split.no", MetaValue::u16(0)).add("split.count", MetaValue::u16(1));
    w.add_tensor("x", GgmlType::f32, {1}, testkit::filler(4));
    w.write(path);
    const gguf::Model model = gguf::Model::open(path);
    EXPECT_EQ(model.shards().size(), 1u);
    EXPECT_EQ(model.tensors().size(), 1u);
}

}  // namespace
}  // namespace gguftool
