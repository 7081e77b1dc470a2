// DequantizePacked-29 (the spec's onnx-DequantizePacked-29): the OpSchema and its type-and-shape
// inference, on the rules of gguftool/opset29.hpp.
#include <onnx/defs/shape_inference.h>

#include <string>

#include "gguftool/onnx_schemas.hpp"
#include "gguftool/opset29.hpp"
#include "schemas.hpp"

namespace gguftool::opset29 {

namespace detail {
namespace {

constexpr const char *kDocHead = R"DOC(
Dequantizes the packed payload of one quantized tensor. x is a one-dimensional UINT8 tensor
containing exactly the tensor's bytes; all multibyte fields are little-endian.

)DOC";

// After the format paragraph.
constexpr const char *kDocTail = R"DOC(

shape gives the logical output dimensions in ONNX (row-major) order; for a GGUF descriptor
[ne0, ne1, ...] use shape=[..., ne1, ne0]. Rank is at least one, dimensions are nonnegative, and
the last dimension must be a multiple of the format's elements per block B. With S bytes per
block the input length must be product(shape[:-1]) * (shape[-1] / B) * S.

Blocks are decoded in input order to FLOAT, reshaped to shape and converted once to output_dtype
(FLOAT16 and BFLOAT16 round to nearest, ties to even, as in Cast).
)DOC";

// `text` with its spaces turned into line breaks where a line would pass `width` columns.
std::string wrapped(const std::string &text, size_t width) {
    std::string out;
    size_t line = 0;  // where the current line starts in `out`
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find(' ', at);
        if (end == std::string::npos) end = text.size();
        if (at > 0) {
            const bool breaks = out.size() - line + 1 + (end - at) > width;
            out += breaks ? '\n' : ' ';
            if (breaks) line = out.size();
        }
        out.append(text, at, end - at);
        at = end + 1;
    }
    return out;
}

// The format paragraph names every block format of the type table by its identifier.
std::string doc() {
    std::string formats;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (kTypeTable[id].quantized)
            formats += (formats.empty() ? "" : ", ") + format_name(static_cast<GgmlType>(id));
    return kDocHead +
           wrapped(
               "format selects the quantization format with a case-sensitive fixed "
               "identifier; the gguf: prefix names the GGML/GGUF block layouts (" +
                   formats + ").",
               99) +
           kDocTail;
}

void infer(onnx::InferenceContext &ctx) {
    const onnx::AttributeProto *format = ctx.getAttribute("format");
    const onnx::AttributeProto *shape = ctx.getAttribute("shape");
    const onnx::AttributeProto *dtype = ctx.getAttribute("output_dtype");
    if (format && !format->has_s())
        fail_shape_inference("DequantizePacked: attribute 'format' must be a string");
    if (shape && shape->type() != onnx::AttributeProto::INTS)
        fail_shape_inference("DequantizePacked: attribute 'shape' must be ints");
    if (dtype && !dtype->has_i())
        fail_shape_inference("DequantizePacked: attribute 'output_dtype' must be an integer");
    const std::vector<int64_t> dims =
        shape ? std::vector<int64_t>(shape->ints().begin(), shape->ints().end())
              : std::vector<int64_t>();
    try {
        const DequantizePacked op = check_dequantize_packed(
            format ? std::optional<std::string_view>(format->s()) : std::nullopt,
            shape ? std::optional<std::span<const int64_t>>(dims) : std::nullopt,
            dtype ? std::optional<int64_t>(dtype->i()) : std::nullopt);
        onnx::updateOutputElemType(ctx, 0, onnx_number(op.output_dtype));
        if (onnx::hasInputShape(ctx, 0)) {
            std::vector<std::optional<int64_t>> x;
            for (const auto &d : onnx::getInputShape(ctx, 0).dim())
                x.push_back(d.has_dim_value() ? std::optional(d.dim_value()) : std::nullopt);
            check_dequantize_packed_input(op, x);
        }
    } catch (const Error &e) {
        fail_shape_inference("DequantizePacked: ", e.what());
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
        .SetDoc(doc())
        .Attr("format", "ONNX-defined, case-sensitive fixed quantization format identifier.",
              onnx::AttributeProto::STRING, true)
        .Attr("shape", "Logical output dimensions in ONNX order; rank at least one.",
              onnx::AttributeProto::INTS, true)
        .Attr("output_dtype",
              "ONNX TensorProto data type of the output: FLOAT, FLOAT16, BFLOAT16, or DOUBLE.",
              onnx::AttributeProto::INT, static_cast<int64_t>(onnx_number(DataType::float32)))
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
