// The opset-29 operators of ../shared/spec, DequantizePacked and Unpack, as ONNX OpSchemas with
// their attribute checks and type-and-shape inference.
//
// ONNX 1.12 (Debian's libonnx-dev) knows the default domain only up to opset 17;
// register_schemas() widens that range to 29 first (lib/onnx/opset_range.cpp) and then registers
// both operators, so onnx::checker::check_model and onnx::shape_inference::InferShapes accept
// models importing opset 29. The check_* functions are the spec's attribute rules in plain C++,
// shared by the inference functions, the exporter and any executor.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/error.hpp"
#include "gguftool/types.hpp"

namespace gguftool::opset29 {

inline constexpr int kOpsetVersion = 29;

// ONNX TensorProto.DataType numbers used here.
enum DataType : int32_t {
    kFloat = 1,
    kUint8 = 2,
    kInt8 = 3,
    kUint16 = 4,
    kInt16 = 5,
    kInt32 = 6,
    kInt64 = 7,
    kFloat16 = 10,
    kDouble = 11,
    kUint32 = 12,
    kBfloat16 = 16,
};

// Widens the default domain to opset 29 and registers DequantizePacked-29 and Unpack-29.
// Thread-safe; only the first call does anything.
void register_schemas();

// DequantizePacked's `format` identifier of a quantized type: "gguf:" and the lowercase ggml
// name ("gguf:q4_k"). Throws gguftool::Error for a type that is not a block format.
std::string format_name(GgmlType type);
// The type a `format` identifier names (case-sensitive, exactly as format_name writes it).
std::optional<GgmlType> format_type(std::string_view format);

// A DequantizePacked node's attributes, checked.
struct DequantizePacked {
    GgmlType type;
    std::vector<int64_t> shape;
    int32_t output_dtype;  // kFloat, kFloat16, kBfloat16 or kDouble
    uint64_t elements;     // product(shape)
    uint64_t input_bytes;  // the exact length x must have
};

// Checks format, shape and output_dtype as the spec states (known format; rank >= 1; no negative
// dimension; last dimension a multiple of the block size; sizes that fit in 63 bits; a floating
// output type). Throws gguftool::Error("DequantizePacked", ..., problem).
DequantizePacked check_dequantize_packed(std::string_view format, std::span<const int64_t> shape,
                                         int64_t output_dtype);

// An Unpack node's code layout, checked. The `bits` spelling is radix 2^bits, group size 1.
struct Unpack {
    uint32_t radix;
    uint32_t group_size;
    uint32_t group_bits;  // W = ceil(log2(radix^group_size)): bits each group index occupies
    bool grouped;         // spelled with radix/group_size
};

// Checks the attributes: exactly one of `bits` (1..8) or `radix` (2..256) with `group_size`
// (>= 1, radix^group_size <= 2^63 - 1). Throws gguftool::Error("Unpack", ..., problem).
Unpack check_unpack(std::optional<int64_t> bits, std::optional<int64_t> radix,
                    std::optional<int64_t> group_size);

// Storage words along the axis that `count` codes occupy with `word_bits`-bit words (8 or 32):
// ceil(count * bits / word_bits), or ceil(ceil(count / G) * W / word_bits) when grouped.
// nullopt if that does not fit in 63 bits.
std::optional<uint64_t> unpack_words(const Unpack &u, uint64_t count, unsigned word_bits);

// `axis` in [-rank, rank - 1], made non-negative. Throws gguftool::Error("Unpack", ...).
int64_t check_unpack_axis(int64_t axis, int64_t rank);

}  // namespace gguftool::opset29
