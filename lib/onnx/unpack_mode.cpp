// Unpack mode: the bit-field formats with one scale per block, split into initializers and decoded
// by Unpack and standard operators, in exactly ggml's arithmetic order (dequantize_row_* in
// ggml/src/ggml-quants.c), so the FLOAT outputs equal packed mode's bit for bit:
//
//   codes   [blocks, B*bits/8] UINT8, repacked so that Unpack yields them in element order
//   scales  [blocks] FLOAT16 (the block's d, copied), or UINT8 E8M0 exponents for mxfp4
//   offsets [blocks] FLOAT16 (the block's m; q4_1 and q5_1)
//
//   Unpack(codes, B) -> Cast FLOAT -> Sub bias        (integer codes: q4_0 q5_0 q8_0 q2_0 tq2_0)
//                    -> Cast INT64 -> Gather table    (code books: q1_0 iq4_nl mxfp4)
//   * Unsqueeze(Cast(scales) | Gather(e8m0 table, scales), [1])   one rounding, as ggml's x*d
//   + Unsqueeze(Cast(offsets), [1])                   a second rounding, as ggml's x*d + m
//   -> Reshape to the tensor's shape (-> Cast to the output type)
//
// The integer steps are exact in FLOAT (codes below 2^8, biases and code book entries small
// integers; the scale tables hold exact powers of two), so the only roundings are ggml's own.
// One difference no standard operator can avoid: for q1_0 ggml negates d (flipping the sign bit
// even of a NaN), where -1 * d keeps a NaN's sign. Only a NaN scale shows it.
#include <fmt/format.h>

#include <array>
#include <optional>
#include <vector>

#include "formats/blocks.hpp"
#include "formats/codebooks/iq4_values.hpp"
#include "formats/e2m1_table.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

using namespace formats;  // the block structs, whose fields give every offset below

// The 4-bit code of element e of a 32-element block whose nibbles are at qs: elements 0..15 are
// the low nibbles of qs[0..15], elements 16..31 the high ones (q4_0 q4_1 iq4_nl mxfp4).
inline unsigned nibble(const uint8_t *qs, unsigned e) {
    return e < 16 ? qs[e] & 0x0F : qs[e - 16] >> 4;
}

// Element e's unsigned code in block b, per layout.
template <class Block>
unsigned nibble_code(const uint8_t *b, unsigned e) {
    return nibble(b + offsetof(Block, qs), e);
}
// q5_0 / q5_1: the nibble plus bit e of the 32-bit qh as the fifth bit.
template <class Block>
unsigned five_bit_code(const uint8_t *b, unsigned e) {
    const uint8_t *qh = b + offsetof(Block, qh);
    return nibble_code<Block>(b, e) | ((qh[e / 8] >> (e % 8)) & 1u) << 4;
}
// int8 codes with the sign bit flipped are unsigned codes + 128.
template <class Block>
unsigned int8_code(const uint8_t *b, unsigned e) {
    return b[offsetof(Block, qs) + e] ^ 0x80u;
}
// Codes of Bits bits packed in qs lowest bits first (q1_0, q2_0).
template <class Block, unsigned Bits>
unsigned packed_code(const uint8_t *b, unsigned e) {
    return (b[offsetof(Block, qs) + e * Bits / 8] >> (e * Bits % 8)) & ((1u << Bits) - 1);
}
// tq2_0 stores element 128j + 32l + m in bits 2l of qs[32j + m].
unsigned tq2_0_code(const uint8_t *b, unsigned e) {
    return (b[offsetof(BlockTq2_0, qs) + e / 128 * 32 + e % 32] >> (e % 128 / 32 * 2)) & 3u;
}

// Writes each block's codes LSB-first, Bits per code, in element order.
using PackCodes = void (*)(const uint8_t *in, size_t nblocks, size_t block_bytes,
                           unsigned block_size, uint8_t *out);
template <unsigned Bits, unsigned (*Code)(const uint8_t *, unsigned)>
void pack_codes(const uint8_t *in, size_t nblocks, size_t block_bytes, unsigned block_size,
                uint8_t *out) {
    for (size_t b = 0; b < nblocks; ++b, in += block_bytes) {
        uint32_t acc = 0;
        unsigned held = 0;
        for (unsigned e = 0; e < block_size; ++e) {
            acc |= Code(in, e) << held;
            held += Bits;
            for (; held >= 8; held -= 8, acc >>= 8) *out++ = static_cast<uint8_t>(acc);
        }
    }
}

// q1_0: bit e is ±d; the code book {-1, 1} times d gives ggml's d and -d.
constexpr int8_t kSigns[2] = {-1, 1};

// One format's Unpack form. A block format not listed here has none: its codes are not one
// bit-field per element under one scale (and offset) per block, and unpack mode falls back to
// DequantizePacked for it.
struct Form {
    GgmlType type;
    unsigned bits;
    PackCodes pack;
    int bias;                         // subtracted from the codes (0: none)
    std::span<const int8_t> book;     // code -> value, looked up with Gather (empty: none)
    size_t scale_at;                  // byte offset of the scale: fp16 d, or mxfp4's E8M0 byte
    bool e8m0;                        // the scale is an E8M0 exponent byte (mxfp4)
    std::optional<size_t> offset_at;  // byte offset of the fp16 offset m, if any
};

// clang-format off
constexpr Form kForms[] = {
    {BlockQ4_0::type,   4, pack_codes<4, nibble_code<BlockQ4_0>>,      8,   {},     offsetof(BlockQ4_0, d),   false, {}},
    {BlockQ4_1::type,   4, pack_codes<4, nibble_code<BlockQ4_1>>,      0,   {},     offsetof(BlockQ4_1, d),   false, offsetof(BlockQ4_1, m)},
    {BlockQ5_0::type,   5, pack_codes<5, five_bit_code<BlockQ5_0>>,    16,  {},     offsetof(BlockQ5_0, d),   false, {}},
    {BlockQ5_1::type,   5, pack_codes<5, five_bit_code<BlockQ5_1>>,    0,   {},     offsetof(BlockQ5_1, d),   false, offsetof(BlockQ5_1, m)},
    {BlockQ8_0::type,   8, pack_codes<8, int8_code<BlockQ8_0>>,        128, {},     offsetof(BlockQ8_0, d),   false, {}},
    {BlockQ1_0::type,   1, pack_codes<1, packed_code<BlockQ1_0, 1>>,   0,   kSigns, offsetof(BlockQ1_0, d),   false, {}},
    {BlockQ2_0::type,   2, pack_codes<2, packed_code<BlockQ2_0, 2>>,   1,   {},     offsetof(BlockQ2_0, d),   false, {}},
    {BlockTq2_0::type,  2, pack_codes<2, tq2_0_code>,                  1,   {},     offsetof(BlockTq2_0, d),  false, {}},
    {BlockIq4_NL::type, 4, pack_codes<4, nibble_code<BlockIq4_NL>>,    0,   codebooks::kvalues_iq4nl, offsetof(BlockIq4_NL, d), false, {}},
    {BlockMxfp4::type,  4, pack_codes<4, nibble_code<BlockMxfp4>>,     0,   kE2m1Doubled, offsetof(BlockMxfp4, e), true, {}},
};
// clang-format on

const Form *find_form(GgmlType t) {
    for (const Form &f : kForms)
        if (f.type == t) return &f;
    return nullptr;
}

// GGML_E8M0_TO_FP32_HALF for every exponent byte: exact powers of two 2^-128 .. 2^127.
std::vector<float> e8m0_half_table() {
    std::vector<float> t(256);
    for (unsigned x = 0; x < 256; ++x) t[x] = formats::e8m0_to_f32_half(static_cast<uint8_t>(x));
    return t;
}

// Copies `width` bytes at `at` of every block.
BlockTransform field(size_t block_bytes, size_t at, size_t width) {
    return [=](const uint8_t *in, size_t nblocks, uint8_t *out) {
        for (size_t b = 0; b < nblocks; ++b, in += block_bytes, out += width)
            std::copy(in + at, in + at + width, out);
    };
}

}  // namespace

bool emit_unpack(GraphBuilder &g, const gguf::TensorInfo &t, DataType out) {
    const Form *form = find_form(t.type);
    if (!form) return false;
    const Form &f = *form;
    const TypeTraits &tt = traits(t.type);
    const std::string name(t.name);
    const std::vector<int64_t> dims = onnx_dims(t);
    const uint64_t nblocks = t.bytes / tt.type_size;
    const auto blocks = static_cast<int64_t>(nblocks);
    const size_t code_bytes = size_t{tt.block_size} * f.bits / 8;
    const std::span<const uint8_t> data = t.data;
    const size_t block_bytes = tt.type_size;
    const unsigned block_size = tt.block_size;

    const std::string codes =
        g.payload(name + ":codes", DataType::uint8, {blocks, static_cast<int64_t>(code_bytes)},
                  nblocks * code_bytes, [=](Sink &s) {
                      transform_blocks(s, data, block_bytes, code_bytes,
                                       [&](const uint8_t *in, size_t n, uint8_t *dst) {
                                           f.pack(in, n, block_bytes, block_size, dst);
                                       });
                  });
    const bool e8m0 = f.e8m0;
    const size_t scale_width = e8m0 ? 1 : 2;
    const BlockTransform scale_field = field(block_bytes, f.scale_at, scale_width);
    const std::string scales = g.payload(
        name + ":scales", e8m0 ? DataType::uint8 : DataType::float16, {blocks},
        nblocks * scale_width,
        [=](Sink &s) { transform_blocks(s, data, block_bytes, scale_width, scale_field); });
    std::string offsets;
    if (f.offset_at) {
        const BlockTransform offset_field = field(block_bytes, *f.offset_at, 2);
        offsets =
            g.payload(name + ":offsets", DataType::float16, {blocks}, nblocks * 2,
                      [=](Sink &s) { transform_blocks(s, data, block_bytes, 2, offset_field); });
    }

    // Codes to values [blocks, B].
    const std::string unpacked = g.name(name + ":unpacked");
    set_attribute(g.node(name, "Unpack", {codes, g.int64_scalar(block_size)}, {unpacked}), "bits",
                  static_cast<int64_t>(f.bits));
    std::string values = g.name(name + ":values");
    if (!f.book.empty()) {
        const std::string indices = g.name(name + ":indices");
        set_attribute(g.node(name, "Cast", {unpacked}, {indices}), "to",
                      onnx_number(DataType::int64));
        const std::string book =
            g.float_table(fmt::format("{}_values", tt.name), {f.book.begin(), f.book.end()});
        g.node(name, "Gather", {book, indices}, {values});
    } else {
        const std::string codes_float = f.bias ? g.name(name + ":codes_float") : values;
        set_attribute(g.node(name, "Cast", {unpacked}, {codes_float}), "to",
                      onnx_number(DataType::float32));
        if (f.bias) g.node(name, "Sub", {codes_float, g.float_scalar(float(f.bias))}, {values});
    }

    // One value per block, as a column [blocks, 1] that broadcasts over the block's elements.
    const std::string axes = g.int64_vector("axes", {1});
    const auto column = [&](const std::string &per_block, const char *what) {
        const std::string decoded = g.name(fmt::format("{}:{}", name, what));
        if (e8m0 && per_block == scales) {
            const std::string indices = g.name(name + ":scale_indices");
            set_attribute(g.node(name, "Cast", {per_block}, {indices}), "to",
                          onnx_number(DataType::int64));
            g.node(name, "Gather", {g.float_table("e8m0_half", e8m0_half_table()), indices},
                   {decoded});
        } else {
            set_attribute(g.node(name, "Cast", {per_block}, {decoded}), "to",
                          onnx_number(DataType::float32));
        }
        const std::string col = g.name(fmt::format("{}:{}_column", name, what));
        g.node(name, "Unsqueeze", {decoded, axes}, {col});
        return col;
    };
    std::string result = g.name(name + ":scaled");
    g.node(name, "Mul", {values, column(scales, "scale")}, {result});
    if (!offsets.empty()) {
        const std::string sum = g.name(name + ":offset_added");
        g.node(name, "Add", {result, column(offsets, "offset")}, {sum});
        result = sum;
    }

    // To the tensor's shape (allowzero: a 0 in the shape is a real empty dimension).
    const bool cast = out != DataType::float32;
    const std::string reshaped = cast ? g.name(name + ":float") : name;
    set_attribute(g.node(name, "Reshape", {result, g.int64_vector("shape", dims)}, {reshaped}),
                  "allowzero", int64_t{1});
    if (cast)
        set_attribute(g.node(name, "Cast", {reshaped}, {name}), "to", int64_t(onnx_number(out)));
    g.output(name, out, dims);
    ++g.plan().unpacked;
    return true;
}

}  // namespace gguftool::onnx_export::detail
