// Unpack-29 (the spec's onnx-Unpack-29): the OpSchema and its type-and-shape inference, on the
// rules of gguftool/opset29.hpp.
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include "gguftool/lower.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "schemas.hpp"

namespace gguftool::opset29 {

namespace detail {
namespace {

constexpr const char *kDoc = R"DOC(
Unpacks UINT8 or UINT32 storage words into UINT8 unsigned integer codes independently along axis
(default -1). Input and output have the same rank, at least 1; axis is in [-rank, rank-1]. The
input type determines word_bits: 8 for UINT8, 32 for UINT32. Specify either bits in [1, 8], or
both radix and group_size; the two spellings are mutually exclusive.

count is a nonnegative scalar INT64 tensor: the number of output codes along axis. With bits,
the input axis dimension must equal ceil(count * bits / word_bits); bit k of code i is bit
(i * bits + k) % word_bits of word floor((i * bits + k) / word_bits). Each row begins at bit 0 of
a new word; unused high bits of its last word are padding.

Grouped unpacking uses radix R in [2, 256] and group size G >= 1 with R^G <= 2^63 - 1. Groups of
W = ceil(log2(R^G)) bits, least significant bit first and without word alignment, are expanded
into G base-R digits, least significant first, and trimmed to count codes per row. The input axis
dimension must equal ceil(ceil(count / G) * W / word_bits). (bits is (R, G) = (2^bits, 1).)
)DOC";

std::optional<int64_t> int_attribute(onnx::InferenceContext &ctx, const char *name) {
    const onnx::AttributeProto *a = ctx.getAttribute(name);
    if (!a) return std::nullopt;
    if (!a->has_i()) fail_shape_inference("Unpack: attribute '", name, "' must be an integer");
    return a->i();
}

// The value of `count` when it is a constant (an initializer or Constant node), else nullopt.
std::optional<int64_t> constant_count(onnx::InferenceContext &ctx) {
    const onnx::TensorProto *t = ctx.getInputData(1);
    if (!t) return std::nullopt;
    if (t->dims_size() != 0)
        fail_shape_inference("Unpack: count must be a scalar, got rank ", t->dims_size());
    const std::vector<int64_t> v = onnx::ParseData<int64_t>(t);
    if (v.size() != 1) fail_shape_inference("Unpack: count must hold one value");
    return v[0];
}

void infer(onnx::InferenceContext &ctx) {
    onnx::updateOutputElemType(ctx, 0, onnx_number(DataType::uint8));
    if (onnx::hasInputShape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() != 0)
        fail_shape_inference("Unpack: input count must be a scalar, got rank ",
                             onnx::getInputShape(ctx, 1).dim_size());
    const std::optional<int64_t> count = constant_count(ctx);
    try {
        const Unpack u = check_unpack(int_attribute(ctx, "bits"), int_attribute(ctx, "radix"),
                                      int_attribute(ctx, "group_size"));
        if (count) check_unpack_count(*count);
        if (!onnx::hasInputShape(ctx, 0)) return;
        const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
        const int64_t axis = check_unpack_axis(onnx::getAttribute(ctx, "axis", -1), in.dim_size());
        const std::optional<DataType> storage =
            dtype_from_onnx(ctx.getInputType(0)->tensor_type().elem_type());
        const onnx::TensorShapeProto::Dimension &words = in.dim(static_cast<int>(axis));
        if (count && storage && words.has_dim_value())
            check_unpack_words(u, *count, unpack_word_bits(*storage), axis, words.dim_value());
        onnx::TensorShapeProto out = in;
        onnx::TensorShapeProto::Dimension &d = *out.mutable_dim(static_cast<int>(axis));
        d.Clear();
        if (count) d.set_dim_value(*count);
        onnx::updateOutputShape(ctx, 0, out);
    } catch (const Error &e) {
        fail_shape_inference("Unpack: ", e.what());
    }
}

// The spec marks Unpack `function: True`: its body is gguftool's lowering at opset 17 (lib/lower),
// which depends on the attributes and on X's type and rank.
bool function_body(const onnx::FunctionBodyBuildContext &ctx, const onnx::OpSchema &,
                   onnx::FunctionProto &function) {
    const onnx::TypeProto *x = ctx.getInputType(0);
    if (!x || !x->has_tensor_type()) return false;
    onnx::NodeProto node;
    for (const char *name : {"axis", "bits", "radix", "group_size"})
        if (const onnx::AttributeProto *a = ctx.getAttribute(name)) *node.add_attribute() = *a;
    const auto &t = x->tensor_type();
    return lower::unpack_function_body(node, t.elem_type(),
                                       t.has_shape() ? t.shape().dim_size() : -1, function);
}

}  // namespace

onnx::OpSchema unpack_schema() {
    onnx::OpSchema s;
    s.SetName("Unpack")
        .SetDomain(onnx::ONNX_DOMAIN)
        .SinceVersion(kOpsetVersion)
        .SetSupportLevel(onnx::OpSchema::SupportType::COMMON)
        .SetDoc(kDoc)
        .Attr("axis",
              "Axis along which independent sequences are unpacked. Negative axes are supported.",
              onnx::AttributeProto::INT, static_cast<int64_t>(-1))
        .Attr("bits", "Number of bits per unsigned code. Mutually exclusive with radix/group_size.",
              onnx::AttributeProto::INT, false)
        .Attr("group_size",
              "Codes per group. Positive; radix^group_size must fit in positive INT64.",
              onnx::AttributeProto::INT, false)
        .Attr("radix", "Base of grouped codes, in [2, 256]. Requires group_size; excludes bits.",
              onnx::AttributeProto::INT, false)
        .Input(0, "X",
               "UINT8 or UINT32 tensor of rank at least 1, with the exact packed word count along "
               "axis.",
               "TStorage")
        .Input(1, "count",
               "Scalar INT64 tensor giving the logical output length along axis. Must be "
               "nonnegative.",
               "tensor(int64)")
        .Output(0, "Y",
                "UINT8 tensor preserving every dimension except axis, which becomes count. Each "
                "element is below the selected radix.",
                "T")
        .TypeConstraint("T", {"tensor(uint8)"}, "Unsigned byte tensors.")
        .TypeConstraint("TStorage", {"tensor(uint32)", "tensor(uint8)"},
                        "Unsigned storage word tensors.")
        .TypeAndShapeInferenceFunction(infer)
        .SetContextDependentFunctionBodyBuilder(function_body)
        .SetLocation(__FILE__, __LINE__);
    return s;
}

}  // namespace detail
}  // namespace gguftool::opset29
