// hash_parts: known digests, and the same results whatever the thread count and split into parts.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguftool/hash.hpp"

namespace gguftool::hash {
namespace {

KindSet all_kinds() {
    KindSet k;
    for (Kind kind : kKinds) k.add(kind);
    return k;
}

std::span<const uint8_t> bytes_of(const std::string &s) {
    return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

// Published test vectors: FIPS 180-2's "abc" for SHA-1 and SHA-256; xxHash's own xxhsum 0.8.1
// (`printf abc | xxhsum -H64`, `-H3`) for XXH64 and XXH3.
TEST(HashParts, KnownDigestsOfAbc) {
    const std::string abc = "abc";
    const std::vector<std::span<const uint8_t>> parts = {bytes_of(abc)};
    const Hashes h = hash_parts(parts, {.kinds = all_kinds(), .per_part = true, .threads = 1});
    ASSERT_EQ(h.parts.size(), 1u);
    for (const Digests &d : {h.parts[0], h.whole}) {
        EXPECT_EQ(d[size_t(Kind::xxh64)], "44bc2cf5ad770999");
        EXPECT_EQ(d[size_t(Kind::xxh3)], "78af5f94892f3950");
        EXPECT_EQ(d[size_t(Kind::sha1)], "a9993e364706816aba3e25717850c26c9cd0d89d");
        EXPECT_EQ(d[size_t(Kind::sha256)],
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
    EXPECT_EQ(h.parts[0][size_t(Kind::uuid)], "");  // the whole model's only
    EXPECT_TRUE(is_digest_text(Kind::uuid, h.whole[size_t(Kind::uuid)]));
    EXPECT_EQ(h.whole[size_t(Kind::uuid)][14], '5');  // version 5
    EXPECT_NE(std::string("89ab").find(h.whole[size_t(Kind::uuid)][19]), std::string::npos);
}

// Parts of many sizes (empty, below and across the 32 KiB chunk): per part as each alone, the
// whole as their concatenation, for every thread count.
TEST(HashParts, SameForAnyThreadCountAndAsOneStream) {
    std::vector<std::vector<uint8_t>> data;
    uint32_t x = 7;
    for (size_t n : {size_t(0), size_t(1), size_t(31), size_t(32768), size_t(100001), size_t(5),
                     size_t(65536 + 17), size_t(0), size_t(3000)}) {
        std::vector<uint8_t> v(n);
        for (uint8_t &b : v) b = uint8_t((x = x * 1664525u + 1013904223u) >> 24);
        data.push_back(std::move(v));
    }
    std::vector<std::span<const uint8_t>> parts(data.begin(), data.end());
    std::vector<uint8_t> joined;
    for (const auto &v : data) joined.insert(joined.end(), v.begin(), v.end());
    const std::vector<std::span<const uint8_t>> one = {joined};

    const Options base{.kinds = all_kinds(), .per_part = true, .threads = 1};
    const Hashes ref = hash_parts(parts, base);
    const Hashes whole = hash_parts(one, base);
    EXPECT_EQ(ref.whole, whole.whole);
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::vector<std::span<const uint8_t>> alone = {parts[i]};
        Digests want = hash_parts(alone, base).parts[0];
        EXPECT_EQ(ref.parts[i], want) << "part " << i;
    }
    EXPECT_EQ(ref.parts[0], ref.parts[7]);  // both empty
    for (unsigned threads : {2u, 3u, 8u, 0u}) {
        Options o = base;
        o.threads = threads;
        const Hashes h = hash_parts(parts, o);
        EXPECT_EQ(h.whole, ref.whole) << threads << " threads";
        EXPECT_EQ(h.parts, ref.parts) << threads << " threads";
        o.per_part = false;
        const Hashes w = hash_parts(parts, o);
        EXPECT_TRUE(w.parts.empty());
        EXPECT_EQ(w.whole, ref.whole) << threads << " threads, whole only";
    }
}

TEST(HashParts, OnlyTheAskedKinds) {
    const std::string abc = "abc";
    const std::vector<std::span<const uint8_t>> parts = {bytes_of(abc), bytes_of(abc)};
    for (unsigned threads : {1u, 2u}) {
        const Hashes h = hash_parts(
            parts, {.kinds = KindSet().add(Kind::sha1), .per_part = true, .threads = threads});
        for (Kind k : kKinds) {
            EXPECT_EQ(h.whole[size_t(k)].empty(), k != Kind::sha1);
            EXPECT_EQ(h.parts[1][size_t(k)].empty(), k != Kind::sha1);
        }
    }
    const Hashes none = hash_parts({}, {.kinds = KindSet().add(Kind::xxh64)});
    EXPECT_EQ(none.whole[size_t(Kind::xxh64)], "ef46db3751d8e999");  // XXH64 of nothing
}

TEST(HashKinds, NamesAndDigestForms) {
    for (Kind k : kKinds) EXPECT_EQ(kind_named(kind_name(k)), k);
    EXPECT_FALSE(kind_named("md5"));
    EXPECT_FALSE(kind_named("SHA256"));
    EXPECT_TRUE(is_digest_text(Kind::xxh64, "44BC2cf5ad770999"));
    EXPECT_FALSE(is_digest_text(Kind::xxh64, "44bc2cf5ad77099"));
    EXPECT_FALSE(is_digest_text(Kind::xxh3, "44bc2cf5ad77099g"));
    EXPECT_FALSE(is_digest_text(Kind::sha1, "44bc2cf5ad770999"));
    EXPECT_TRUE(is_digest_text(Kind::uuid, "ef001206-dadc-5f6d-a15f-3359e577d4e5"));
    EXPECT_FALSE(is_digest_text(Kind::uuid, "ef001206dadc-5f6d-a15f-3359e577d4e5-"));
}

}  // namespace
}  // namespace gguftool::hash
