// The test kit's format cases (tests/support/format_cases.hpp) as the tests load them, from the
// build's cache, are what llama.cpp makes afresh: the cache can go stale only by failing here.
#include "format_cases.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gguf_test_support.hpp"

namespace gguftool::testkit {
namespace {

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
        EXPECT_TRUE(same_bits(cached[i].want, fresh[i].want, Nans::exact));  // NaN payloads too
    }
}

}  // namespace
}  // namespace gguftool::testkit
