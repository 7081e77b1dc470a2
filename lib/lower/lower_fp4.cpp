// FP4 formats: mxfp4 nvfp4 (formats/SPEC.md): E2M1x2[code] * d with a halved e8m0 or ue4m3 scale.
//
// E2M1x2 of each pair of neighbouring elements by one lookup keyed by their two nibbles
// (nibble_pair_values, shared with iq4_nl), then the Mul by the scale. (A lookup beats computing
// E2M1x2 with INT8 Min/Sub/Mul arithmetic, 14 operators, in onnxruntime.)
#include <cstddef>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"
#include "formats/e2m1_table.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockMxfp4;
using formats::BlockNvfp4;

// E2M1x2 of rows of n code bytes, [rows, 2, n/2, 2] in element order (low nibbles first).
Value e2m1_values(LoweringBuilder &b, const Value &qs, int64_t n) {
    static constexpr float kBook[16] = {
        formats::kE2m1Doubled[0],  formats::kE2m1Doubled[1],  formats::kE2m1Doubled[2],
        formats::kE2m1Doubled[3],  formats::kE2m1Doubled[4],  formats::kE2m1Doubled[5],
        formats::kE2m1Doubled[6],  formats::kE2m1Doubled[7],  formats::kE2m1Doubled[8],
        formats::kE2m1Doubled[9],  formats::kE2m1Doubled[10], formats::kE2m1Doubled[11],
        formats::kE2m1Doubled[12], formats::kE2m1Doubled[13], formats::kE2m1Doubled[14],
        formats::kE2m1Doubled[15]};
    return nibble_pair_values(b, qs, n, "e2m1x2_by_nibble_pair", kBook);
}

// d = e8m0_half(e); y[j] = E2M1x2[qs[j] & 15] * d, y[j + 16] = E2M1x2[qs[j] >> 4] * d.
Value lower_mxfp4(LoweringBuilder &b, const Value &blocks) {
    const Value e = b.bytes(blocks, offsetof(BlockMxfp4, e), sizeof(BlockMxfp4::e));
    constexpr int64_t n = sizeof(BlockMxfp4::qs);
    const Value qs = b.bytes(blocks, offsetof(BlockMxfp4, qs), n);
    return b.mul(b.reshape(e2m1_values(b, qs, n), {-1, 2 * n}), e8m0_half(b, e));
}

// Four sub-blocks s of 16 elements: d_s = ue4m3_half(d[s]) and the bytes qs[8s .. 8s + 7], low
// nibbles first.
Value lower_nvfp4(LoweringBuilder &b, const Value &blocks) {
    constexpr int64_t kGroups = sizeof(BlockNvfp4::d);
    const Value sc = b.bytes(blocks, offsetof(BlockNvfp4, d), sizeof(BlockNvfp4::d));
    constexpr int64_t n = sizeof(BlockNvfp4::qs) / kGroups;  // bytes per sub-block
    const Value d = b.reshape(ue4m3_half(b, sc), {-1, kGroups, 1});
    const Value qs = b.bytes(blocks, offsetof(BlockNvfp4, qs), sizeof(BlockNvfp4::qs));
    return b.mul(b.reshape(e2m1_values(b, qs, n), {-1, kGroups, 2 * n}), d);
}

}  // namespace

std::span<const Lowering> fp4_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::mxfp4, lower_mxfp4},
        {GgmlType::nvfp4, lower_nvfp4},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
