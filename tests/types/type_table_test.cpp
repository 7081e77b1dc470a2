// Our ggml type table against llama.cpp's own (ggml_type_name / ggml_type_size / ggml_blck_size).
#include <gtest/gtest.h>

#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

using namespace gguftool;

TEST(TypeTable, MatchesLlamaCpp) {
    auto g = reference::ggml();
    ASSERT_NE(g, nullptr) << "llama.cpp's libggml-base.so did not load (run setup.sh / npm ci)";
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const TypeTraits *t = type_traits(id);
        ASSERT_NE(t, nullptr);
        SCOPED_TRACE(testing::Message() << "type id " << id << " (" << t->name << ")");
        if (t->removed) {
            EXPECT_EQ(g->type_size(int(id)), 0u);
            EXPECT_EQ(g->blck_size(int(id)), 0);
            continue;
        }
        EXPECT_STREQ(t->name, g->type_name(int(id)));
        EXPECT_EQ(t->type_size, g->type_size(int(id)));
        EXPECT_EQ(int64_t(t->block_size), g->blck_size(int(id)));
    }
}

// The lookups work at compile time too: the block decoders check their structs against the table.
static_assert(type_traits(kGgmlTypeCount) == nullptr);
static_assert(&traits(GgmlType::q4_k) == type_traits(12) && !traits(GgmlType::q4_k).removed);

TEST(TypeTable, RemovedAndUnknownIds) {
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u})
        EXPECT_TRUE(type_traits(id)->removed);
    EXPECT_EQ(type_traits(kGgmlTypeCount), nullptr);
    EXPECT_EQ(type_traits(UINT32_MAX), nullptr);
}

TEST(TypeTable, NamesRoundTrip) {
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        if (type_traits(id)->removed) continue;
        auto t = type_from_name(type_traits(id)->name);
        ASSERT_TRUE(t.has_value()) << type_traits(id)->name;
        EXPECT_EQ(uint32_t(*t), id);
    }
    EXPECT_EQ(type_from_name("Q4_k"), GgmlType::q4_k);
    EXPECT_FALSE(type_from_name("q4_2").has_value());
    EXPECT_FALSE(type_from_name("nope").has_value());
}

TEST(TypeTable, RowBytes) {
    EXPECT_EQ(row_bytes(GgmlType::q4_0, 64), 36u);
    EXPECT_FALSE(row_bytes(GgmlType::q4_0, 33).has_value());
    EXPECT_FALSE(row_bytes(GgmlType::f64, UINT64_MAX).has_value());
    EXPECT_EQ(row_bytes(GgmlType::f32, 0), 0u);
}
