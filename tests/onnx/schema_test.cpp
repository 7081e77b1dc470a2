// DequantizePacked-29 and Unpack-29 as ONNX schemas: registration, the spec's examples (the
// repository's ONNX node tests, and the shared ones when present) through ONNX's checker and shape
// inference, and a clear error for every bad attribute.
#include <onnx/defs/schema.h>

#include <fstream>

#include "node_test_dirs.hpp"
#include "onnx_builder.hpp"
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using testkit::attr_int;
using testkit::attr_ints;
using testkit::attr_string;

void add_input(onnx::GraphProto &g, const std::string &name, int32_t type,
               const std::vector<int64_t> &dims) {
    onnx::ValueInfoProto &v = *g.add_input();
    v.set_name(name);
    auto &t = *v.mutable_type()->mutable_tensor_type();
    t.set_elem_type(type);
    auto &s = *t.mutable_shape();
    for (int64_t d : dims) s.add_dim()->set_dim_value(d);
}

// A one-node opset-29 model: graph input x (type, dims), optionally an INT64 scalar initializer
// "count", and output y without a declared shape.
onnx::ModelProto one_node(const std::string &op, int32_t x_type, const std::vector<int64_t> &x_dims,
                          std::vector<onnx::AttributeProto> attrs,
                          std::optional<int64_t> count = std::nullopt) {
    onnx::ModelProto m;
    m.set_ir_version(onnx::IR_VERSION);
    auto &opset = *m.add_opset_import();
    opset.set_domain("");
    opset.set_version(29);
    onnx::GraphProto &g = *m.mutable_graph();
    g.set_name("g");
    add_input(g, "x", x_type, x_dims);
    onnx::NodeProto &n = *g.add_node();
    n.set_op_type(op);
    n.add_input("x");
    if (count) {
        onnx::TensorProto &c = *g.add_initializer();
        c.set_name("count");
        c.set_data_type(onnx_number(DataType::int64));
        c.add_int64_data(*count);
        n.add_input("count");
    }
    n.add_output("y");
    for (auto &a : attrs) *n.add_attribute() = a;
    g.add_output()->set_name("y");
    return m;
}

// Strict shape inference of `m`; returns y's inferred type.
onnx::TypeProto infer_y(onnx::ModelProto m) {
    opset29::register_schemas();
    onnx::ShapeInferenceOptions strict{true, 1, false};
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), strict);
    for (const auto &v : m.graph().value_info())
        if (v.name() == "y") return v.type();
    for (const auto &v : m.graph().output())
        if (v.name() == "y") return v.type();
    throw std::runtime_error("y has no type");
}

std::vector<std::optional<int64_t>> dims_of(const onnx::TypeProto &t) {
    std::vector<std::optional<int64_t>> d;
    for (const auto &dim : t.tensor_type().shape().dim())
        d.push_back(dim.has_dim_value() ? std::optional(dim.dim_value()) : std::nullopt);
    return d;
}

// Shape inference fails, saying `message`.
void expect_inference_error(const onnx::ModelProto &m, const std::string &message) {
    try {
        infer_y(m);
        ADD_FAILURE() << "no error; expected one containing: " << message;
    } catch (const std::exception &e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
            << "error: " << e.what() << "\nexpected it to contain: " << message;
    }
}

TEST(Schemas, RegisteredAtOpset29WithTheSpecsAttributes) {
    opset29::register_schemas();
    opset29::register_schemas();  // idempotent
    const auto &range = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    EXPECT_EQ(range.at("").second, 29);

    const onnx::OpSchema *dq = onnx::OpSchemaRegistry::Schema("DequantizePacked", 29, "");
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->since_version(), 29);
    EXPECT_TRUE(dq->attributes().at("format").required);
    EXPECT_EQ(dq->attributes().at("format").type, onnx::AttributeProto::STRING);
    EXPECT_TRUE(dq->attributes().at("shape").required);
    EXPECT_EQ(dq->attributes().at("shape").type, onnx::AttributeProto::INTS);
    EXPECT_FALSE(dq->attributes().at("output_dtype").required);
    EXPECT_EQ(dq->attributes().at("output_dtype").default_value.i(), 1);
    ASSERT_EQ(dq->inputs().size(), 1u);
    ASSERT_EQ(dq->outputs().size(), 1u);
    EXPECT_EQ(dq->outputs()[0].GetTypes().size(), 4u);  // bfloat16, double, float, float16

    const onnx::OpSchema *up = onnx::OpSchemaRegistry::Schema("Unpack", 29, "");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(up->since_version(), 29);
    EXPECT_EQ(up->attributes().at("axis").default_value.i(), -1);
    for (const char *a : {"bits", "radix", "group_size"})
        EXPECT_FALSE(up->attributes().at(a).required) << a;
    ASSERT_EQ(up->inputs().size(), 2u);
    EXPECT_EQ(up->inputs()[0].GetTypes().size(), 2u);   // uint8, uint32
    EXPECT_EQ(up->outputs()[0].GetTypes().size(), 1u);  // uint8

    // Standard operators still resolve to their newest schema at opset 29.
    const onnx::OpSchema *cast = onnx::OpSchemaRegistry::Schema("Cast", 29, "");
    ASSERT_NE(cast, nullptr);
    EXPECT_LE(cast->since_version(), 17);
}

TEST(Schemas, FormatNamesAreTheSpecsIdentifiers) {
    const std::vector<std::string> spec = {
        "gguf:q4_0",    "gguf:q4_1",   "gguf:q5_0",    "gguf:q5_1",  "gguf:q8_0",   "gguf:q8_1",
        "gguf:q2_k",    "gguf:q3_k",   "gguf:q4_k",    "gguf:q5_k",  "gguf:q6_k",   "gguf:q8_k",
        "gguf:iq2_xxs", "gguf:iq2_xs", "gguf:iq3_xxs", "gguf:iq1_s", "gguf:iq4_nl", "gguf:iq3_s",
        "gguf:iq2_s",   "gguf:iq4_xs", "gguf:iq1_m",   "gguf:tq1_0", "gguf:tq2_0",  "gguf:mxfp4",
        "gguf:nvfp4",   "gguf:q1_0",   "gguf:q2_0"};
    std::vector<std::string> ours;
    for (GgmlType t : testkit::quantized_types()) {
        ours.push_back(opset29::format_name(t));
        EXPECT_EQ(opset29::format_type(ours.back()), t);
    }
    std::sort(ours.begin(), ours.end());
    std::vector<std::string> expected = spec;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(ours, expected);
    EXPECT_EQ(opset29::format_type("gguf:Q4_K"), std::nullopt);  // case-sensitive
    EXPECT_EQ(opset29::format_type("q4_k"), std::nullopt);
    EXPECT_EQ(opset29::format_type("gguf:f32"), std::nullopt);
}

// Every DequantizePacked and Unpack example of the specs, as each set of node tests holds them:
// ONNX's checker accepts the model, and shape inference (with `count` made a constant) gives the
// type and shape of the expected output.
class SpecExamples : public testkit::NodeTestRootTest {};

TEST_P(SpecExamples, PassCheckerAndInferTheExpectedOutput) {
    opset29::register_schemas();
    size_t checked = 0;
    for (const fs::path &dir : testkit::node_test_dirs(GetParam())) {
        const std::string name = dir.filename().string();
        if (name.rfind("test_dequantizepacked", 0) != 0 && name.rfind("test_unpack", 0) != 0)
            continue;
        SCOPED_TRACE(name);
        const std::string model_path = (dir / "model.onnx").string();
        EXPECT_NO_THROW(onnx::checker::check_model(model_path));
        onnx::ModelProto m = load_model(model_path);
        EXPECT_EQ(m.opset_import(0).version(), 29);
        const fs::path data = dir / "test_data_set_0";
        if (fs::exists(data / "input_1.pb")) {  // Unpack's count: make it an initializer
            onnx::TensorProto count;
            std::ifstream in(data / "input_1.pb", std::ios::binary);
            ASSERT_TRUE(count.ParseFromIstream(&in));
            count.set_name(m.graph().input(1).name());
            *m.mutable_graph()->add_initializer() = count;
        }
        onnx::TensorProto expected;
        std::ifstream out(data / "output_0.pb", std::ios::binary);
        ASSERT_TRUE(expected.ParseFromIstream(&out));
        const std::string y = m.graph().output(0).name();
        m.mutable_graph()->mutable_output(0)->clear_type();
        onnx::ShapeInferenceOptions strict{true, 1, false};
        onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), strict);
        const onnx::TypeProto &got = m.graph().output(0).type();
        EXPECT_EQ(got.tensor_type().elem_type(), expected.data_type());
        std::vector<std::optional<int64_t>> want(expected.dims().begin(), expected.dims().end());
        EXPECT_EQ(dims_of(got), want);
        ++checked;
    }
    EXPECT_EQ(checked, 11u);  // 5 DequantizePacked + 6 Unpack examples
}

INSTANTIATE_TEST_SUITE_P(Roots, SpecExamples, ::testing::ValuesIn(testkit::kNodeTestRoots),
                         testkit::root_name);

TEST(Schemas, DequantizePackedInference) {
    const auto y =
        infer_y(one_node("DequantizePacked", onnx_number(DataType::uint8), {36},
                         {attr_string("format", "gguf:q4_0"), attr_ints("shape", {2, 32})}));
    EXPECT_EQ(y.tensor_type().elem_type(), onnx_number(DataType::float32));
    EXPECT_EQ(dims_of(y), (std::vector<std::optional<int64_t>>{2, 32}));

    for (int64_t dtype : {onnx_number(DataType::float16), onnx_number(DataType::bfloat16),
                          onnx_number(DataType::float64)}) {
        const auto t =
            infer_y(one_node("DequantizePacked", onnx_number(DataType::uint8), {2 * 144},
                             {attr_string("format", "gguf:q4_k"), attr_ints("shape", {1, 2, 256}),
                              attr_int("output_dtype", dtype)}));
        EXPECT_EQ(t.tensor_type().elem_type(), dtype);
        EXPECT_EQ(dims_of(t), (std::vector<std::optional<int64_t>>{1, 2, 256}));
    }
    // Empty tensor: the last dimension must still be a multiple of the block size.
    const auto empty =
        infer_y(one_node("DequantizePacked", onnx_number(DataType::uint8), {0},
                         {attr_string("format", "gguf:q2_k"), attr_ints("shape", {0, 256})}));
    EXPECT_EQ(dims_of(empty), (std::vector<std::optional<int64_t>>{0, 256}));
}

TEST(Schemas, UnpackInference) {
    // bits along the last axis, UINT8 and UINT32 storage; count known and unknown.
    auto y =
        infer_y(one_node("Unpack", onnx_number(DataType::uint8), {4, 3}, {attr_int("bits", 3)}, 8));
    EXPECT_EQ(y.tensor_type().elem_type(), onnx_number(DataType::uint8));
    EXPECT_EQ(dims_of(y), (std::vector<std::optional<int64_t>>{4, 8}));
    y = infer_y(one_node("Unpack", onnx_number(DataType::uint32), {2, 7},
                         {attr_int("bits", 5), attr_int("axis", 0)}, 12));
    EXPECT_EQ(dims_of(y), (std::vector<std::optional<int64_t>>{12, 7}));  // ceil(12*5/32) = 2
    y = infer_y(one_node("Unpack", onnx_number(DataType::uint8), {2, 3},
                         {attr_int("radix", 3), attr_int("group_size", 5)}, 15));
    EXPECT_EQ(dims_of(y), (std::vector<std::optional<int64_t>>{2, 15}));  // 3 groups of 8 bits
    // count as a graph input: the axis dimension is unknown, the others stay.
    onnx::ModelProto m =
        one_node("Unpack", onnx_number(DataType::uint8), {5, 2}, {attr_int("bits", 4)});
    add_input(*m.mutable_graph(), "count", onnx_number(DataType::int64), {});
    m.mutable_graph()->mutable_node(0)->add_input("count");
    y = infer_y(m);
    EXPECT_EQ(dims_of(y), (std::vector<std::optional<int64_t>>{5, std::nullopt}));
}

TEST(Schemas, EveryBadAttributeIsAClearError) {
    const auto dq = [](std::vector<onnx::AttributeProto> attrs, int64_t bytes = 18) {
        return one_node("DequantizePacked", onnx_number(DataType::uint8), {bytes},
                        std::move(attrs));
    };
    expect_inference_error(dq({attr_string("format", "gguf:q9_0"), attr_ints("shape", {32})}),
                           "DequantizePacked: attribute 'format': unknown format \"gguf:q9_0\"");
    expect_inference_error(dq({attr_string("format", "gguf:Q4_0"), attr_ints("shape", {32})}),
                           "unknown format \"gguf:Q4_0\"");
    expect_inference_error(
        dq({attr_string("format", "gguf:q4_0"), attr_ints("shape", {2, 33})}),
        "attribute 'shape' [2, 33]: the last dimension 33 is not a multiple of gguf:q4_0's 32 "
        "elements per block");
    expect_inference_error(dq({attr_string("format", "gguf:q4_k"), attr_ints("shape", {128})}),
                           "not a multiple of gguf:q4_k's 256 elements per block");
    expect_inference_error(dq({attr_string("format", "gguf:q4_0"), attr_ints("shape", {})}),
                           "attribute 'shape' must have rank at least 1");
    expect_inference_error(dq({attr_string("format", "gguf:q4_0"), attr_ints("shape", {-1, 32})}),
                           "attribute 'shape' [-1, 32] has a negative dimension");
    expect_inference_error(
        dq({attr_string("format", "gguf:q4_0"), attr_ints("shape", {2, 32})}),
        "input x is 18 bytes but shape [2, 32] in gguf:q4_0 takes 36 (2 blocks of 18 bytes)");
    expect_inference_error(
        dq({attr_string("format", "gguf:q4_0"), attr_ints("shape", {32}),
            attr_int("output_dtype", onnx_number(DataType::int32))}),
        "attribute 'output_dtype' 6 is not FLOAT (1), FLOAT16 (10), DOUBLE (11) or BFLOAT16 (16)");
    expect_inference_error(dq({attr_string("format", "gguf:q8_0"),
                               attr_ints("shape", {int64_t(1) << 40, int64_t(1) << 40, 32})}),
                           "has more than 2^63 - 1 elements");

    const auto up = [](std::vector<onnx::AttributeProto> attrs, int64_t words = 3,
                       int64_t count = 8) {
        return one_node("Unpack", onnx_number(DataType::uint8), {words}, std::move(attrs), count);
    };
    expect_inference_error(
        up({attr_int("bits", 3), attr_int("radix", 3), attr_int("group_size", 5)}),
        "Unpack: attribute 'bits' and attributes 'radix'/'group_size' are mutually exclusive");
    expect_inference_error(up({attr_int("bits", 3), attr_int("radix", 3)}), "mutually exclusive");
    expect_inference_error(up({attr_int("bits", 0)}), "attribute 'bits' 0 is outside [1, 8]");
    expect_inference_error(up({attr_int("bits", 9)}), "attribute 'bits' 9 is outside [1, 8]");
    expect_inference_error(up({}), "needs attribute 'bits', or both 'radix' and 'group_size'");
    expect_inference_error(up({attr_int("radix", 3)}),
                           "attribute 'radix' requires attribute 'group_size'");
    expect_inference_error(up({attr_int("group_size", 5)}),
                           "attribute 'group_size' requires attribute 'radix'");
    expect_inference_error(up({attr_int("radix", 1), attr_int("group_size", 5)}),
                           "attribute 'radix' 1 is outside [2, 256]");
    expect_inference_error(up({attr_int("radix", 257), attr_int("group_size", 1)}),
                           "attribute 'radix' 257 is outside [2, 256]");
    expect_inference_error(up({attr_int("radix", 3), attr_int("group_size", 0)}),
                           "attribute 'group_size' 0 is not positive");
    expect_inference_error(up({attr_int("radix", 3), attr_int("group_size", 40)}),
                           "radix^group_size = 3^40 exceeds 2^63 - 1");
    expect_inference_error(up({attr_int("radix", 2), attr_int("group_size", 63)}), "2^63 exceeds");
    expect_inference_error(up({attr_int("bits", 3), attr_int("axis", 1)}),
                           "attribute 'axis' 1 is out of range for rank 1 (valid: [-1, 0])");
    expect_inference_error(
        up({attr_int("bits", 3)}, 2, 8),
        "input X has 2 words along axis 0 but count 8 needs ceil(8 * 3 / 8) = 3");
    expect_inference_error(up({attr_int("radix", 3), attr_int("group_size", 5)}, 1, 6),
                           "but count 6 needs ceil(ceil(6 / 5) * 8 / 8) = 2");
    expect_inference_error(up({attr_int("bits", 3)}, 3, -1), "input count -1 is negative");
    // The largest radix^group_size allowed passes: 2^62 < 2^63 - 1, and 7^22 ~ 3.9e18.
    EXPECT_NO_THROW(infer_y(up({attr_int("radix", 2), attr_int("group_size", 62)}, 8, 62)));
    EXPECT_NO_THROW(infer_y(up({attr_int("radix", 7), attr_int("group_size", 22)}, 8, 22)));
}

TEST(Schemas, CheckFunctionsFollowTheSpec) {
    const opset29::DequantizePacked d =
        opset29::check_dequantize_packed("gguf:q5_1", std::vector<int64_t>{3, 64}, 16);
    EXPECT_EQ(d.type, GgmlType::q5_1);
    EXPECT_EQ(d.elements, 192u);
    EXPECT_EQ(d.input_bytes, 6u * 24u);
    EXPECT_EQ(d.output_dtype, DataType::bfloat16);

    const opset29::Unpack b = opset29::check_unpack(5, std::nullopt, std::nullopt);
    EXPECT_EQ(b.radix, 32u);
    EXPECT_EQ(b.group_bits, 5u);
    EXPECT_EQ(opset29::unpack_words(b, 7, 32), 2u);  // the spec's UINT32 axis example
    EXPECT_EQ(opset29::unpack_words(b, 3, 8), 2u);   // rows of 5-bit codes
    const opset29::Unpack t = opset29::check_unpack(std::nullopt, 3, 5);
    EXPECT_EQ(t.group_bits, 8u);  // ceil(log2 243)
    EXPECT_EQ(opset29::unpack_words(t, 5, 8), 1u);
    EXPECT_EQ(opset29::unpack_words(t, 2, 8), 1u);
    EXPECT_EQ(opset29::unpack_words(t, 0, 8), 0u);
    const opset29::Unpack p = opset29::check_unpack(std::nullopt, 4, 3);  // 64 = 2^6: W = 6
    EXPECT_EQ(p.group_bits, 6u);
    EXPECT_EQ(opset29::unpack_words(p, 3, 8), 1u);
    EXPECT_EQ(opset29::unpack_words(b, uint64_t(1) << 63, 8), std::nullopt);  // count over INT64
    EXPECT_EQ(opset29::check_unpack_axis(-2, 3), 1);
    EXPECT_THROW(opset29::check_unpack_axis(0, 0), Error);
}

}  // namespace
}  // namespace gguftool::onnxtest
