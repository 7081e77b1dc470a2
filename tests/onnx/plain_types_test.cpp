// Plain floating tensors (f32 f16 bf16 f64) take the output type in every mode, rounded once to
// nearest even (checked against the tests' own rounding by search, reference_rounding.hpp);
// integer tensors keep theirs. And the opset each mode's model imports.
#include <bit>

#include "../quant/reference_rounding.hpp"
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

// Values each 16-bit format rounds in its own way: ties, subnormals, over- and underflow.
std::vector<double> sample_values() {
    std::vector<double> v = {0.0,     -0.0,     1.0,       -2.5,          1.0009765625, 65504.0,
                             65520.0, 1e-8,     6.1e-5,    1e30,          -1e30,        3.0e38,
                             1e-40,   INFINITY, -INFINITY, 1.00048828125, 257.0 / 256};
    for (float f : testkit::make_values(testkit::Distribution::normal, 47, 5))
        v.push_back(double(f) * (1 + 1e-9));  // bits beyond float's, for f64 tensors
    return v;
}

// `values` stored as `type`, and the value each element then holds (exact in a long double).
struct Stored {
    std::vector<uint8_t> bytes;
    std::vector<long double> values;
};

template <class T>
void append(std::vector<uint8_t> &out, T v) {
    const auto *p = reinterpret_cast<const uint8_t *>(&v);
    out.insert(out.end(), p, p + sizeof v);
}

Stored store(GgmlType type, const std::vector<double> &values) {
    Stored s;
    for (double d : values) {
        const float f = static_cast<float>(d);
        uint16_t h = 0;
        switch (type) {
            case GgmlType::f64:
                append(s.bytes, d);
                s.values.push_back(d);
                break;
            case GgmlType::f32:
                append(s.bytes, f);
                s.values.push_back(f);
                break;
            default:
                const testref::NarrowReference &ref = type == GgmlType::f16
                                                          ? testref::half_reference()
                                                          : testref::bfloat16_reference();
                h = ref.from_float(f);
                append(s.bytes, h);
                s.values.push_back(ref.value(h));
        }
    }
    return s;
}

// `x` in `out`'s format, rounded once to nearest even, as its bytes.
std::vector<uint8_t> expected_bytes(long double x, DataType out) {
    std::vector<uint8_t> b;
    if (out == DataType::float64)
        append(b, static_cast<double>(x));  // exact: every source value is a double
    else if (out == DataType::float32)
        append(b, static_cast<float>(static_cast<double>(x)));  // one rounding (x is a double)
    else
        append(b, (out == DataType::float16 ? testref::half_reference()
                                            : testref::bfloat16_reference())
                      .round(x));
    return b;
}

TEST(PlainTypes, FloatingTensorsTakeTheOutputTypeRoundedOnce) {
    TempDir dir;
    const std::vector<double> values = sample_values();
    const std::vector<GgmlType> floating = {GgmlType::f32, GgmlType::f16, GgmlType::bf16,
                                            GgmlType::f64};
    std::vector<TensorSpec> tensors;
    std::vector<Stored> stored;
    for (GgmlType type : floating) {
        stored.push_back(store(type, values));
        tensors.push_back(
            {std::string("plain.") + type_name(type), type, {values.size()}, stored.back().bytes});
    }
    const std::vector<uint8_t> ints = testkit::random_bytes(4 * values.size(), 9);
    tensors.push_back({"plain.i32", GgmlType::i32, {values.size()}, ints});
    write_gguf(dir.file("m.gguf"), tensors);

    for (Mode mode : {Mode::packed, Mode::unpack, Mode::dequantized}) {
        for (DataType out :
             {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64}) {
            SCOPED_TRACE(std::string(onnx_export::mode_name(mode)) + " " + dtype_name(out));
            onnx_export::Options o;
            o.mode = mode;
            o.output_type = out;
            onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
            const onnx::ModelProto m = check_model(dir.file("m.onnx"));
            const auto outputs = run(dir.file("m.onnx"));
            for (size_t t = 0; t < floating.size(); ++t) {
                const runtime::Tensor &got = outputs.at(tensors[t].name);
                ASSERT_EQ(int(got.dtype()), int(out)) << tensors[t].name;
                const size_t w = dtype_size(out);
                for (size_t i = 0; i < values.size(); ++i) {
                    const std::vector<uint8_t> want = expected_bytes(stored[t].values[i], out);
                    ASSERT_TRUE(std::equal(want.begin(), want.end(), got.bytes().begin() + i * w))
                        << tensors[t].name << " element " << i << " = "
                        << double(stored[t].values[i]);
                }
            }
            const runtime::Tensor &i32 = outputs.at("plain.i32");
            EXPECT_EQ(i32.dtype(), DataType::int32);
            EXPECT_TRUE(
                std::equal(ints.begin(), ints.end(), i32.bytes().begin(), i32.bytes().end()));
            // Dequantized mode: the lowest opset whose Identity takes the types (bfloat16: 13).
            const int opset = mode != Mode::dequantized ? 29 : out == DataType::bfloat16 ? 13 : 7;
            ASSERT_EQ(m.opset_import_size(), 1);
            EXPECT_EQ(m.opset_import(0).version(), opset);
        }
    }
}

// The opset check is ONNX's, not ours: a bfloat16 Identity at opset 7 is refused by the checker
// that check_model runs, so the 13 above is needed, not only chosen.
TEST(PlainTypes, Bfloat16IdentityNeedsOpset13) {
    TempDir dir;
    write_gguf(dir.file("m.gguf"), {{"w", GgmlType::bf16, {2}, {0x80, 0x3f, 0, 0xc0}}});
    onnx_export::Options o;
    o.mode = Mode::dequantized;
    o.keep_plain_types = true;
    onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
    onnx::ModelProto m = load_model(dir.file("m.onnx"));
    EXPECT_EQ(m.opset_import(0).version(), 13);
    m.mutable_opset_import(0)->set_version(7);
    onnx::ShapeInferenceOptions strict{true, 1, false};
    EXPECT_ANY_THROW(
        onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), strict));
}

}  // namespace
}  // namespace gguftool::onnxtest
