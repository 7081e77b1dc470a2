// K-quant formats, 256 elements per block: q2_K q3_K q4_K q5_K q6_K q8_K (formats/SPEC.md).
//
// Per block, the sub-block scales are unpacked with integer ops on the few scale bytes and
// multiplied by the block's d (and dmin) once: [nb, groups, 1], broadcast over each sub-block.
// The element codes come out in element order without a Transpose: the code bytes are reshaped so
// that the 32-byte run serving several runs of elements has an axis of size 1, and the bit fields
// for those runs are taken along it (per field a shift and a mask, then Concat; or one broadcast
// op against a constant of shifts or masks). Per element the work is UINT8 bit operations, one
// Cast to FLOAT and the FLOAT arithmetic of formats/SPEC.md; where a code is put together from
// two fields (q3_K, q5_K, q6_K) its parts are added in FLOAT, exactly (small integers), which
// costs fewer passes over the elements than INT32 arithmetic and a Cast.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockQ2_K;
using formats::BlockQ3_K;
using formats::BlockQ4_K;
using formats::BlockQ5_K;
using formats::BlockQ6_K;
using formats::BlockQ8_K;

constexpr DataType u8 = DataType::uint8;
constexpr DataType i32 = DataType::int32;
constexpr DataType f32 = DataType::float32;

// A small UINT8 constant of shape `dims` (shared by content).
Value u8_constant(LoweringBuilder &b, const std::vector<int64_t> &dims,
                  const std::vector<uint8_t> &v) {
    const std::string name = fmt::format("uint8[{}]@[{}]", fmt::join(v, ","), fmt::join(dims, ","));
    return b.table(name, u8, dims, [&] { return std::string(v.begin(), v.end()); });
}

// FLOAT of an integer tensor.
Value to_float(LoweringBuilder &b, const Value &x) {
    return b.cast(x, f32);
}

// The signed 8-bit values of UINT8 bytes (any shape), as FLOAT (Cast to INT8 keeps the low 8 bits).
Value int8_values(LoweringBuilder &b, const Value &bytes) {
    return to_float(b, b.cast(bytes, DataType::int8));
}

// The k-bit field at bit `pos` of UINT8 `x`, moved to bit `to`, every other bit 0: one shift and a
// mask (left out where the shift clears the other bits), from opset 18; Mod before.
Value field_to(LoweringBuilder &b, const Value &x, unsigned pos, unsigned k, unsigned to) {
    if (b.opset() < 18) return b.shift_left(b.bit_field(x, u8, pos, k), u8, to);
    const bool right = pos > to;
    const Value t = right ? b.shift_right(x, u8, pos - to) : b.shift_left(x, u8, to - pos);
    const bool below = right ? to > 0 : pos > 0;
    const bool above = right ? pos + k < 8 : to + k < 8;
    if (!below && !above) return t;
    return b.op("BitwiseAnd", {t, b.scalar(u8, double(((1u << k) - 1) << to))});
}

// The fields at `positions` of UINT8 `x` moved to bit `to`, concatenated along `axis` (where `x`
// has size 1).
Value fields_to(LoweringBuilder &b, const Value &x, int64_t axis,
                const std::vector<unsigned> &positions, unsigned k, unsigned to) {
    std::vector<Value> parts;
    for (unsigned pos : positions) parts.push_back(field_to(b, x, pos, k, to));
    return b.concat(parts, axis);
}

// The four 2-bit fields of UINT8 `x` (bits 0-1 first) along a new axis: `x` has rank `rank` with
// size 1 at axis rank - 2. One broadcast BitShift by the four offsets, then the mask.
Value crumbs(LoweringBuilder &b, const Value &x, size_t rank) {
    std::vector<int64_t> dims(rank, 1);
    dims[rank - 2] = 4;
    const Value shifted = b.op("BitShift", {x, u8_constant(b, dims, {0, 2, 4, 6})},
                               {LoweringBuilder::attr("direction", std::string_view("RIGHT"))});
    return b.low_bits(shifted, u8, 2);
}

// a + b as FLOAT from UINT8 codes with disjoint bits: exact, both are small integers.
Value join_codes(LoweringBuilder &b, const Value &low, const Value &high) {
    return b.add(to_float(b, low), to_float(b, high));
}

// The adjacent f16 fields d and dmin at `offset` as FLOAT [nb, 1] each: one conversion.
struct ScaleAndMin {
    Value d, dmin;
};
ScaleAndMin d_and_dmin(LoweringBuilder &b, const Value &blocks, size_t offset) {
    const Value both = f16_from_int32(b, u16_words(b, blocks, offset, 2));
    return {b.slice(both, 1, 0, 1), b.slice(both, 1, 1, 2)};
}

// d × sc as FLOAT [nb, groups, 1] from FLOAT scales [nb, groups] (one rounding).
Value scaled(LoweringBuilder &b, const Value &sc, const Value &d, int64_t groups) {
    return b.reshape(b.mul(sc, d), {-1, groups, 1});
}
// The same from integer scales.
Value sub_block_scales(LoweringBuilder &b, const Value &sc, const Value &d, int64_t groups) {
    return scaled(b, to_float(b, sc), d, groups);
}

// q4_K and q5_K's get_scale_min_k4 on bytes `s` [nb, 12]: the 8 scales and the 8 minimums as INT32
// [nb, 8] each.
struct ScalesMins {
    Value sc, m;
};
ScalesMins scale_min_k4(LoweringBuilder &b, const Value &s) {
    const Value s0 = b.slice(s, 1, 0, 4), s4 = b.slice(s, 1, 4, 8), s8 = b.slice(s, 1, 8, 12);
    // The six-bit values of j >= 4: low four bits from s[j + 4], top two from the spare top bits.
    auto high_half = [&](const Value &low4, const Value &top_bits_of) {
        return b.add(b.cast(low4, i32), b.cast(field_to(b, top_bits_of, 6, 2, 4), i32));
    };
    const Value sc =
        b.concat({b.cast(b.low_bits(s0, u8, 6), i32), high_half(b.low_bits(s8, u8, 4), s0)}, 1);
    const Value m =
        b.concat({b.cast(b.low_bits(s4, u8, 6), i32), high_half(b.shift_right(s8, u8, 4), s4)}, 1);
    return {sc, m};
}

// The nibbles of `qs` [nb, 128] in q4_K/q5_K element order: [nb, 8, 32] UINT8, sub-block 2g the
// low nibbles of qs[32g ... 32g + 31], sub-block 2g + 1 their high nibbles.
Value nibbles_k(LoweringBuilder &b, const Value &qs) {
    return b.reshape(fields_to(b, b.reshape(qs, {-1, 4, 1, 32}), 2, {0, 4}, 4, 0), {-1, 8, 32});
}

// The 2-bit codes of `qs` [nb, 64] in q2_K/q3_K element order: [nb, 8, 32] UINT8, run 4h + j the
// bits 2j ... 2j + 1 of qs[32h ... 32h + 31].
Value crumbs_k(LoweringBuilder &b, const Value &qs) {
    return b.reshape(crumbs(b, b.reshape(qs, {-1, 2, 1, 32}), 4), {-1, 8, 32});
}

// Bit m of bytes[l] for run m = 0 ... 7 as BOOL [nb, 8, 32], from `bytes` [nb, 32]: one broadcast
// BitwiseAnd with the eight one-bit masks (before opset 18 a broadcast shift and Mod 2).
Value bit_planes(LoweringBuilder &b, const Value &bytes) {
    const Value x = b.reshape(bytes, {-1, 1, 32});
    const Value bits =
        b.opset() >= 18
            ? b.op("BitwiseAnd", {x, u8_constant(b, {1, 8, 1}, {1, 2, 4, 8, 16, 32, 64, 128})})
            : b.low_bits(b.op("BitShift", {x, u8_constant(b, {1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7})},
                              {LoweringBuilder::attr("direction", std::string_view("RIGHT"))}),
                         u8, 1);
    return b.cast(bits, DataType::bool_);
}

// UINT8 `on` where `bits` is true, `off` elsewhere.
Value select(LoweringBuilder &b, const Value &bits, uint8_t on, uint8_t off) {
    return b.where(bits, b.scalar(u8, on), b.scalar(u8, off));
}

// y = q × dl − ml per sub-block: `q` FLOAT [nb, groups, size], dl and ml [nb, groups, 1].
Value scale_and_shift(LoweringBuilder &b, const Value &q, const Value &dl, const Value &ml) {
    return b.sub(b.mul(q, dl), ml);
}

// dl_i = d × (scales[i] & 15), ml_i = dmin × (scales[i] >> 4); y = q × dl_i − ml_i.
Value lower_q2_k(LoweringBuilder &b, const Value &blocks) {
    static_assert(offsetof(BlockQ2_K, dmin) == offsetof(BlockQ2_K, d) + sizeof(BlockQ2_K::d));
    const auto [d, dmin] = d_and_dmin(b, blocks, offsetof(BlockQ2_K, d));
    const Value sc = b.bytes(blocks, offsetof(BlockQ2_K, scales), sizeof(BlockQ2_K::scales));
    const Value dl = sub_block_scales(b, b.low_bits(sc, u8, 4), d, 16);
    const Value ml = sub_block_scales(b, b.shift_right(sc, u8, 4), dmin, 16);
    const Value qs = b.bytes(blocks, offsetof(BlockQ2_K, qs), sizeof(BlockQ2_K::qs));
    const Value q = b.reshape(to_float(b, crumbs_k(b, qs)), {-1, 16, 16});
    return scale_and_shift(b, q, dl, ml);
}

// dl_i = d × (sc[i] − 32) with the six-bit scales unpacked; q = low − (high ? 0 : 4); y = q × dl_i.
Value lower_q3_k(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ3_K, d));
    const Value s = b.bytes(blocks, offsetof(BlockQ3_K, scales), sizeof(BlockQ3_K::scales));
    // Low four bits: scales 0 ... 7 in the low nibbles of s[0 ... 7], 8 ... 15 in the high ones.
    const Value s0 = b.slice(s, 1, 0, 8);
    const Value low4 = b.concat({b.low_bits(s0, u8, 4), b.shift_right(s0, u8, 4)}, 1);
    // Top two bits of scale 4q + k: bits 2q, 2q + 1 of s[8 + k].
    const Value top2 = b.reshape(
        fields_to(b, b.reshape(b.slice(s, 1, 8, 12), {-1, 1, 4}), 1, {0, 2, 4, 6}, 2, 4), {-1, 16});
    const Value sc = b.add(b.cast(low4, i32), b.cast(top2, i32));
    const Value dl = sub_block_scales(b, b.sub(sc, b.scalar(i32, 32)), d, 16);
    const Value low = crumbs_k(b, b.bytes(blocks, offsetof(BlockQ3_K, qs), sizeof(BlockQ3_K::qs)));
    const Value high =
        bit_planes(b, b.bytes(blocks, offsetof(BlockQ3_K, hmask), sizeof(BlockQ3_K::hmask)));
    // q = low − (high ? 0 : 4): the INT8 byte 252 is −4; the sum is exact in FLOAT.
    const Value q = b.add(to_float(b, low), int8_values(b, select(b, high, 0, 252)));
    return b.mul(b.reshape(q, {-1, 16, 16}), dl);
}

// q4_K's and q5_K's sub-block scales and minimums, d_j = d × sc_j and m'_j = dmin × m_j
// (get_scale_min_k4), FLOAT [nb, 8, 1] each.
template <class Block>
std::pair<Value, Value> k4_scales(LoweringBuilder &b, const Value &blocks) {
    static_assert(offsetof(Block, dmin) == offsetof(Block, d) + sizeof(Block::d));
    const auto [d, dmin] = d_and_dmin(b, blocks, offsetof(Block, d));
    const ScalesMins sm =
        scale_min_k4(b, b.bytes(blocks, offsetof(Block, scales), sizeof(Block::scales)));
    return {sub_block_scales(b, sm.sc, d, 8), sub_block_scales(b, sm.m, dmin, 8)};
}

// d_j = d × sc_j, m'_j = dmin × m_j (get_scale_min_k4); y = nibble × d_j − m'_j.
Value lower_q4_k(LoweringBuilder &b, const Value &blocks) {
    const auto [dl, ml] = k4_scales<BlockQ4_K>(b, blocks);
    const Value qs = b.bytes(blocks, offsetof(BlockQ4_K, qs), sizeof(BlockQ4_K::qs));
    return scale_and_shift(b, to_float(b, nibbles_k(b, qs)), dl, ml);
}

// As q4_K, the code's fifth bit from qh: code = nibble + 16 × bit_m(qh[l]) for run m.
Value lower_q5_k(LoweringBuilder &b, const Value &blocks) {
    const auto [dl, ml] = k4_scales<BlockQ5_K>(b, blocks);
    const Value low = nibbles_k(b, b.bytes(blocks, offsetof(BlockQ5_K, qs), sizeof(BlockQ5_K::qs)));
    const Value high =
        bit_planes(b, b.bytes(blocks, offsetof(BlockQ5_K, qh), sizeof(BlockQ5_K::qh)));
    return scale_and_shift(b, join_codes(b, low, select(b, high, 16, 0)), dl, ml);
}

// dl_i = d × scales[i]; q = low nibble | high bits << 4; y = (q − 32) × dl_i.
Value lower_q6_k(LoweringBuilder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ6_K, d));
    const Value scales =
        int8_values(b, b.bytes(blocks, offsetof(BlockQ6_K, scales), sizeof(BlockQ6_K::scales)));
    const Value dl = scaled(b, scales, d, 16);
    // ql as [nb, h, 1, c, 32] (c: A = ql[64h + l] or C = ql[64h + 32 + l]); the nibble n of c is
    // quarter 2n + c of half h.
    const Value ql = b.reshape(b.bytes(blocks, offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql)),
                               {-1, 2, 1, 2, 32});
    const Value low = b.reshape(fields_to(b, ql, 2, {0, 4}, 4, 0), {-1, 8, 32});
    // Bits 2k, 2k + 1 of qh[32h + l] for quarter k of half h.
    const Value qh =
        b.reshape(b.bytes(blocks, offsetof(BlockQ6_K, qh), sizeof(BlockQ6_K::qh)), {-1, 2, 1, 32});
    const Value high = b.reshape(fields_to(b, qh, 2, {0, 2, 4, 6}, 2, 4), {-1, 8, 32});
    // q − 32, exact in FLOAT.
    const Value q = b.sub(join_codes(b, low, high), b.scalar(f32, 32));
    return b.mul(b.reshape(q, {-1, 16, 16}), dl);
}

// y = qs[j] × d, d a binary32 field.
Value lower_q8_k(LoweringBuilder &b, const Value &blocks) {
    const Value d = f32_field(b, blocks, offsetof(BlockQ8_K, d));
    const Value qs = b.bytes(blocks, offsetof(BlockQ8_K, qs), sizeof(BlockQ8_K::qs));
    return b.mul(int8_values(b, qs), d);
}

}  // namespace

std::span<const Lowering> kquant_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::q2_k, lower_q2_k}, {GgmlType::q3_k, lower_q3_k}, {GgmlType::q4_k, lower_q4_k},
        {GgmlType::q5_k, lower_q5_k}, {GgmlType::q6_k, lower_q6_k}, {GgmlType::q8_k, lower_q8_k},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
