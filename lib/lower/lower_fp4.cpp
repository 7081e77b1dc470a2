// FP4 formats: mxfp4 nvfp4 (formats/SPEC.md): E2M1x2[code] * d with a halved e8m0 or ue4m3 scale.
//
// A lookup of each qs byte in a [256, 2] FLOAT table gives E2M1x2 of its low and high nibble; after
// the Mul by the scale, a Transpose puts the low nibbles' values before the high nibbles'.
// (Measured in onnxruntime against computing E2M1x2 with INT8 Min/Sub/Mul arithmetic, 14 operators:
// the lookup is faster.)
#include <cstddef>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"
#include "formats/e2m1_table.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockMxfp4;
using formats::BlockNvfp4;

// E2M1x2[qs & 15] * d and E2M1x2[qs >> 4] * d for UINT8 `qs` of shape [nb, g, n] and FLOAT `d` of
// [nb, g, 1, 1]: [nb, g, 2, n], per group the n low nibbles' values, then the n high nibbles'.
Value e2m1_times(Builder &b, const Value &qs, const Value &d) {
    std::vector<float> v(256 * 2);
    for (unsigned i = 0; i < 256; ++i) {
        v[2 * i] = formats::kE2m1Doubled[i & 15];
        v[2 * i + 1] = formats::kE2m1Doubled[i >> 4];
    }
    const Value pairs = float_table(b, "e2m1x2_nibble_pairs", {256, 2}, v);
    const Value values = b.mul(b.gather(pairs, as_index(b, qs)), d);  // [nb, g, n, 2]
    return b.transpose(values, {0, 1, 3, 2});
}

}  // namespace

// d = e8m0_half(e); y[j] = E2M1x2[qs[j] & 15] * d, y[j + 16] = E2M1x2[qs[j] >> 4] * d.
Value lower_mxfp4(Builder &b, const Value &blocks) {
    const Value e = b.bytes(blocks, offsetof(BlockMxfp4, e), sizeof(BlockMxfp4::e));
    const Value d = b.reshape(e8m0_half(b, e), {-1, 1, 1, 1});
    const Value qs = b.bytes(blocks, offsetof(BlockMxfp4, qs), sizeof(BlockMxfp4::qs));
    return e2m1_times(b, b.reshape(qs, {-1, 1, int64_t(sizeof(BlockMxfp4::qs))}), d);
}

// Four sub-blocks s of 16 elements: d_s = ue4m3_half(d[s]) and the bytes qs[8s .. 8s + 7], low
// nibbles first.
Value lower_nvfp4(Builder &b, const Value &blocks) {
    constexpr int64_t kGroups = sizeof(BlockNvfp4::d);
    const Value sc = b.bytes(blocks, offsetof(BlockNvfp4, d), sizeof(BlockNvfp4::d));
    const Value d = b.reshape(ue4m3_half(b, sc), {-1, kGroups, 1, 1});
    const Value qs = b.bytes(blocks, offsetof(BlockNvfp4, qs), sizeof(BlockNvfp4::qs));
    return e2m1_times(b, b.reshape(qs, {-1, kGroups, int64_t(sizeof(BlockNvfp4::qs)) / kGroups}),
                      d);
}

}  // namespace gguftool::lower::detail
