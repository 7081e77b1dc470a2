// The rules of the opset-29 operators of the specs, DequantizePacked-29 and Unpack-29, in plain
// C++ without protobuf: the `format` identifier table and every attribute, shape and byte-count
// check, with one set of error messages. Used by the schemas' type-and-shape inference
// (lib/onnx), the exporter, the runtime's operators (lib/runtime) and the lowering.
//
// The checks throw gguftool::Error carrying only the problem ("attribute 'bits' 9 is outside
// [1, 8]"); the caller says where (the operator, the node, the model).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/error.hpp"
#include "gguftool/types.hpp"

namespace gguftool::opset29 {

inline constexpr int kOpsetVersion = 29;

// DequantizePacked's `format` identifier of a quantized type: "gguf:" and the lowercase ggml
// name ("gguf:q4_k"). Throws gguftool::Error for a type that is not a block format.
std::string format_name(GgmlType type);
// The type a `format` identifier names (case-sensitive, exactly as format_name writes it).
std::optional<GgmlType> format_type(std::string_view format);

// ---------------------------------------------------------------------------------------------
// DequantizePacked

struct DequantizePacked {
    GgmlType type;
    std::vector<int64_t> shape;  // ONNX order
    DataType output_dtype;       // float32, float16, bfloat16 or float64
    uint64_t elements;           // product(shape)
    uint64_t blocks;             // elements / block size
    uint64_t input_bytes;        // the exact length x must have
};

// Checks the attributes as the spec states: `format` (required) a known identifier; `shape`
// (required) of rank >= 1, no negative dimension, last dimension a multiple of the block size,
// element and byte counts that fit in 63 bits; `output_dtype` a floating type (FLOAT by default).
DequantizePacked check_dequantize_packed(std::optional<std::string_view> format,
                                         std::optional<std::span<const int64_t>> shape,
                                         std::optional<int64_t> output_dtype);

// Checks x's shape against the attributes: one-dimensional, exactly input_bytes long. A
// dimension not known (shape inference) is nullopt and passes.
void check_dequantize_packed_input(const DequantizePacked &op,
                                   std::span<const std::optional<int64_t>> x_shape);

// ---------------------------------------------------------------------------------------------
// Unpack

// The code layout. The `bits` spelling is radix 2^bits, group size 1.
struct Unpack {
    uint32_t radix;        // 2..256
    uint32_t group_size;   // >= 1
    uint32_t group_bits;   // W = ceil(log2(radix^group_size)): bits each group index occupies
    uint64_t group_limit;  // radix^group_size: every group index is below it
    bool grouped;          // spelled with radix/group_size
};

// Checks the spelling: exactly one of `bits` (1..8) or `radix` (2..256) with `group_size`
// (>= 1, radix^group_size <= 2^63 - 1).
Unpack check_unpack(std::optional<int64_t> bits, std::optional<int64_t> radix,
                    std::optional<int64_t> group_size);

// Bits per storage word of X's element type: 8 for uint8, 32 for uint32; throws for others.
unsigned unpack_word_bits(DataType storage);

// `axis` in [-rank, rank - 1] of X (rank >= 1), made non-negative.
int64_t check_unpack_axis(int64_t axis, int64_t rank);

// `count`, the codes per row, is nonnegative.
void check_unpack_count(int64_t count);

// Checks `count` (check_unpack_count) and that X's axis holds exactly the words `count` codes
// occupy: ceil(count * bits / word_bits), or ceil(ceil(count / G) * W / word_bits) when grouped. A
// dimension not known (shape inference) is nullopt and passes.
void check_unpack_words(const Unpack &u, int64_t count, unsigned word_bits, int64_t axis,
                        std::optional<int64_t> words);

// The words `count` codes occupy, or nullopt if that does not fit in 63 bits.
std::optional<uint64_t> unpack_words(const Unpack &u, uint64_t count, unsigned word_bits);

}  // namespace gguftool::opset29
