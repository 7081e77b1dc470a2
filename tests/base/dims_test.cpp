// onnx_shape: GGUF dims (ne[0] first) to ONNX's row-major shape; no dims is a scalar.
#include "gguftool/dims.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "gguftool/error.hpp"

namespace gguftool {
namespace {

TEST(OnnxShape, RankZeroIsAScalar) {
    EXPECT_EQ(onnx_shape({}), std::vector<int64_t>{});
}

TEST(OnnxShape, RankOne) {
    const std::vector<uint64_t> ne = {7};
    EXPECT_EQ(onnx_shape(ne), (std::vector<int64_t>{7}));
    const std::vector<uint64_t> one = {1};
    EXPECT_EQ(onnx_shape(one), (std::vector<int64_t>{1}));  // [1], not a scalar
}

TEST(OnnxShape, RankFourIsReversed) {
    const std::vector<uint64_t> ne = {256, 3, 1, 2};  // ne0 varies fastest
    EXPECT_EQ(onnx_shape(ne), (std::vector<int64_t>{2, 1, 3, 256}));
}

TEST(OnnxShape, DimAboveInt64IsAnError) {
    const std::vector<uint64_t> ne = {uint64_t(std::numeric_limits<int64_t>::max()) + 1};
    EXPECT_THROW(onnx_shape(ne), Error);
}

}  // namespace
}  // namespace gguftool
