// DequantizePacked-29 (../shared/spec/onnx-DequantizePacked-29.txt): the attribute rules and the
// OpSchema with its type-and-shape inference.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/shape_inference.h>

#include <limits>

#include "gguftool/onnx_schemas.hpp"
#include "schemas.hpp"

namespace gguftool::opset29 {
namespace {

constexpr uint64_t kMaxSize = std::numeric_limits<int64_t>::max();

[[noreturn]] void fail(std::string problem) {
    throw Error("DequantizePacked", std::nullopt, std::move(problem));
}

bool is_float_output(int64_t dtype) {
    return dtype == kFloat || dtype == kFloat16 || dtype == kBfloat16 || dtype == kDouble;
}

}  // namespace

DequantizePacked check_dequantize_packed(std::string_view format, std::span<const int64_t> shape,
                                         int64_t output_dtype) {
    const std::optional<GgmlType> type = format_type(format);
    if (!type)
        fail(
            fmt::format("unknown format '{}' (expected a fixed identifier such as gguf:q4_0; "
                        "identifiers are lowercase)",
                        format));
    if (shape.empty()) fail("shape must have rank at least 1");
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] < 0)
            fail(fmt::format("shape [{}]: dimension {} is negative", fmt::join(shape, ", "), i));
    const TypeTraits &t = traits(*type);
    const uint64_t last = static_cast<uint64_t>(shape.back());
    if (last % t.block_size != 0)
        fail(fmt::format("shape [{}]: last dimension {} is not a multiple of {}'s block size {}",
                         fmt::join(shape, ", "), last, format, t.block_size));
    if (!is_float_output(output_dtype))
        fail(
            fmt::format("output_dtype {} is not FLOAT (1), FLOAT16 (10), DOUBLE (11) or "
                        "BFLOAT16 (16)",
                        output_dtype));

    // product(shape); with a zero dimension the others may be anything.
    uint64_t elements = 1;
    for (int64_t d : shape) {
        if (d == 0) {
            elements = 0;
            break;
        }
    }
    for (int64_t d : shape) {
        if (elements == 0) break;
        if (elements > kMaxSize / static_cast<uint64_t>(d))
            fail(fmt::format("shape [{}] has more than 2^63 - 1 elements", fmt::join(shape, ", ")));
        elements *= static_cast<uint64_t>(d);
    }
    const uint64_t blocks = elements / t.block_size;
    if (blocks > kMaxSize / t.type_size)
        fail(fmt::format("shape [{}] of {} needs more than 2^63 - 1 bytes", fmt::join(shape, ", "),
                         format));
    return {*type,
            {shape.begin(), shape.end()},
            static_cast<int32_t>(output_dtype),
            elements,
            blocks * t.type_size};
}

namespace detail {
namespace {

constexpr const char *kDoc = R"DOC(
Dequantizes the packed payload of one quantized tensor. x is a one-dimensional UINT8 tensor
containing exactly the tensor's bytes; all multibyte fields are little-endian.

format selects the quantization format with a case-sensitive fixed identifier; the gguf: prefix
names the GGML/GGUF block layouts (gguf:q4_0, gguf:q4_1, gguf:q5_0, gguf:q5_1, gguf:q8_0,
gguf:q8_1, gguf:q2_k, gguf:q3_k, gguf:q4_k, gguf:q5_k, gguf:q6_k, gguf:q8_k, gguf:iq2_xxs,
gguf:iq2_xs, gguf:iq3_xxs, gguf:iq1_s, gguf:iq4_nl, gguf:iq3_s, gguf:iq2_s, gguf:iq4_xs,
gguf:iq1_m, gguf:tq1_0, gguf:tq2_0, gguf:mxfp4, gguf:nvfp4, gguf:q1_0, gguf:q2_0).

shape gives the logical output dimensions in ONNX (row-major) order; for a GGUF descriptor
[ne0, ne1, ...] use shape=[..., ne1, ne0]. Rank is at least one, dimensions are nonnegative, and
the last dimension must be a multiple of the format's elements per block B. With S bytes per
block the input length must be product(shape[:-1]) * (shape[-1] / B) * S.

Blocks are decoded in input order to FLOAT, reshaped to shape and converted once to output_dtype
(FLOAT16 and BFLOAT16 round to nearest, ties to even, as in Cast).
)DOC";

void infer(onnx::InferenceContext &ctx) {
    const onnx::AttributeProto *format = ctx.getAttribute("format");
    const onnx::AttributeProto *shape = ctx.getAttribute("shape");
    if (!format || !format->has_s())
        fail_shape_inference("DequantizePacked: attribute 'format' (a string) is required");
    if (!shape || shape->type() != onnx::AttributeProto::INTS)
        fail_shape_inference("DequantizePacked: attribute 'shape' (ints) is required");
    const int64_t output_dtype = onnx::getAttribute(ctx, "output_dtype", kFloat);
    const std::vector<int64_t> dims(shape->ints().begin(), shape->ints().end());

    DequantizePacked op;
    try {
        op = check_dequantize_packed(format->s(), dims, output_dtype);
    } catch (const Error &e) {
        fail_shape_inference(e.what());
    }
    onnx::updateOutputElemType(ctx, 0, op.output_dtype);

    if (onnx::hasInputShape(ctx, 0)) {
        const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
        if (in.dim_size() != 1)
            fail_shape_inference("DequantizePacked: x must be one-dimensional, got rank ",
                                 in.dim_size());
        if (in.dim(0).has_dim_value() &&
            static_cast<uint64_t>(in.dim(0).dim_value()) != op.input_bytes)
            fail_shape_inference(fmt::format(
                "DequantizePacked: x holds {} bytes but {} with shape [{}] needs {}",
                in.dim(0).dim_value(), format->s(), fmt::join(dims, ", "), op.input_bytes));
    }
    onnx::TensorShapeProto out;
    for (int64_t d : dims) out.add_dim()->set_dim_value(d);
    onnx::updateOutputShape(ctx, 0, out);
}

}  // namespace

onnx::OpSchema dequantize_packed_schema() {
    onnx::OpSchema s;
    s.SetName("DequantizePacked")
        .SetDomain(onnx::ONNX_DOMAIN)
        .SinceVersion(kOpsetVersion)
        .SetSupportLevel(onnx::OpSchema::SupportType::COMMON)
        .SetDoc(kDoc)
        .Attr("format", "ONNX-defined, case-sensitive fixed quantization format identifier.",
              onnx::AttributeProto::STRING, true)
        .Attr("shape", "Logical output dimensions in ONNX order; rank at least one.",
              onnx::AttributeProto::INTS, true)
        .Attr("output_dtype",
              "ONNX TensorProto data type of the output: FLOAT, FLOAT16, BFLOAT16, or DOUBLE.",
              onnx::AttributeProto::INT, static_cast<int64_t>(kFloat))
        .Input(0, "x", "Consecutive quantization blocks with little-endian fields.",
               "tensor(uint8)")
        .Output(0, "y", "Dequantized tensor with the specified shape and output_dtype.", "T")
        .TypeConstraint("T",
                        {"tensor(bfloat16)", "tensor(double)", "tensor(float)", "tensor(float16)"},
                        "Floating-point output.")
        .TypeAndShapeInferenceFunction(infer)
        .SetLocation(__FILE__, __LINE__);
    return s;
}

}  // namespace detail
}  // namespace gguftool::opset29
