// DequantizePacked-29 (the spec's onnx-DequantizePacked-29): attribute, shape and byte-count rules.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "gguftool/opset29.hpp"

namespace gguftool::opset29 {
namespace {

constexpr uint64_t kMaxSize = std::numeric_limits<int64_t>::max();

[[noreturn]] void fail(std::string problem) {
    throw Error(std::move(problem));
}

std::string shape_string(std::span<const int64_t> shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

DequantizePacked check_dequantize_packed(std::optional<std::string_view> format,
                                         std::optional<std::span<const int64_t>> shape,
                                         std::optional<int64_t> output_dtype) {
    if (!format) fail("attribute 'format' is required");
    const std::optional<GgmlType> type = format_type(*format);
    if (!type)
        fail(
            fmt::format("attribute 'format': unknown format \"{}\" (expected one of the 27 "
                        "identifiers gguf:q4_0 ... gguf:q2_0, lower case)",
                        *format));
    if (!shape) fail("attribute 'shape' is required");
    if (shape->empty()) fail("attribute 'shape' must have rank at least 1");
    for (int64_t d : *shape)
        if (d < 0)
            fail(
                fmt::format("attribute 'shape' {} has a negative dimension", shape_string(*shape)));
    const TypeTraits &t = traits(*type);
    const uint64_t last = static_cast<uint64_t>(shape->back());
    if (last % t.block_size != 0)
        fail(
            fmt::format("attribute 'shape' {}: the last dimension {} is not a multiple of {}'s "
                        "{} elements per block",
                        shape_string(*shape), last, *format, t.block_size));
    const int64_t dtype = output_dtype.value_or(onnx_number(DataType::float32));
    const std::optional<DataType> out = dtype_from_onnx(dtype);
    if (!out || !is_floating(*out))
        fail(
            fmt::format("attribute 'output_dtype' {} is not FLOAT (1), FLOAT16 (10), DOUBLE (11) "
                        "or BFLOAT16 (16)",
                        dtype));

    // product(shape); with a zero dimension the others may be anything.
    uint64_t elements = 1;
    for (int64_t d : *shape)
        if (d == 0) elements = 0;
    for (int64_t d : *shape) {
        if (elements == 0) break;
        if (elements > kMaxSize / static_cast<uint64_t>(d))
            fail(fmt::format("attribute 'shape' {} has more than 2^63 - 1 elements",
                             shape_string(*shape)));
        elements *= static_cast<uint64_t>(d);
    }
    const uint64_t blocks = elements / t.block_size;
    if (blocks > kMaxSize / t.type_size)
        fail(fmt::format("attribute 'shape' {} of {} needs more than 2^63 - 1 bytes",
                         shape_string(*shape), *format));
    return {*type, {shape->begin(), shape->end()}, *out, elements, blocks, blocks * t.type_size};
}

void check_dequantize_packed_input(const DequantizePacked &op,
                                   std::span<const std::optional<int64_t>> x_shape) {
    if (x_shape.size() != 1) {
        std::vector<std::string> dims;
        for (const std::optional<int64_t> &d : x_shape)
            dims.push_back(d ? std::to_string(*d) : "?");
        fail(fmt::format("input x must be one-dimensional, not of shape [{}]",
                         fmt::join(dims, ", ")));
    }
    if (x_shape[0] && static_cast<uint64_t>(*x_shape[0]) != op.input_bytes)
        fail(fmt::format("input x is {} bytes but shape {} in {} takes {} ({} blocks of {} bytes)",
                         *x_shape[0], shape_string(op.shape), format_name(op.type), op.input_bytes,
                         op.blocks, traits(op.type).type_size));
}

}  // namespace gguftool::opset29
