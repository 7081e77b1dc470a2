// DequantizePacked-29 (../shared/spec/onnx-DequantizePacked-29.txt): attribute and size checks.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// The spec's fixed, case-sensitive identifiers and their GGML types.
struct FormatRow {
    std::string_view id;
    GgmlType type;
};

constexpr FormatRow kFormats[] = {
    {"gguf:q4_0", GgmlType::q4_0},       {"gguf:q4_1", GgmlType::q4_1},
    {"gguf:q5_0", GgmlType::q5_0},       {"gguf:q5_1", GgmlType::q5_1},
    {"gguf:q8_0", GgmlType::q8_0},       {"gguf:q8_1", GgmlType::q8_1},
    {"gguf:q2_k", GgmlType::q2_k},       {"gguf:q3_k", GgmlType::q3_k},
    {"gguf:q4_k", GgmlType::q4_k},       {"gguf:q5_k", GgmlType::q5_k},
    {"gguf:q6_k", GgmlType::q6_k},       {"gguf:q8_k", GgmlType::q8_k},
    {"gguf:iq2_xxs", GgmlType::iq2_xxs}, {"gguf:iq2_xs", GgmlType::iq2_xs},
    {"gguf:iq3_xxs", GgmlType::iq3_xxs}, {"gguf:iq1_s", GgmlType::iq1_s},
    {"gguf:iq4_nl", GgmlType::iq4_nl},   {"gguf:iq3_s", GgmlType::iq3_s},
    {"gguf:iq2_s", GgmlType::iq2_s},     {"gguf:iq4_xs", GgmlType::iq4_xs},
    {"gguf:iq1_m", GgmlType::iq1_m},     {"gguf:tq1_0", GgmlType::tq1_0},
    {"gguf:tq2_0", GgmlType::tq2_0},     {"gguf:mxfp4", GgmlType::mxfp4},
    {"gguf:nvfp4", GgmlType::nvfp4},     {"gguf:q1_0", GgmlType::q1_0},
    {"gguf:q2_0", GgmlType::q2_0},
};

GgmlType format_type(const std::string &id) {
    for (const FormatRow &r : kFormats)
        if (r.id == id) return r.type;
    throw Error(
        fmt::format("attribute 'format': unknown format \"{}\" (expected one of the 27 "
                    "identifiers gguf:q4_0 ... gguf:q2_0, lower case)",
                    id));
}

}  // namespace

void run_dequantize_packed(OpContext &ctx) {
    const std::optional<std::string> format = ctx.attr_string("format");
    if (!format) throw Error("attribute 'format' is required");
    const GgmlType type = format_type(*format);
    const TypeTraits &tt = traits(type);

    const std::optional<std::vector<int64_t>> shape = ctx.attr_ints("shape");
    if (!shape) throw Error("attribute 'shape' is required");
    if (shape->empty()) throw Error("attribute 'shape' must have rank at least 1");
    for (int64_t d : *shape)
        if (d < 0)
            throw Error(
                fmt::format("attribute 'shape' {} has a negative dimension", shape_string(*shape)));
    const int64_t last = shape->back();
    if (last % int64_t(tt.block_size) != 0)
        throw Error(
            fmt::format("attribute 'shape' {}: the last dimension {} is not a multiple of "
                        "{}'s {} elements per block",
                        shape_string(*shape), last, *format, tt.block_size));
    const uint64_t elements = shape_elements(*shape, "attribute 'shape'");

    const int64_t out = ctx.attr_int("output_dtype", int64_t(DataType::float32));
    const DataType out_type = static_cast<DataType>(out);
    if (out_type != DataType::float32 && out_type != DataType::float16 &&
        out_type != DataType::bfloat16 && out_type != DataType::float64)
        throw Error(
            fmt::format("attribute 'output_dtype' {} is not FLOAT (1), FLOAT16 (10), "
                        "DOUBLE (11) or BFLOAT16 (16)",
                        out));

    const DeviceTensor &x = ctx.input(0);
    if (x.dtype != DataType::uint8)
        throw Error(fmt::format("input x must be uint8, not {}", dtype_name(x.dtype)));
    if (x.shape.size() != 1)
        throw Error(
            fmt::format("input x must be one-dimensional, not of shape {}", shape_string(x.shape)));
    // product(shape[:-1]) * (shape[-1] / B) * S, computed from the element count (exact: the
    // last dimension is a whole number of blocks).
    const unsigned __int128 need = (unsigned __int128)(elements / tt.block_size) * tt.type_size;
    if (need != (unsigned __int128)x.shape[0])
        throw Error(
            fmt::format("input x is {} bytes but shape {} in {} takes {} ({} blocks of {} "
                        "bytes)",
                        x.shape[0], shape_string(*shape), *format, uint64_t(need),
                        elements / tt.block_size, tt.type_size));

    DeviceTensor &y = ctx.allocate_output(out_type, *shape);
    ctx.backend().dequantize_packed(type, x, y);
}

}  // namespace gguftool::runtime::detail
