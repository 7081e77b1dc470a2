// Tensor data between little- and big-endian GGUF files, for every GGML type.
//
// A block is a sequence of fields (formats/SPEC.md's layout tables; formats/blocks.hpp's structs).
// Converting reverses the bytes of every multi-byte number in it — f16, bf16 and f32 scales, and
// the 16- and 32-bit integer words that the kernels read as words (q5_0's qh, iq2_xs's codes,
// q8_K's bsums, ...) — and leaves byte arrays as they are. A plain type (f32 ... i64) is one field,
// its element. The operation is its own inverse: the same call converts either way.
//
// A type is converted only when the big-endian layout is certain: when ggml writes and reads every
// field at one width. iq2_xxs is refused: ggml packs a sub-block's four grid indices into one
// 32-bit word when it quantizes and reads them back as four bytes, which agree only on a
// little-endian machine, so no big-endian layout of them is defined.
#pragma once

#include <cstdint>
#include <span>

#include "gguftool/types.hpp"

namespace gguftool::quant {

// `size` bytes at `offset` in a block, holding size / width numbers of `width` bytes (1: bytes,
// left as they are).
struct ByteOrderField {
    uint32_t offset;
    uint32_t size;
    uint32_t width;
};

// The fields of a block of `t`, in offset order and covering the block exactly; empty for a type
// that is not converted (byte_order_refusal says why).
std::span<const ByteOrderField> byte_order_fields(GgmlType t);

// Why data of `t` is not converted between byte orders, or nullptr when it is.
const char *byte_order_refusal(GgmlType t);

// Whether converting `t` changes any byte (false for i8, mxfp4, nvfp4: a copy will do).
bool byte_order_changes(GgmlType t);

// Converts `nblocks` blocks of `t` from `src` to `dst`, which may be the same buffer (in place)
// but must not otherwise overlap. Throws gguftool::Error with byte_order_refusal's reason for a
// type that is not converted.
void swap_byte_order(GgmlType t, const uint8_t *src, uint8_t *dst, uint64_t nblocks);

}  // namespace gguftool::quant
