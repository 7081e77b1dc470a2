// Ternary formats: tq1_0 tq2_0 (formats/SPEC.md): (t - 1) * d for codes t.
#include <cstddef>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockTq1_0;
using formats::BlockTq2_0;

constexpr unsigned kTq1Digits = 5;  // base-3 digits per qs byte
constexpr unsigned kQhDigits = 4;   // per qh byte

// (t - 1) * d for UINT8 codes t (0-3) of any shape and d broadcast to them: t - 1 in INT8, then
// one Cast and one Mul.
Value ternary_times(LoweringBuilder &b, const Value &codes, const Value &d) {
    const Value t = b.sub(b.cast(codes, DataType::int8), b.scalar(DataType::int8, 1));
    return b.mul(b.cast(t, DataType::float32), d);
}

// Digit n of the tq1_0 bytes x (formats/SPEC.md) from t = (x * 3^n) mod 256: (t * 3) >> 8 is 1
// for t >= 86 (3 * 85 < 256 <= 3 * 86) plus 1 for t >= 171 (3 * 170 < 512 <= 3 * 171). Each step
// is a UINT8 Min, Sub or Add, exact: a = max(t - 85, 0) = t - min(t, 85), then
// digit = min(a, 1) + min(max(a - 85, 0), 1).
Value tq1_digit(LoweringBuilder &b, const Value &t) {
    const DataType u8 = DataType::uint8;
    auto min = [&](const Value &x, int v) { return b.op("Min", {x, b.scalar(u8, v)}); };
    auto above_85 = [&](const Value &x) { return b.sub(x, min(x, 85)); };
    const Value a = above_85(t);
    return b.add(min(a, 1), min(above_85(a), 1));
}

// t = (x * 3^n) mod 256 for the `count` bytes x at `offset`, n = 0 .. digits - 1: one [nb, count]
// UINT8 tensor per n. UINT8 products wrap modulo 256, which is the 8-bit product formats/SPEC.md
// defines; t for n + 1 is 3 times t for n.
std::vector<Value> tq1_products(LoweringBuilder &b, const Value &blocks, size_t offset,
                                size_t count, unsigned digits) {
    std::vector<Value> t{b.bytes(blocks, offset, count)};
    while (t.size() < digits) t.push_back(b.mul(t.back(), b.scalar(DataType::uint8, 3)));
    return t;
}

// Elements 0-159: digit n of qs[m] (m < 32) is element 32n + m; 160-239: digit n of qs[32 + m]
// (m < 16) is 160 + 16n + m; 240-255: digit n < 4 of qh[m] is 240 + 4n + m. y = (digit - 1) * d.
// The products come digit-major, so one Concat puts them in element order. (Measured in
// onnxruntime: faster than a lookup of each byte in a [256, 5] table of digits and three
// Transposes to element order, ~123 against ~139 ms for 16M elements on one thread.)
Value lower_tq1_0(LoweringBuilder &b, const Value &blocks) {
    constexpr size_t kQs = offsetof(BlockTq1_0, qs), kQh = offsetof(BlockTq1_0, qh);
    constexpr size_t kWide = 32;  // the qs bytes whose digits are 32 elements apart
    constexpr size_t kNarrow = sizeof(BlockTq1_0::qs) - kWide;
    static_assert((kWide + kNarrow) * kTq1Digits + sizeof(BlockTq1_0::qh) * kQhDigits ==
                  formats::kBlockElements<BlockTq1_0>);
    std::vector<Value> parts = tq1_products(b, blocks, kQs, kWide, kTq1Digits);
    for (const Value &t : tq1_products(b, blocks, kQs + kWide, kNarrow, kTq1Digits))
        parts.push_back(t);
    for (const Value &t : tq1_products(b, blocks, kQh, sizeof(BlockTq1_0::qh), kQhDigits))
        parts.push_back(t);
    const Value digits = tq1_digit(b, b.concat(parts, 1));  // [nb, 256] in element order
    return ternary_times(b, digits, f16_field(b, blocks, offsetof(BlockTq1_0, d)));
}

// Element 128h + 32j + m has code t = (qs[32h + m] >> 2j) & 3; y = (t - 1) * d.
Value lower_tq2_0(LoweringBuilder &b, const Value &blocks) {
    constexpr int64_t kHalves = 2, kRun = sizeof(BlockTq2_0::qs) / kHalves;
    const Value qs = b.reshape(b.bytes(blocks, offsetof(BlockTq2_0, qs), sizeof(BlockTq2_0::qs)),
                               {-1, kHalves, 1, kRun});
    std::vector<Value> fields;
    for (unsigned j = 0; j < 4; ++j) fields.push_back(b.bit_field(qs, DataType::uint8, 2 * j, 2));
    const Value codes = b.concat(fields, 2);  // [nb, 2, 4, 32]
    const Value d = b.reshape(f16_field(b, blocks, offsetof(BlockTq2_0, d)), {-1, 1, 1, 1});
    return ternary_times(b, codes, d);
}

}  // namespace

std::span<const Lowering> ternary_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::tq1_0, lower_tq1_0},
        {GgmlType::tq2_0, lower_tq2_0},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
