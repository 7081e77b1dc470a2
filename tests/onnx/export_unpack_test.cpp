// Unpack mode: the ten bit-field formats become Unpack + standard operators whose FLOAT outputs
// equal packed mode's (and llama.cpp's) bit for bit; other formats fall back to DequantizePacked.
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

struct Converted {
    onnx::ModelProto model;
    std::map<std::string, runtime::Tensor> outputs;
};

Converted convert_and_run(const std::string &gguf_path, const std::string &onnx_path, Mode mode,
                          DataType out = DataType::float32) {
    onnx_export::Options o;
    o.mode = mode;
    o.output_type = out;
    onnx_export::export_model(gguf::Model::open(gguf_path), onnx_path, o);
    Converted c{check_model(onnx_path), run(onnx_path)};
    return c;
}

class UnpackFormat : public testing::TestWithParam<GgmlType> {};

TEST_P(UnpackFormat, BitIdenticalToPackedModeAndLlama) {
    const GgmlType type = GetParam();
    const TypeTraits &tt = traits(type);
    TempDir dir;
    // llama.cpp-quantized rows of ordinary and of wild values (scales near the f16 limits), a
    // 3-D tensor of random blocks (any bit pattern, NaN and infinite scales included) and an
    // empty tensor.
    std::vector<TensorSpec> tensors = {
        {"normal", type, {512, 3}, llama_quantized(type, 3, 512, testkit::Distribution::normal, 1)},
        {"mixed", type, {512, 4}, llama_quantized(type, 4, 512, testkit::Distribution::mixed, 2)},
        {"random",
         type,
         {256, 2, 3},
         testkit::random_bytes(6 * 256 / tt.block_size * tt.type_size, 3)},
        {"empty", type, {256, 0}, {}},
    };
    write_gguf(dir.file("m.gguf"), tensors);
    const Converted packed =
        convert_and_run(dir.file("m.gguf"), dir.file("packed.onnx"), Mode::packed);
    const Converted unpack =
        convert_and_run(dir.file("m.gguf"), dir.file("unpack.onnx"), Mode::unpack);

    EXPECT_EQ(count_ops(unpack.model, "DequantizePacked"), 0u);
    EXPECT_EQ(count_ops(unpack.model, "Unpack"), tensors.size());
    for (const TensorSpec &t : tensors) {
        SCOPED_TRACE(t.name);
        const runtime::Tensor &p = packed.outputs.at(t.name), &u = unpack.outputs.at(t.name);
        EXPECT_EQ(u.shape(), p.shape());
        const bool random = t.name == "random";  // NaN scales: any NaN matches any NaN
        EXPECT_TRUE(same_bits(floats(p), floats(u), random ? Nans::any : Nans::exact));
        if (!random) {
            EXPECT_TRUE(same_bits(llama_decode(llama(), type, t.bytes), floats(u), Nans::exact));
        }
    }
}

// The conversion to float16/bfloat16 after the FLOAT decode gives the same bits too.
TEST_P(UnpackFormat, NarrowOutputsMatchPackedMode) {
    const GgmlType type = GetParam();
    TempDir dir;
    write_gguf(
        dir.file("m.gguf"),
        {{"w", type, {512, 2}, llama_quantized(type, 2, 512, testkit::Distribution::mixed, 9)}});
    for (DataType out : {DataType::float16, DataType::bfloat16}) {
        const auto p = convert_and_run(dir.file("m.gguf"), dir.file("p.onnx"), Mode::packed, out);
        const auto u = convert_and_run(dir.file("m.gguf"), dir.file("u.onnx"), Mode::unpack, out);
        EXPECT_EQ(int(u.outputs.at("w").dtype()), int(out));
        EXPECT_EQ(u.outputs.at("w").to_vector<uint16_t>(), p.outputs.at("w").to_vector<uint16_t>())
            << dtype_name(out);
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, UnpackFormat, testing::ValuesIn(kUnpackFormats), param_name);

// The initializers: codes in element order (bits wide), fp16 scales copied from the blocks.
TEST(Unpack, Q4_0InitializersAreCodesInElementOrderAndScales) {
    TempDir dir;
    std::vector<uint8_t> block(18);
    block[0] = 0x00;
    block[1] = 0x38;  // d = 0.5 (fp16 0x3800)
    for (int j = 0; j < 16; ++j) block[2 + j] = uint8_t(j | (15 - j) << 4);
    write_gguf(dir.file("m.gguf"), {{"w", GgmlType::q4_0, {32}, block}});
    const Converted c = convert_and_run(dir.file("m.gguf"), dir.file("m.onnx"), Mode::unpack);
    const onnx::TensorProto *codes = find_initializer(c.model, "w:codes");
    const onnx::TensorProto *scales = find_initializer(c.model, "w:scales");
    ASSERT_NE(codes, nullptr);
    ASSERT_NE(scales, nullptr);
    EXPECT_EQ(scales->data_type(), onnx_number(DataType::float16));
    EXPECT_EQ(scales->raw_data(), std::string("\x00\x38", 2));
    // Elements 0..15 are j, elements 16..31 are 15 - j; two 4-bit codes per byte, low first.
    std::string expected;
    for (int e = 0; e < 32; e += 2) {
        const auto code = [](int i) { return i < 16 ? i : 15 - (i - 16); };
        expected.push_back(char(code(e) | code(e + 1) << 4));
    }
    EXPECT_EQ(codes->raw_data(), expected);
    std::vector<float> want(32);
    for (int j = 0; j < 16; ++j) {
        want[j] = float(j - 8) * 0.5f;
        want[j + 16] = float(15 - j - 8) * 0.5f;
    }
    EXPECT_EQ(floats(c.outputs.at("w")), want);
}

TEST(Unpack, OtherFormatsFallBackToDequantizePacked) {
    TempDir dir;
    std::vector<TensorSpec> tensors;
    for (GgmlType type : {GgmlType::q4_k, GgmlType::q3_k, GgmlType::tq1_0, GgmlType::q4_0})
        tensors.push_back({type_name(type),
                           type,
                           {256, 2},
                           llama_quantized(type, 2, 256, testkit::Distribution::normal, 5)});
    write_gguf(dir.file("m.gguf"), tensors);
    onnx_export::Options o;
    o.mode = Mode::unpack;
    const auto r =
        onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
    EXPECT_EQ(r.unpacked, 1u);
    EXPECT_EQ(r.packed, 3u);
    const onnx::ModelProto m = check_model(dir.file("m.onnx"));
    EXPECT_EQ(count_ops(m, "DequantizePacked"), 3u);
    EXPECT_EQ(count_ops(m, "Unpack"), 1u);
    const auto outputs = run(dir.file("m.onnx"));
    for (const TensorSpec &t : tensors)
        EXPECT_TRUE(same_bits(llama_decode(llama(), t.type, t.bytes), floats(outputs.at(t.name)),
                              Nans::exact))
            << t.name;
}

}  // namespace
}  // namespace gguftool::onnxtest
