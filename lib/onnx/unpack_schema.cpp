// Unpack-29 (../shared/spec/onnx-Unpack-29.txt): the attribute rules and the OpSchema with its
// type-and-shape inference.
#include <fmt/format.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <bit>
#include <limits>

#include "gguftool/onnx_schemas.hpp"
#include "schemas.hpp"

namespace gguftool::opset29 {
namespace {

constexpr uint64_t kMaxSize = std::numeric_limits<int64_t>::max();

[[noreturn]] void fail(std::string problem) {
    throw Error("Unpack", std::nullopt, std::move(problem));
}

}  // namespace

Unpack check_unpack(std::optional<int64_t> bits, std::optional<int64_t> radix,
                    std::optional<int64_t> group_size) {
    if (bits && (radix || group_size))
        fail("bits and radix/group_size are mutually exclusive; give one spelling");
    if (bits) {
        if (*bits < 1 || *bits > 8) fail(fmt::format("bits is {}, must be in [1, 8]", *bits));
        const auto b = static_cast<uint32_t>(*bits);
        return {1u << b, 1, b, false};
    }
    if (!radix && !group_size) fail("give either bits, or radix and group_size");
    if (!radix) fail("group_size needs radix");
    if (!group_size) fail("radix needs group_size");
    if (*radix < 2 || *radix > 256) fail(fmt::format("radix is {}, must be in [2, 256]", *radix));
    if (*group_size < 1) fail(fmt::format("group_size is {}, must be positive", *group_size));
    // radix^group_size <= 2^63 - 1, by repeated multiplication (at most 63 steps before it fails).
    uint64_t groups = 1;
    for (int64_t i = 0; i < *group_size; ++i) {
        if (groups > kMaxSize / static_cast<uint64_t>(*radix))
            fail(fmt::format("radix^group_size = {}^{} exceeds 2^63 - 1", *radix, *group_size));
        groups *= static_cast<uint64_t>(*radix);
    }
    // W = ceil(log2(R^G)): the bits needed for group indices 0 .. R^G - 1.
    const auto w = static_cast<uint32_t>(std::bit_width(groups - 1));
    return {static_cast<uint32_t>(*radix), static_cast<uint32_t>(*group_size), w, true};
}

std::optional<uint64_t> unpack_words(const Unpack &u, uint64_t count, unsigned word_bits) {
    const unsigned __int128 groups =
        (static_cast<unsigned __int128>(count) + u.group_size - 1) / u.group_size;
    const unsigned __int128 bits = groups * u.group_bits;
    const unsigned __int128 words = (bits + word_bits - 1) / word_bits;
    if (count > kMaxSize || words > kMaxSize) return std::nullopt;
    return static_cast<uint64_t>(words);
}

int64_t check_unpack_axis(int64_t axis, int64_t rank) {
    if (rank < 1) fail(fmt::format("X has rank {}, must be at least 1", rank));
    if (axis < -rank || axis >= rank)
        fail(fmt::format("axis {} is outside [{}, {}] for rank {}", axis, -rank, rank - 1, rank));
    return axis < 0 ? axis + rank : axis;
}

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
    if (v[0] < 0) fail_shape_inference("Unpack: count is ", v[0], ", must be nonnegative");
    return v[0];
}

void infer(onnx::InferenceContext &ctx) {
    Unpack u;
    try {
        u = check_unpack(int_attribute(ctx, "bits"), int_attribute(ctx, "radix"),
                         int_attribute(ctx, "group_size"));
    } catch (const Error &e) {
        fail_shape_inference(e.what());
    }
    onnx::updateOutputElemType(ctx, 0, kUint8);

    if (onnx::hasInputShape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() != 0)
        fail_shape_inference("Unpack: count must be a scalar, got rank ",
                             onnx::getInputShape(ctx, 1).dim_size());
    const std::optional<int64_t> count = constant_count(ctx);
    if (!onnx::hasInputShape(ctx, 0)) return;

    const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
    int64_t axis = 0;
    try {
        axis = check_unpack_axis(onnx::getAttribute(ctx, "axis", -1), in.dim_size());
    } catch (const Error &e) {
        fail_shape_inference(e.what());
    }
    const int32_t storage = ctx.getInputType(0)->tensor_type().elem_type();
    const unsigned word_bits = storage == kUint32 ? 32 : storage == kUint8 ? 8 : 0;
    const onnx::TensorShapeProto::Dimension &words = in.dim(static_cast<int>(axis));
    if (count && word_bits && words.has_dim_value()) {
        const std::optional<uint64_t> need =
            unpack_words(u, static_cast<uint64_t>(*count), word_bits);
        if (!need || *need != static_cast<uint64_t>(words.dim_value()))
            fail_shape_inference(fmt::format(
                "Unpack: X has {} words of {} bits along axis {} but {} codes of {} need {}",
                words.dim_value(), word_bits, axis, *count,
                u.grouped ? fmt::format("radix {} group_size {}", u.radix, u.group_size)
                          : fmt::format("{} bits", u.group_bits),
                need ? std::to_string(*need) : "more than 2^63 - 1"));
    }
    onnx::TensorShapeProto out = in;
    onnx::TensorShapeProto::Dimension &d = *out.mutable_dim(static_cast<int>(axis));
    d.Clear();
    if (count) d.set_dim_value(*count);
    onnx::updateOutputShape(ctx, 0, out);
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
        .SetLocation(__FILE__, __LINE__);
    return s;
}

}  // namespace detail
}  // namespace gguftool::opset29
