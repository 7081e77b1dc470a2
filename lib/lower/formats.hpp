// Internal to lib/lower: how each block format is lowered, and the field decoders they share.
//
// A format's lowering takes `blocks`, the tensor's bytes as a [nb, bytes per block] UINT8 matrix
// (nb may be 0 and is not known to the lowering: shapes use -1 for it), and returns FLOAT values in
// element order, nb * elements-per-block of them in any shape (the caller reshapes). It computes
// exactly what formats/SPEC.md says, with the same FLOAT operations in the same order: one ONNX
// Mul/Add/Sub per rounding, never reassociated; integer work in integer types.
//
// Field offsets come from the block structs (formats/blocks.hpp, offsetof), tables from the
// decoders' own (formats/codebooks, formats/e2m1_table.hpp, formats/common.hpp): no layout or table
// is written a second time here.
#pragma once

#include <cstddef>
#include <span>

#include "builder.hpp"
#include "gguftool/types.hpp"

namespace gguftool::lower::detail {

using FormatLowering = Value (*)(LoweringBuilder &b, const Value &blocks);

// The lowering of a quantized type (never null for a block format; throws for any other type).
FormatLowering format_lowering(GgmlType type);

// Every family file (lower_<family>.cpp) lists its lowerings, one row per format, as
// formats/<family>.cpp lists its kernels; format_table.cpp joins the families.
struct Lowering {
    GgmlType type;
    FormatLowering lower;
};
std::span<const Lowering> legacy_lowerings();
std::span<const Lowering> kquant_lowerings();
std::span<const Lowering> iq_lowerings();
std::span<const Lowering> ternary_lowerings();
std::span<const Lowering> fp4_lowerings();
std::span<const Lowering> q1q2_lowerings();

// --- Field decoders (fields.cpp) -------------------------------------------------------------

// The little-endian f16 at byte `offset` of every block, as FLOAT [nb, 1], exact (NaN payloads
// kept): a lookup in the shared 65536-entry table below opset 26, BitCast from 26.
Value f16_field(LoweringBuilder &b, const Value &blocks, size_t offset);
// f16 values from 16-bit codes already formed as INT32 (any shape): the same conversion.
Value f16_from_int32(LoweringBuilder &b, const Value &bits);
// The little-endian FLOAT (binary32) at byte `offset` of every block, as [nb, 1], exact.
Value f32_field(LoweringBuilder &b, const Value &blocks, size_t offset);
// Little-endian unsigned 16- and 32-bit words: `count` consecutive ones from byte `offset` of
// every block, as INT32 (16-bit) or INT64 (32-bit) [nb, count], exact.
Value u16_words(LoweringBuilder &b, const Value &blocks, size_t offset, size_t count);
Value u32_words(LoweringBuilder &b, const Value &blocks, size_t offset, size_t count);
// e8m0_half(e) and ue4m3_half(x) (formats/SPEC.md) of UINT8 codes of any shape, as FLOAT.
Value e8m0_half(LoweringBuilder &b, const Value &codes);
Value ue4m3_half(LoweringBuilder &b, const Value &codes);
// The low nibbles of the UINT8 tensor `bytes` followed by its high nibbles, concatenated along
// `axis` (which doubles): q4_0's element order, codes 0-15 as UINT8.
Value nibbles(LoweringBuilder &b, const Value &bytes, int64_t axis);
// INT32 of a UINT8 (or any integer) tensor: the index type Gather takes.
inline Value as_index(LoweringBuilder &b, const Value &x) {
    return b.cast(x, DataType::int32);
}
// The code-book values of rows of `n` code bytes (n even) whose low nibbles are elements 0..n-1 and
// high nibbles elements n..2n-1 (iq4_nl, iq4_xs, mxfp4, nvfp4): FLOAT [rows, 2, n/2, 2] in element
// order. One Gather per pair of neighbouring elements, keyed by their two nibbles formed in bytes,
// from the [256, 2] table `name` of (book[key & 15], book[key >> 4]). (A Gather per byte and a
// Transpose of [rows, n, 2] is no faster on one thread and 50x slower on two: onnxruntime runs such
// a batched Transpose as one task per row.)
Value nibble_pair_values(LoweringBuilder &b, const Value &codes, int64_t n, const std::string &name,
                         const float (&book)[16]);
// A FLOAT lookup table of the model, shared by name: values[i] for index i.
Value float_table(LoweringBuilder &b, const std::string &name, const std::vector<int64_t> &dims,
                  const std::vector<float> &values);

}  // namespace gguftool::lower::detail
