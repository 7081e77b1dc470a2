// K-quant formats, 256 elements per block: q2_K q3_K q4_K q5_K q6_K q8_K (formats/SPEC.md).
//
// Per block, the sub-block scales are unpacked with integer ops on the few scale bytes and
// multiplied by the block's d (and dmin) once: [nb, groups, 1], broadcast over each sub-block. The
// element codes come out in element order without a Transpose: a byte array reshaped so that the
// bit fields it holds for consecutive runs are one axis, shifted by a constant tensor of shift
// counts along that axis (one broadcast BitShift), then masked.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <string>
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
Value u8_constant(Builder &b, const std::vector<int64_t> &dims, const std::vector<uint8_t> &v) {
    const std::string name = fmt::format("uint8[{}]@[{}]", fmt::join(v, ","), fmt::join(dims, ","));
    return b.table(name, u8, dims, [&] { return std::string(v.begin(), v.end()); });
}

// The `k`-bit fields of UINT8 `x` at bit offsets `shifts`, along a new axis: `x` has shape `dims`
// with a 1 at `axis`; the result has shifts.size() there, field f = (x >> shifts[f]) & (2^k - 1).
Value fields(Builder &b, const Value &x, size_t rank, size_t axis,
             const std::vector<uint8_t> &shifts, unsigned k) {
    std::vector<int64_t> dims(rank, 1);
    dims[axis] = int64_t(shifts.size());
    const Value shifted = b.op("BitShift", {x, u8_constant(b, dims, shifts)},
                               {Builder::attr("direction", std::string_view("RIGHT"))});
    return b.low_bits(shifted, u8, k);
}

// FLOAT of an integer tensor.
Value to_float(Builder &b, const Value &x) {
    return b.cast(x, f32);
}

// The signed 8-bit values of UINT8 bytes (any shape), as FLOAT: a lookup.
Value int8_values(Builder &b, const Value &bytes) {
    std::vector<float> v(256);
    for (int i = 0; i < 256; ++i) v[size_t(i)] = float(int8_t(uint8_t(i)));
    return b.gather(float_table(b, "int8_to_f32", {256}, v), as_index(b, bytes));
}

// d × sc as FLOAT [nb, groups, 1] from FLOAT scales [nb, groups] (one rounding).
Value scaled(Builder &b, const Value &sc, const Value &d, int64_t groups) {
    return b.reshape(b.mul(sc, d), {-1, groups, 1});
}
// The same from integer scales.
Value sub_block_scales(Builder &b, const Value &sc, const Value &d, int64_t groups) {
    return scaled(b, to_float(b, sc), d, groups);
}

// q4_K and q5_K's get_scale_min_k4 on bytes `s` [nb, 12]: the 8 scales and the 8 minimums as INT32
// [nb, 8] each.
struct ScalesMins {
    Value sc, m;
};
ScalesMins scale_min_k4(Builder &b, const Value &s) {
    const Value s0 = b.slice(s, 1, 0, 4), s4 = b.slice(s, 1, 4, 8), s8 = b.slice(s, 1, 8, 12);
    // The six-bit values of j >= 4: low four bits from s[j + 4], top two from the spare top bits.
    auto high_half = [&](const Value &low4, const Value &top_bits_of) {
        const Value top = b.shift_left(b.shift_right(top_bits_of, u8, 6), u8, 4);
        return b.add(b.cast(low4, i32), b.cast(top, i32));
    };
    const Value sc =
        b.concat({b.cast(b.low_bits(s0, u8, 6), i32), high_half(b.low_bits(s8, u8, 4), s0)}, 1);
    const Value m =
        b.concat({b.cast(b.low_bits(s4, u8, 6), i32), high_half(b.shift_right(s8, u8, 4), s4)}, 1);
    return {sc, m};
}

// The nibbles of `qs` [nb, 128] in q4_K/q5_K element order: [nb, 8, 32] UINT8, sub-block 2g the
// low nibbles of qs[32g ... 32g + 31], sub-block 2g + 1 their high nibbles.
Value nibbles_k(Builder &b, const Value &qs) {
    return b.reshape(fields(b, b.reshape(qs, {-1, 4, 1, 32}), 4, 2, {0, 4}, 4), {-1, 8, 32});
}

// The 2-bit codes of `qs` [nb, 64] in q2_K/q3_K element order: [nb, 8, 32] UINT8, run 4h + j the
// bits 2j ... 2j + 1 of qs[32h ... 32h + 31].
Value crumbs_k(Builder &b, const Value &qs) {
    return b.reshape(fields(b, b.reshape(qs, {-1, 2, 1, 32}), 4, 2, {0, 2, 4, 6}, 2), {-1, 8, 32});
}

// Bit m of bytes[l] for run m = 0 ... 7: [nb, 8, 32] UINT8 from `bytes` [nb, 32].
Value bit_planes(Builder &b, const Value &bytes) {
    return fields(b, b.reshape(bytes, {-1, 1, 32}), 3, 1, {0, 1, 2, 3, 4, 5, 6, 7}, 1);
}

// y = q × dl − ml per sub-block: `q` FLOAT [nb, groups, size], dl and ml [nb, groups, 1].
Value scale_and_shift(Builder &b, const Value &q, const Value &dl, const Value &ml) {
    return b.sub(b.mul(q, dl), ml);
}

}  // namespace

// dl_i = d × (scales[i] & 15), ml_i = dmin × (scales[i] >> 4); y = q × dl_i − ml_i.
Value lower_q2_k(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ2_K, d));
    const Value dmin = f16_field(b, blocks, offsetof(BlockQ2_K, dmin));
    const Value sc = b.bytes(blocks, offsetof(BlockQ2_K, scales), sizeof(BlockQ2_K::scales));
    const Value dl = sub_block_scales(b, b.low_bits(sc, u8, 4), d, 16);
    const Value ml = sub_block_scales(b, b.shift_right(sc, u8, 4), dmin, 16);
    const Value qs = b.bytes(blocks, offsetof(BlockQ2_K, qs), sizeof(BlockQ2_K::qs));
    const Value q = b.reshape(to_float(b, crumbs_k(b, qs)), {-1, 16, 16});
    return scale_and_shift(b, q, dl, ml);
}

// dl_i = d × (sc[i] − 32) with the six-bit scales unpacked; q = low − (high ? 0 : 4); y = q × dl_i.
Value lower_q3_k(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ3_K, d));
    const Value s = b.bytes(blocks, offsetof(BlockQ3_K, scales), sizeof(BlockQ3_K::scales));
    // Low four bits: scales 0 ... 7 in the low nibbles of s[0 ... 7], 8 ... 15 in the high ones.
    const Value s0 = b.slice(s, 1, 0, 8);
    const Value low4 = b.concat({b.low_bits(s0, u8, 4), b.shift_right(s0, u8, 4)}, 1);
    // Top two bits of scale 4q + k: bits 2q, 2q + 1 of s[8 + k].
    const Value top2 = b.reshape(
        fields(b, b.reshape(b.slice(s, 1, 8, 12), {-1, 1, 4}), 3, 1, {0, 2, 4, 6}, 2), {-1, 16});
    const Value sc = b.add(b.cast(low4, i32), b.cast(b.shift_left(top2, u8, 4), i32));
    const Value dl = sub_block_scales(b, b.sub(sc, b.scalar(i32, 32)), d, 16);
    const Value low = crumbs_k(b, b.bytes(blocks, offsetof(BlockQ3_K, qs), sizeof(BlockQ3_K::qs)));
    const Value high =
        bit_planes(b, b.bytes(blocks, offsetof(BlockQ3_K, hmask), sizeof(BlockQ3_K::hmask)));
    // q = low + 4 × high − 4, in INT32.
    const Value q = b.add(b.cast(low, i32), b.cast(b.shift_left(high, u8, 2), i32));
    const Value q4 = b.sub(q, b.scalar(i32, 4));
    return b.mul(b.reshape(to_float(b, q4), {-1, 16, 16}), dl);
}

// d_j = d × sc_j, m'_j = dmin × m_j (get_scale_min_k4); y = nibble × d_j − m'_j.
Value lower_q4_k(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ4_K, d));
    const Value dmin = f16_field(b, blocks, offsetof(BlockQ4_K, dmin));
    const ScalesMins sm =
        scale_min_k4(b, b.bytes(blocks, offsetof(BlockQ4_K, scales), sizeof(BlockQ4_K::scales)));
    const Value dl = sub_block_scales(b, sm.sc, d, 8);
    const Value ml = sub_block_scales(b, sm.m, dmin, 8);
    const Value qs = b.bytes(blocks, offsetof(BlockQ4_K, qs), sizeof(BlockQ4_K::qs));
    return scale_and_shift(b, to_float(b, nibbles_k(b, qs)), dl, ml);
}

// As q4_K, the code's fifth bit from qh: code = nibble + 16 × bit_m(qh[l]) for run m.
Value lower_q5_k(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ5_K, d));
    const Value dmin = f16_field(b, blocks, offsetof(BlockQ5_K, dmin));
    const ScalesMins sm =
        scale_min_k4(b, b.bytes(blocks, offsetof(BlockQ5_K, scales), sizeof(BlockQ5_K::scales)));
    const Value dl = sub_block_scales(b, sm.sc, d, 8);
    const Value ml = sub_block_scales(b, sm.m, dmin, 8);
    const Value low = nibbles_k(b, b.bytes(blocks, offsetof(BlockQ5_K, qs), sizeof(BlockQ5_K::qs)));
    const Value high =
        bit_planes(b, b.bytes(blocks, offsetof(BlockQ5_K, qh), sizeof(BlockQ5_K::qh)));
    const Value q = b.add(b.cast(low, i32), b.cast(b.shift_left(high, u8, 4), i32));
    return scale_and_shift(b, to_float(b, q), dl, ml);
}

// dl_i = d × scales[i]; q = low nibble | high bits << 4; y = (q − 32) × dl_i.
Value lower_q6_k(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ6_K, d));
    const Value scales =
        int8_values(b, b.bytes(blocks, offsetof(BlockQ6_K, scales), sizeof(BlockQ6_K::scales)));
    const Value dl = scaled(b, scales, d, 16);
    // ql as [nb, h, 1, c, 32] (c: A = ql[64h + l] or C = ql[64h + 32 + l]); the nibble n of c is
    // quarter 2n + c of half h.
    const Value ql = b.reshape(b.bytes(blocks, offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql)),
                               {-1, 2, 1, 2, 32});
    const Value low = b.reshape(fields(b, ql, 5, 2, {0, 4}, 4), {-1, 8, 32});
    // Bits 2k, 2k + 1 of qh[32h + l] for quarter k of half h.
    const Value qh =
        b.reshape(b.bytes(blocks, offsetof(BlockQ6_K, qh), sizeof(BlockQ6_K::qh)), {-1, 2, 1, 32});
    const Value high = b.reshape(fields(b, qh, 4, 2, {0, 2, 4, 6}, 2), {-1, 8, 32});
    const Value q = b.add(b.cast(low, i32), b.cast(b.shift_left(high, u8, 4), i32));
    const Value q32 = b.sub(q, b.scalar(i32, 32));
    return b.mul(b.reshape(to_float(b, q32), {-1, 16, 16}), dl);
}

// y = qs[j] × d, d a binary32 field.
Value lower_q8_k(Builder &b, const Value &blocks) {
    const Value d = f32_field(b, blocks, offsetof(BlockQ8_K, d));
    const Value qs = b.bytes(blocks, offsetof(BlockQ8_K, qs), sizeof(BlockQ8_K::qs));
    return b.mul(int8_values(b, qs), d);
}

}  // namespace gguftool::lower::detail
