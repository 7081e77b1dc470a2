// The test kit's format cases (tests/support/format_cases.hpp) as the tests load them, from the
// build's cache, are what llama.cpp makes afresh: the cache can go stale only by failing here.
#include "format_cases.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gguftool::testkit {
namespace {

std::vector<uint32_t> bits(const std::vector<float> &v) {
    std::vector<uint32_t> b(v.size());
    for (size_t i = 0; i < v.size(); ++i) std::memcpy(&b[i], &v[i], 4);
    return b;
}

TEST(FormatCases, CacheHoldsWhatLlamaMakes) {
    const std::vector<FormatCase> &cached = format_cases();
    const std::vector<FormatCase> fresh = make_format_cases();
    ASSERT_EQ(cached.size(), fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i) {
        SCOPED_TRACE(fresh[i].name);
        EXPECT_EQ(cached[i].name, fresh[i].name);
        EXPECT_EQ(cached[i].type, fresh[i].type);
        EXPECT_EQ(cached[i].shape, fresh[i].shape);
        EXPECT_EQ(cached[i].bytes, fresh[i].bytes);
        EXPECT_EQ(bits(cached[i].want), bits(fresh[i].want));  // NaN payloads too
    }
}

}  // namespace
}  // namespace gguftool::testkit
