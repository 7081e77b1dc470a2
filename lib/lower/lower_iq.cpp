// IQ formats: iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m iq4_nl iq4_xs (formats/SPEC.md).
//
// onnxruntime's Gather costs about the same per index whatever the size of the row it copies, so
// the element work is a Gather or two of whole rows from small FLOAT tables and one multiplication
// by the scale:
// - iq2, iq3_s: a group's grid row (8 magnitudes; two 4-element entries for iq3_s) times its row of
//   8 signs (+-1, exact), times the scale. (g * s) * db is ggml's (db * g) negated where s = -1:
//   rounding is symmetric, so db * -g = -(db * g) for every non-NaN db, and a NaN db gives NaN
//   either way.
// - iq3_xxs: one key per 4-element grid entry, 16 * entry + its sign nibble, selects the entry's
//   signed values (a 64 KiB table), times db.
// - iq1: one key per group, grid index | shift sign << 11, selects its 8 values grid + shift (exact
//   sums; a 128 KiB table), times dl.
// - iq4: a key per pair of neighbouring elements (their two nibbles, from two bytes) selects their
//   code-book values, times the scale.
// Integer work (keys, scales) is per group or per sub-block. Bit fields that straddle bytes come
// from per-byte tables or 16-bit windows, on shapes not ending in 1: onnxruntime runs integer
// arithmetic and broadcasts over an inner dimension of 1 element by element.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"
#include "formats/codebooks/iq1_grid.hpp"
#include "formats/codebooks/iq2_grids.hpp"
#include "formats/codebooks/iq3_grids.hpp"
#include "formats/codebooks/iq4_values.hpp"
#include "formats/codebooks/iq_signs.hpp"

namespace gguftool::lower::detail {
namespace {

namespace cb = formats::codebooks;
using formats::BlockIq1_M;
using formats::BlockIq1_S;
using formats::BlockIq2_S;
using formats::BlockIq2_XS;
using formats::BlockIq2_XXS;
using formats::BlockIq3_S;
using formats::BlockIq3_XXS;
using formats::BlockIq4_NL;
using formats::BlockIq4_XS;

constexpr DataType kU8 = DataType::uint8, kI32 = DataType::int32, kF32 = DataType::float32;

// Block structure (formats/SPEC.md, IQ conventions): 8 sub-blocks of 4 groups of 8 elements; an
// iq3 grid entry holds 4 elements.
constexpr int64_t kSubBlocks = 8, kGroups = 4, kGroupSize = 8, kEntrySize = 4;
constexpr int64_t kBlockGroups = kSubBlocks * kGroups, kBlockElements = kBlockGroups * kGroupSize;

template <class Array>
constexpr int64_t count_of(const Array &) {
    return int64_t(std::extent_v<Array>);
}

// A table of the model (shared by name): `rows` rows of `width` values of T (float or int32_t),
// row r = f(r).
template <class T, class F>
Value rows_table(LoweringBuilder &b, const std::string &name, int64_t rows, int64_t width, F f) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, int32_t>);
    return b.table(name, std::is_same_v<T, float> ? kF32 : kI32, {rows, width}, [&] {
        std::vector<T> v;
        for (int64_t r = 0; r < rows; ++r) {
            const std::vector<T> row = f(int(r));
            v.insert(v.end(), row.begin(), row.end());
        }
        return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
    });
}
template <class F>
Value float_rows(LoweringBuilder &b, const std::string &name, int64_t rows, int64_t width, F f) {
    return rows_table<float>(b, name, rows, width, f);
}
template <class F>
Value int32_rows(LoweringBuilder &b, const std::string &name, int64_t rows, int64_t width, F f) {
    return rows_table<int32_t>(b, name, rows, width, f);
}

// Byte j of a grid entry (element j).
template <class Entry>
uint8_t entry_byte(Entry e, int j) {
    return uint8_t(e >> (8 * j));
}

// The 8 signs of sign byte s: -1 where bit j is set.
std::vector<float> signs_of(unsigned s) {
    std::vector<float> row;
    for (int j = 0; j < kGroupSize; ++j) row.push_back((s >> j) & 1 ? -1.0f : 1.0f);
    return row;
}

// The k columns of the UINT8 tensor x viewed as `shape` (last dimension k), each as `dtype` of
// `shape` without its last dimension.
std::vector<Value> columns(LoweringBuilder &b, const Value &x, const std::vector<int64_t> &shape,
                           DataType dtype) {
    std::vector<int64_t> column_shape(shape.begin(), shape.end() - 1);
    const int64_t axis = int64_t(shape.size()) - 1;
    std::vector<Value> out;
    for (int64_t k = 0; k < shape.back(); ++k)
        out.push_back(
            b.cast(b.reshape(b.slice(b.reshape(x, shape), axis, k, k + 1), column_shape), dtype));
    return out;
}

// The u32 aux of iq2_xxs / iq3_xxs sub-blocks (bits 7l..7l+6: the 7-bit sign index of group l,
// bits 28..31: w), from its 4 bytes [nb, 8, 4]. Returns keys [nb, 8, 4] INT32 whose low 7 bits are
// the sign indices (tables of kSignKeys rows use row r & 127), and sets `w` [nb, 8] INT32.
// Key l is a 16-bit window (bytes k, k + 1 of the aux) shifted right so that its field starts at
// bit 0; the bits above it are ignored by the tables.
constexpr int64_t kSignKeys = 2048;  // the largest key, window 2..3 >> 5, is below 2^11
Value aux_sign_keys(LoweringBuilder &b, const Value &aux, Value &w) {
    const std::vector<Value> a = columns(b, aux, {-1, kSubBlocks, 4}, kI32);  // [nb, 8] each
    const Value k256 = b.scalar(kI32, 256);
    auto window = [&](int k, int shift) {
        const Value sum = b.add(a[size_t(k)], b.mul(a[size_t(k) + 1], k256));
        return b.reshape(b.div(sum, b.scalar(kI32, 1 << shift)), {-1, kSubBlocks, 1});
    };
    const Value keys = b.concat(
        {b.reshape(a[0], {-1, kSubBlocks, 1}), window(0, 7), window(1, 6), window(2, 5)}, 2);
    w = b.div(a[3], b.scalar(kI32, 16));
    return keys;
}

// The low and high nibble of every byte, [256, 2] INT32.
Value nibbles_by_byte(LoweringBuilder &b) {
    return int32_rows(b, "iq_nibbles_by_byte", 256, 2, [](int r) {
        return std::vector<int32_t>{r & 15, r >> 4};
    });
}

// Scale factors 0.5 + w by 4-bit w (exact).
Value half_plus_w(LoweringBuilder &b) {
    std::vector<float> v;
    for (int w = 0; w < 16; ++w) v.push_back(0.5f + float(w));
    return float_table(b, "iq_half_plus_w", {16}, v);
}

// Two 4-bit scales per byte (low nibble, high nibble) as f(nibble), [256, 2] FLOAT.
template <class F>
Value nibble_scales(LoweringBuilder &b, const std::string &name, F f) {
    return float_rows(b, name, 256, 2, [&](int r) {
        return std::vector<float>{f(r & 15), f(r >> 4)};
    });
}

// iq2_xs / iq2_s: db = (d * (0.5 + w)) * 0.25 for the 8 scale bytes at `offset`: [nb, 16], two per
// sub-block (groups 0, 1 take the low nibble, groups 2, 3 the high).
Value iq2_pair_scales(LoweringBuilder &b, const Value &blocks, size_t d_offset, size_t offset) {
    const Value table =
        nibble_scales(b, "iq2_half_plus_w_pairs", [](int w) { return 0.5f + float(w); });
    const Value w = b.gather(table, as_index(b, b.bytes(blocks, offset, size_t(kSubBlocks))));
    const Value dw = b.mul(f16_field(b, blocks, d_offset), b.reshape(w, {-1, 2 * kSubBlocks}));
    return b.mul(dw, b.scalar(kF32, 0.25));
}

// The magnitudes of every entry of an iq2 (uint64, 8 elements) or iq3 (uint32, 4) grid, [entries,
// elements] FLOAT.
template <class Entry, size_t N>
Value grid_table(LoweringBuilder &b, const std::string &name, const Entry (&grid)[N]) {
    constexpr int64_t kWidth = sizeof(Entry);
    return float_rows(b, name, int64_t(N), kWidth, [&](int r) {
        std::vector<float> row;
        for (int j = 0; j < kWidth; ++j) row.push_back(float(entry_byte(grid[r], j)));
        return row;
    });
}

// Sign rows by sign byte: [256, 8] FLOAT.
Value sign_rows_by_byte(LoweringBuilder &b) {
    return float_rows(b, "iq_sign_rows_by_byte", 256, kGroupSize,
                      [](int r) { return signs_of(unsigned(r)); });
}

// values * scale, the block's 256 values (any shape) in `count` runs sharing a scale: scales
// [nb, count].
Value scaled(LoweringBuilder &b, const Value &values, const Value &scales, int64_t count) {
    return b.mul(b.reshape(values, {-1, count, kBlockElements / count}),
                 b.reshape(scales, {-1, count, 1}));
}

// iq3_xxs: row 16 * i + n holds grid entry i's 4 values, element k negated where bit k of n is
// set.
Value iq3xxs_signed_entries(LoweringBuilder &b) {
    return float_rows(b, "iq3xxs_signed_entries", count_of(cb::iq3xxs_grid) * 16, kEntrySize,
                      [](int r) {
                          std::vector<float> row;
                          for (int k = 0; k < kEntrySize; ++k)
                              row.push_back(float(entry_byte(cb::iq3xxs_grid[r / 16], k)) *
                                            ((r >> k) & 1 ? -1.0f : 1.0f));
                          return row;
                      });
}

// iq1: row index | s << 11 holds grid entry `index`'s 8 values plus the shift: +iq1_delta for s =
// 0, -iq1_delta for s = 1 (exact sums). [4096, 8] FLOAT, shared by iq1_s and iq1_m.
constexpr int64_t kIq1Entries = count_of(cb::iq1s_grid);
Value iq1_shifted_rows(LoweringBuilder &b) {
    return float_rows(b, "iq1_shifted_rows", 2 * kIq1Entries, kGroupSize, [](int r) {
        const float delta = r >= kIq1Entries ? -cb::iq1_delta : cb::iq1_delta;
        std::vector<float> row;
        for (int j = 0; j < kGroupSize; ++j)
            row.push_back(float(int8_t(entry_byte(cb::iq1s_grid[r % kIq1Entries], j))) + delta);
        return row;
    });
}

// Sub-block ib: 4 grid index bytes, then the u32 aux (4 sign indices, w).
Value lower_iq2_xxs(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq2_XXS;
    const Value qs =
        b.reshape(b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), {-1, kSubBlocks, 2 * kGroups});
    const Value grid_index = as_index(b, b.slice(qs, 2, 0, kGroups));  // [nb, 8, 4]
    Value w;
    const Value keys = aux_sign_keys(b, b.slice(qs, 2, kGroups, 2 * kGroups), w);
    const Value sign_table = float_rows(b, "iq2_sign_rows_by_key", kSignKeys, kGroupSize,
                                        [](int r) { return signs_of(cb::ksigns_iq2xs[r & 127]); });
    const Value grid_rows = b.gather(grid_table(b, "iq2xxs_grid", cb::iq2xxs_grid), grid_index);
    const Value dw = b.mul(f16_field(b, blocks, offsetof(B, d)), b.gather(half_plus_w(b), w));
    const Value db = b.mul(dw, b.scalar(kF32, 0.25));  // [nb, 8]
    return scaled(b, b.mul(grid_rows, b.gather(sign_table, keys)), db, kSubBlocks);
}

// Group g: u16 code, grid index bits 0..8, sign index bits 9..15 (the high byte >> 1).
Value lower_iq2_xs(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq2_XS;
    const std::vector<Value> code =
        columns(b, b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), {-1, kBlockGroups, 2}, kU8);
    const Value high_bit = b.cast(b.low_bits(code[1], kU8, 1), kI32);
    const Value grid_index = b.add(b.cast(code[0], kI32), b.mul(high_bit, b.scalar(kI32, 256)));
    const Value sign_table = float_rows(b, "iq2_sign_rows_by_high_byte", 256, kGroupSize,
                                        [](int r) { return signs_of(cb::ksigns_iq2xs[r >> 1]); });
    const Value grid_rows = b.gather(grid_table(b, "iq2xs_grid", cb::iq2xs_grid), grid_index);
    const Value sign_rows = b.gather(sign_table, as_index(b, code[1]));
    return scaled(b, b.mul(grid_rows, sign_rows),
                  iq2_pair_scales(b, blocks, offsetof(B, d), offsetof(B, scales)), 2 * kSubBlocks);
}

// Group g: index qs[g] | ((qh[ib] >> 2l) & 3) << 8, sign byte qs[32 + g].
Value lower_iq2_s(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq2_S;
    const Value high_table = int32_rows(b, "iq2s_index_high", 256, kGroups, [](int q) {
        std::vector<int32_t> row;
        for (int l = 0; l < kGroups; ++l) row.push_back(((q >> (2 * l)) & 3) << 8);
        return row;
    });
    const Value low = b.cast(b.bytes(blocks, offsetof(B, qs), size_t(kBlockGroups)), kI32);
    const Value high =
        b.gather(high_table, as_index(b, b.bytes(blocks, offsetof(B, qh), sizeof(B::qh))));
    const Value grid_index = b.add(low, b.reshape(high, {-1, kBlockGroups}));  // [nb, 32]
    const Value signs =
        b.bytes(blocks, offsetof(B, qs) + size_t(kBlockGroups), size_t(kBlockGroups));
    const Value grid_rows = b.gather(grid_table(b, "iq2s_grid", cb::iq2s_grid), grid_index);
    const Value sign_rows = b.gather(sign_rows_by_byte(b), as_index(b, signs));
    return scaled(b, b.mul(grid_rows, sign_rows),
                  iq2_pair_scales(b, blocks, offsetof(B, d), offsetof(B, scales)), 2 * kSubBlocks);
}

// Entry k = qs[k] (group g: entries 2g, 2g+1); sub-block ib's u32 aux as iq2_xxs.
Value lower_iq3_xxs(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq3_XXS;
    Value w;
    const Value keys = aux_sign_keys(b, b.bytes(blocks, offsetof(B, aux), sizeof(B::aux)), w);
    const Value nibble_table = int32_rows(b, "iq_sign_nibbles_by_key", kSignKeys, 2, [](int r) {
        const uint8_t s = cb::ksigns_iq2xs[r & 127];
        return std::vector<int32_t>{s & 15, s >> 4};
    });
    const Value entry =
        b.mul(b.cast(b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), kI32), b.scalar(kI32, 16));
    const Value entry_keys = b.add(b.reshape(entry, {-1, kSubBlocks, kGroups, 2}),
                                   b.gather(nibble_table, keys));         // [nb, 8, 4, 2]
    const Value values = b.gather(iq3xxs_signed_entries(b), entry_keys);  // [nb, 8, 4, 2, 4]
    const Value dw = b.mul(f16_field(b, blocks, offsetof(B, d)), b.gather(half_plus_w(b), w));
    return scaled(b, values, b.mul(dw, b.scalar(kF32, 0.5)), kSubBlocks);
}

// Entry k = qs[k] | (bit k % 8 of qh[k / 8]) << 8; sign byte per group; 4-bit w per sub-block.
Value lower_iq3_s(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq3_S;
    constexpr int64_t kEntries = 2 * kGroups;  // per sub-block
    const Value high_table = int32_rows(b, "iq3s_index_high", 256, kEntries, [](int q) {
        std::vector<int32_t> row;
        for (int m = 0; m < kEntries; ++m) row.push_back(((q >> m) & 1) << 8);
        return row;
    });
    const Value low = b.cast(b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), kI32);
    const Value high =
        b.gather(high_table, as_index(b, b.bytes(blocks, offsetof(B, qh), sizeof(B::qh))));
    const Value index = b.add(b.reshape(low, {-1, kSubBlocks, kEntries}), high);
    const Value grid_rows = b.reshape(b.gather(grid_table(b, "iq3s_grid", cb::iq3s_grid), index),
                                      {-1, kBlockGroups, kGroupSize});
    const Value sign_rows = b.gather(
        sign_rows_by_byte(b), as_index(b, b.bytes(blocks, offsetof(B, signs), sizeof(B::signs))));
    const Value odd =
        nibble_scales(b, "iq_one_plus_2w_pairs", [](int w) { return float(1 + 2 * w); });
    const Value scales = b.gather(
        odd, as_index(b, b.bytes(blocks, offsetof(B, scales), sizeof(B::scales))));  // [nb, 4, 2]
    const Value db =
        b.mul(f16_field(b, blocks, offsetof(B, d)), b.reshape(scales, {-1, kSubBlocks}));
    return scaled(b, b.mul(grid_rows, sign_rows), db, kSubBlocks);
}

// Sub-block ib: u16 h, index bits 8..10 of group l at bits 3l, w at 12..14, shift sign bit 15.
// Keys index | sign << 11 are qs[g] plus per-byte contributions of h's low and high bytes.
Value lower_iq1_s(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq1_S;
    const Value low_keys = int32_rows(b, "iq1s_keys_by_low_byte", 256, kGroups, [](int r) {
        return std::vector<int32_t>{(r & 7) << 8, ((r >> 3) & 7) << 8, (r >> 6) << 8, 0};
    });
    const Value high_keys = int32_rows(b, "iq1s_keys_by_high_byte", 256, kGroups, [](int r) {
        const int32_t s = (r >> 7) << 11;
        return std::vector<int32_t>{s, s, s + ((r & 1) << 10), s + (((r >> 1) & 7) << 8)};
    });
    const Value odd_by_high = [&] {
        std::vector<float> v;
        for (int r = 0; r < 256; ++r) v.push_back(float(2 * ((r >> 4) & 7) + 1));
        return float_table(b, "iq1s_one_plus_2w_by_high_byte", {256}, v);
    }();
    const std::vector<Value> h = columns(b, b.bytes(blocks, offsetof(B, qh), sizeof(B::qh)),
                                         {-1, kSubBlocks, 2}, kI32);  // [nb, 8] each
    const Value low = b.reshape(b.cast(b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), kI32),
                                {-1, kSubBlocks, kGroups});
    const Value keys =
        b.add(b.add(low, b.gather(low_keys, h[0])), b.gather(high_keys, h[1]));  // [nb, 8, 4]
    const Value values = b.gather(iq1_shifted_rows(b), keys);                    // [nb, 8, 4, 8]
    const Value dl = b.mul(f16_field(b, blocks, offsetof(B, d)), b.gather(odd_by_high, h[1]));
    return scaled(b, values, dl, kSubBlocks);
}

// Group g: index qs[g] | (nibble & 7) << 8 and shift sign nibble >> 3, the nibble of qh[g / 2]
// (low for even g): the key is qs[g] + nibble << 8. The four u16 scale words hold 3-bit w at bits
// 0, 3 (sub-block 2m) and 6, 9 (2m + 1), and d's nibbles in bits 12..15.
Value lower_iq1_m(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq1_M;
    constexpr int64_t kWords = sizeof(B::scales) / 2;
    const Value nibble_keys = int32_rows(b, "iq1m_keys_by_qh", 256, 2, [](int q) {
        return std::vector<int32_t>{(q & 15) << 8, (q >> 4) << 8};
    });
    const Value low = b.cast(b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)), kI32);
    const Value high =
        b.gather(nibble_keys, as_index(b, b.bytes(blocks, offsetof(B, qh), sizeof(B::qh))));
    const Value keys = b.add(low, b.reshape(high, {-1, kBlockGroups}));  // [nb, 32]
    const Value values = b.gather(iq1_shifted_rows(b), keys);            // [nb, 32, 8]
    // 2w + 1 of the four fields of a word: from its low byte (with the + 1) plus its high byte.
    const Value odd_low = float_rows(b, "iq1m_one_plus_2w_by_low_byte", 256, 4, [](int r) {
        return std::vector<float>{float(2 * (r & 7) + 1), float(2 * ((r >> 3) & 7) + 1),
                                  float(2 * (r >> 6) + 1), 1.0f};
    });
    const Value odd_high = float_rows(b, "iq1m_2w_by_high_byte", 256, 4, [](int r) {
        return std::vector<float>{0.0f, 0.0f, float(2 * ((r & 1) << 2)), float(2 * ((r >> 1) & 7))};
    });
    const Value top_nibble = int32_rows(b, "iq1m_d_nibble_by_high_byte", 256, kWords, [](int r) {
        std::vector<int32_t> row;  // word m's top nibble at bits 4m..4m+3 of d
        for (int m = 0; m < kWords; ++m) row.push_back((r >> 4) << (4 * m));
        return row;
    });
    const std::vector<Value> sc =
        columns(b, b.bytes(blocks, offsetof(B, scales), sizeof(B::scales)), {-1, kWords, 2},
                kI32);                                                             // [nb, 4] each
    const Value odd = b.add(b.gather(odd_low, sc[0]), b.gather(odd_high, sc[1]));  // [nb, 4, 4]
    // d: word m's nibble from row m of its high byte's table row, summed over m.
    const Value parts = b.gather(top_nibble, sc[1]);  // [nb, 4 (word), 4 (placement)]
    Value bits;
    for (int64_t m = 0; m < kWords; ++m) {
        const Value part = b.reshape(b.slice(b.slice(parts, 1, m, m + 1), 2, m, m + 1), {-1});
        bits = m ? b.add(bits, part) : part;
    }
    const Value d = b.reshape(f16_from_int32(b, bits), {-1, 1});
    const Value dl = b.mul(d, b.reshape(odd, {-1, 2 * kSubBlocks}));
    return scaled(b, values, dl, 2 * kSubBlocks);
}

// The code-book values of rows of 16 code bytes, [rows, 2, 8, 2] in element order.
Value iq4_values(LoweringBuilder &b, const Value &codes) {
    static constexpr float kBook[16] = {
        cb::kvalues_iq4nl[0],  cb::kvalues_iq4nl[1],  cb::kvalues_iq4nl[2],  cb::kvalues_iq4nl[3],
        cb::kvalues_iq4nl[4],  cb::kvalues_iq4nl[5],  cb::kvalues_iq4nl[6],  cb::kvalues_iq4nl[7],
        cb::kvalues_iq4nl[8],  cb::kvalues_iq4nl[9],  cb::kvalues_iq4nl[10], cb::kvalues_iq4nl[11],
        cb::kvalues_iq4nl[12], cb::kvalues_iq4nl[13], cb::kvalues_iq4nl[14], cb::kvalues_iq4nl[15]};
    return nibble_pair_values(b, codes, int64_t(sizeof(BlockIq4_NL::qs)),
                              "iq4nl_values_by_nibble_pair", kBook);
}

Value lower_iq4_nl(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq4_NL;
    const Value q = iq4_values(b, b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)));
    return b.mul(b.reshape(q, {-1, 2 * int64_t(sizeof(B::qs))}),
                 f16_field(b, blocks, offsetof(B, d)));
}

// ls = the nibble of scales_l[ib / 2] (low for even ib) | bits 2ib..2ib+1 of scales_h << 4;
// dl = d * (ls - 32).
Value lower_iq4_xs(LoweringBuilder &b, const Value &blocks) {
    using B = BlockIq4_XS;
    static_assert(sizeof(B::qs) == kSubBlocks * sizeof(BlockIq4_NL::qs));
    const Value q = iq4_values(b, b.bytes(blocks, offsetof(B, qs), sizeof(B::qs)));
    const Value high_table = int32_rows(b, "iq4xs_scale_high_by_byte", 256, 4, [](int r) {
        std::vector<int32_t> row;  // bits 2k..2k+1 as scale bits 4..5
        for (int k = 0; k < 4; ++k) row.push_back(((r >> (2 * k)) & 3) << 4);
        return row;
    });
    const Value low =
        b.gather(nibbles_by_byte(b),
                 as_index(b, b.bytes(blocks, offsetof(B, scales_l), sizeof(B::scales_l))));
    const Value high = b.gather(
        high_table, as_index(b, b.bytes(blocks, offsetof(B, scales_h), sizeof(B::scales_h))));
    const Value ls = b.add(b.reshape(low, {-1, kSubBlocks}), b.reshape(high, {-1, kSubBlocks}));
    const Value minus_32 = [&] {
        std::vector<float> v;
        for (int s = 0; s < 64; ++s) v.push_back(float(s - 32));
        return float_table(b, "iq4xs_scale_minus_32", {64}, v);
    }();
    const Value dl = b.mul(f16_field(b, blocks, offsetof(B, d)), b.gather(minus_32, ls));
    return scaled(b, q, dl, kSubBlocks);
}

}  // namespace

std::span<const Lowering> iq_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::iq2_xxs, lower_iq2_xxs}, {GgmlType::iq2_xs, lower_iq2_xs},
        {GgmlType::iq2_s, lower_iq2_s},     {GgmlType::iq3_xxs, lower_iq3_xxs},
        {GgmlType::iq3_s, lower_iq3_s},     {GgmlType::iq1_s, lower_iq1_s},
        {GgmlType::iq1_m, lower_iq1_m},     {GgmlType::iq4_nl, lower_iq4_nl},
        {GgmlType::iq4_xs, lower_iq4_xs},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
