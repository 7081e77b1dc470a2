// Legacy 32-element formats: q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 (formats/SPEC.md).
//
// Every element is an integer code, formed in 8-bit integers, converted to FLOAT once and
// multiplied by the block's d (q4_1, q5_1: then m added). The codes come out in element order:
// the low nibbles of qs (elements 0-15) concatenated with the high nibbles (16-31).
//
// Measured in onnxruntime (q4_0, 16M elements, one thread): subtracting the offset in INT8 before
// the Cast beats subtracting it in FLOAT after (~96 ms against ~116 ms a run), and both beat a
// lookup of each byte in a [256, 2] table of (low - 8, high - 8) followed by a Transpose to
// element order (~140 ms with a FLOAT or an INT8 table): onnxruntime's Gather costs ~7-14 ns an
// index, its byte operations well under 1 ns an element.
#include <cstddef>
#include <string>

#include "formats.hpp"
#include "formats/blocks.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockQ4_0;
using formats::BlockQ4_1;
using formats::BlockQ5_0;
using formats::BlockQ5_1;
using formats::BlockQ8_0;
using formats::BlockQ8_1;

// The 32 4-bit codes of a block's qs: [nb, 32] UINT8.
template <class Block>
Value nibble_codes(LoweringBuilder &b, const Value &blocks) {
    return nibbles(b, b.bytes(blocks, offsetof(Block, qs), sizeof(Block::qs)), 1);
}

// The 5-bit codes of q5_0 and q5_1, [nb, 32] UINT8: the nibble plus bit_j(qh) << 4 (bits 0-3 and
// 4, so no carry), the latter by a lookup of each qh byte in a [256, 8] table.
template <class Block>
Value five_bit_codes(LoweringBuilder &b, const Value &blocks) {
    static_assert(sizeof(Block::qh) * 8 == sizeof(Block::qs) * 2);
    const Value table = b.table("q5_fifth_bits", DataType::uint8, {256, 8}, [] {
        std::string v(256 * 8, '\0');
        for (size_t i = 0; i < 256; ++i)
            for (size_t k = 0; k < 8; ++k) v[8 * i + k] = char(((i >> k) & 1) << 4);
        return v;
    });
    const Value qh = b.bytes(blocks, offsetof(Block, qh), sizeof(Block::qh));
    const Value fifth =
        b.reshape(b.gather(table, as_index(b, qh)), {-1, int64_t(sizeof(Block::qh) * 8)});
    return b.add(nibble_codes<Block>(b, blocks), fifth);
}

// (q - offset) * d for UINT8 codes q below 128: the difference formed in INT8, then one Cast and
// one Mul.
Value centered_times(LoweringBuilder &b, const Value &codes, unsigned offset, const Value &d) {
    const Value q = b.sub(b.cast(codes, DataType::int8), b.scalar(DataType::int8, offset));
    return b.mul(b.cast(q, DataType::float32), d);
}

// q * d + m for UINT8 codes q: two roundings, one Mul and one Add.
Value times_plus(LoweringBuilder &b, const Value &codes, const Value &d, const Value &m) {
    return b.add(b.mul(b.cast(codes, DataType::float32), d), m);
}

// qs[j] * d for the int8 codes of q8_0 and q8_1: the bytes as INT8 (Cast from UINT8 wraps modulo
// 256, which is the two's complement reading), then FLOAT.
template <class Block>
Value int8_times_d(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(Block, d));
    const Value qs = b.bytes(blocks, offsetof(Block, qs), sizeof(Block::qs));
    return b.mul(b.cast(b.cast(qs, DataType::int8), DataType::float32), d);
}

// y[j] = ((qs[j] & 15) - 8) * d, y[j + 16] = ((qs[j] >> 4) - 8) * d.
Value lower_q4_0(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ4_0, d));
    return centered_times(b, nibble_codes<BlockQ4_0>(b, blocks), 8, d);
}

// y[j] = (qs[j] & 15) * d + m, y[j + 16] = (qs[j] >> 4) * d + m.
Value lower_q4_1(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ4_1, d));
    const Value m = f16_field(b, blocks, offsetof(BlockQ4_1, m));
    return times_plus(b, nibble_codes<BlockQ4_1>(b, blocks), d, m);
}

// y[j] = ((nibble_j | bit_j(qh) << 4) - 16) * d.
Value lower_q5_0(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ5_0, d));
    return centered_times(b, five_bit_codes<BlockQ5_0>(b, blocks), 16, d);
}

// y[j] = (nibble_j | bit_j(qh) << 4) * d + m.
Value lower_q5_1(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ5_1, d));
    const Value m = f16_field(b, blocks, offsetof(BlockQ5_1, m));
    return times_plus(b, five_bit_codes<BlockQ5_1>(b, blocks), d, m);
}

// y[j] = qs[j] * d.
Value lower_q8_0(LoweringBuilder &b, const Value &blocks) {
    return int8_times_d<BlockQ8_0>(b, blocks);
}

// y[j] = qs[j] * d; s is not read.
Value lower_q8_1(LoweringBuilder &b, const Value &blocks) {
    return int8_times_d<BlockQ8_1>(b, blocks);
}

}  // namespace

std::span<const Lowering> legacy_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::q4_0, lower_q4_0}, {GgmlType::q4_1, lower_q4_1}, {GgmlType::q5_0, lower_q5_0},
        {GgmlType::q5_1, lower_q5_1}, {GgmlType::q8_0, lower_q8_0}, {GgmlType::q8_1, lower_q8_1},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
