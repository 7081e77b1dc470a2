// Packed and dequantized export of every GGML format and plain type: GGUF files written with
// llama.cpp-quantized tensors, converted, checked by ONNX's checker and shape inference, run by the
// runtime, and compared with llama.cpp's dequantize_row_* bit for bit.
#include "../quant/reference_rounding.hpp"
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

// A quantized tensor of `type`, two rows of two super-blocks (every block size divides 512).
TensorSpec quantized_tensor(GgmlType type, const std::string &name, uint64_t seed) {
    const uint64_t n_per_row = 512, rows = 2;
    return {name,
            type,
            {n_per_row, rows},
            llama_quantized(type, rows, n_per_row, testkit::Distribution::normal, seed)};
}

onnx_export::Result convert(const std::string &in, const std::string &out, Mode mode,
                            DataType type = DataType::float32, bool keep_plain_types = false) {
    onnx_export::Options o;
    o.mode = mode;
    o.output_type = type;
    o.keep_plain_types = keep_plain_types;
    return onnx_export::export_model(gguf::Model::open(in), out, o);
}

// Dequantized mode stores llama.cpp's values as plain FLOAT initializers.
void expect_dequantized_model_holds(const TempDir &dir, const TensorSpec &t) {
    convert(dir.file("m.gguf"), dir.file("d.onnx"), Mode::dequantized);
    const onnx::ModelProto m = check_model(dir.file("d.onnx"));
    EXPECT_EQ(count_ops(m, "DequantizePacked"), 0u);
    const onnx::NodeProto *n = producer(m, t.name);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->op_type(), "Identity");
    const onnx::TensorProto *v = find_initializer(m, n->input(0));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->data_type(), onnx_number(DataType::float32));
    std::vector<float> stored(1024);
    ASSERT_EQ(v->raw_data().size(), stored.size() * 4);
    std::memcpy(stored.data(), v->raw_data().data(), v->raw_data().size());
    EXPECT_TRUE(same_bits(llama_decode(llama(), t.type, t.bytes), stored, Nans::exact));
}

class EveryFormat : public testing::TestWithParam<GgmlType> {};

// One test per format, so llama.cpp quantizes (and builds its iq code books) once.
TEST_P(EveryFormat, PackedAndDequantizedModelsDecodeLikeLlama) {
    const GgmlType type = GetParam();
    TempDir dir;
    const TensorSpec t = quantized_tensor(type, "blk.0.ffn_up.weight", 7);
    write_gguf(dir.file("m.gguf"), {t});
    const onnx_export::Result r = convert(dir.file("m.gguf"), dir.file("m.onnx"), Mode::packed);
    EXPECT_EQ(r.tensors, 1u);
    EXPECT_EQ(r.packed, 1u);
    EXPECT_TRUE(r.data_path.empty());

    const onnx::ModelProto m = check_model(dir.file("m.onnx"));
    ASSERT_EQ(m.opset_import_size(), 1);
    EXPECT_EQ(m.opset_import(0).domain(), "");
    EXPECT_EQ(m.opset_import(0).version(), 29);
    ASSERT_EQ(m.graph().output_size(), 1);
    EXPECT_EQ(m.graph().output(0).name(), t.name);
    EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx_number(DataType::float32));

    const onnx::NodeProto *n = producer(m, t.name);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->op_type(), "DequantizePacked");
    EXPECT_EQ(attribute(*n, "format")->s(), opset29::format_name(type));
    const auto &shape = attribute(*n, "shape")->ints();
    EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), (std::vector<int64_t>{2, 512}));
    EXPECT_EQ(attribute(*n, "output_dtype")->i(), onnx_number(DataType::float32));
    const onnx::TensorProto *x = find_initializer(m, n->input(0));
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->data_type(), onnx_number(DataType::uint8));
    ASSERT_EQ(x->dims_size(), 1);
    EXPECT_EQ(x->dims(0), int64_t(t.bytes.size()));
    EXPECT_TRUE(x->raw_data() == std::string(t.bytes.begin(), t.bytes.end()));

    const auto outputs = run(dir.file("m.onnx"));
    ASSERT_EQ(outputs.count(t.name), 1u);
    EXPECT_EQ(outputs.at(t.name).shape(), (runtime::Shape{2, 512}));
    EXPECT_TRUE(
        same_bits(llama_decode(llama(), type, t.bytes), floats(outputs.at(t.name)), Nans::exact));

    expect_dequantized_model_holds(dir, t);
}

INSTANTIATE_TEST_SUITE_P(Formats, EveryFormat, testing::ValuesIn(testkit::quantized_types()),
                         param_name);

// float16 and bfloat16 outputs are llama.cpp's floats rounded once to nearest even; double is
// them widened. In packed mode (DequantizePacked) and in dequantized mode (the initializers).
TEST(Export, OutputTypesRoundLlamasFloatsOnce) {
    const testref::NarrowReference half(10, 5), bf16(7, 8);
    TempDir dir;
    std::vector<TensorSpec> tensors;
    for (GgmlType type : {GgmlType::q4_k, GgmlType::q6_k, GgmlType::q8_0, GgmlType::nvfp4})
        tensors.push_back(quantized_tensor(type, type_name(type), 3));
    write_gguf(dir.file("m.gguf"), tensors);
    for (Mode mode : {Mode::packed, Mode::dequantized}) {
        for (DataType out : {DataType::float16, DataType::bfloat16, DataType::float64}) {
            SCOPED_TRACE(std::string(onnx_export::mode_name(mode)) + " " + dtype_name(out));
            convert(dir.file("m.gguf"), dir.file("m.onnx"), mode, out);
            check_model(dir.file("m.onnx"));
            const auto outputs = run(dir.file("m.onnx"));
            for (const TensorSpec &t : tensors) {
                const std::vector<float> ref = llama_decode(llama(), t.type, t.bytes);
                ASSERT_EQ(ref.size(), 1024u) << t.name;
                const runtime::Tensor &got = outputs.at(t.name);
                ASSERT_EQ(int(got.dtype()), int(out)) << t.name;
                if (out == DataType::float64) {
                    const std::vector<double> d = got.to_vector<double>();
                    for (size_t i = 0; i < ref.size(); ++i)
                        ASSERT_TRUE(d[i] == double(ref[i]) ||
                                    (std::isnan(d[i]) && std::isnan(ref[i])))
                            << t.name << " " << i;
                    continue;
                }
                const testref::NarrowReference &narrow = out == DataType::float16 ? half : bf16;
                const std::vector<uint16_t> h = got.to_vector<uint16_t>();
                for (size_t i = 0; i < ref.size(); ++i)
                    ASSERT_EQ(h[i], narrow.from_float(ref[i]))
                        << t.name << " " << i << " " << ref[i];
            }
        }
    }
}

// With keep_plain_types, plain tensors keep their type and bytes in every mode, exposed under
// their own name. (Without it, see plain_types_test.cpp.)
TEST(Export, PlainTensorsKeepTypeShapeAndBytes) {
    TempDir dir;
    std::vector<TensorSpec> tensors;
    const std::vector<std::pair<GgmlType, int32_t>> types = {
        {GgmlType::f32, onnx_number(DataType::float32)},
        {GgmlType::f16, onnx_number(DataType::float16)},
        {GgmlType::bf16, onnx_number(DataType::bfloat16)},
        {GgmlType::f64, onnx_number(DataType::float64)},
        {GgmlType::i8, onnx_number(DataType::int8)},
        {GgmlType::i16, onnx_number(DataType::int16)},
        {GgmlType::i32, onnx_number(DataType::int32)},
        {GgmlType::i64, onnx_number(DataType::int64)}};
    for (size_t i = 0; i < types.size(); ++i) {
        const GgmlType type = types[i].first;
        const std::vector<uint64_t> dims = {5, 3, 2};
        tensors.push_back({std::string("plain.") + type_name(type), type, dims,
                           testkit::random_bytes(30 * traits(type).type_size, i)});
    }
    tensors.push_back({"scalar", GgmlType::f32, {}, {0, 0, 0x80, 0x3f}});
    write_gguf(dir.file("m.gguf"), tensors);
    for (Mode mode : {Mode::packed, Mode::unpack, Mode::dequantized}) {
        SCOPED_TRACE(onnx_export::mode_name(mode));
        convert(dir.file("m.gguf"), dir.file("m.onnx"), mode, DataType::float32, true);
        const onnx::ModelProto m = check_model(dir.file("m.onnx"));
        // A bfloat16 Identity needs opset 13 (ONNX's checker above holds the model to it).
        EXPECT_EQ(m.opset_import(0).version(), mode == Mode::dequantized ? 13 : 29);
        const auto outputs = run(dir.file("m.onnx"));
        for (size_t i = 0; i < tensors.size(); ++i) {
            const TensorSpec &t = tensors[i];
            const int32_t want =
                i < types.size() ? types[i].second : onnx_number(DataType::float32);
            EXPECT_EQ(m.graph().output(int(i)).name(), t.name);
            EXPECT_EQ(m.graph().output(int(i)).type().tensor_type().elem_type(), want);
            const runtime::Tensor &got = outputs.at(t.name);
            EXPECT_EQ(int(got.dtype()), want) << t.name;
            EXPECT_EQ(got.shape(), t.dims.empty() ? runtime::Shape{} : (runtime::Shape{2, 3, 5}))
                << t.name;
            EXPECT_TRUE(
                std::equal(t.bytes.begin(), t.bytes.end(), got.bytes().begin(), got.bytes().end()))
                << t.name;
        }
    }
}

// A big-endian GGUF: plain values are byte-swapped into ONNX's little-endian raw data;
// quantized data is refused with the tensor named.
TEST(Export, BigEndianFiles) {
    TempDir dir;
    const std::vector<uint8_t> be = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};  // 1.0f, -2.0f
    write_gguf(dir.file("be.gguf"), {{"v", GgmlType::f32, {2}, be}},
               gguf::Writer(3, gguf::ByteOrder::big));
    convert(dir.file("be.gguf"), dir.file("be.onnx"), Mode::packed);
    check_model(dir.file("be.onnx"));
    EXPECT_EQ(floats(run(dir.file("be.onnx")).at("v")), (std::vector<float>{1.0f, -2.0f}));
    // Converted to another type: swapped first, then rounded.
    convert(dir.file("be.gguf"), dir.file("be16.onnx"), Mode::dequantized, DataType::float16);
    check_model(dir.file("be16.onnx"));
    EXPECT_EQ(run(dir.file("be16.onnx")).at("v").to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3C00, 0xC000}));

    write_gguf(dir.file("beq.gguf"), {{"q", GgmlType::q4_0, {32}, std::vector<uint8_t>(18)}},
               gguf::Writer(3, gguf::ByteOrder::big));
    try {
        convert(dir.file("beq.gguf"), dir.file("beq.onnx"), Mode::packed);
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(
                      "tensor q: q4_0 data of a big-endian file cannot be converted"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(dir.file("beq.onnx")));
}

// A split model (gguf-split shards) converts as one: every tensor of every shard, in order.
TEST(Export, SplitModelsAreJoined) {
    TempDir dir;
    std::vector<TensorSpec> all;
    for (uint16_t shard = 0; shard < 2; ++shard) {
        std::vector<TensorSpec> tensors = {
            quantized_tensor(GgmlType::q4_0, fmt::format("blk.{}.a", shard), shard),
            {fmt::format("blk.{}.norm", shard),
             GgmlType::f32,
             {4},
             testkit::random_bytes(16, shard)}};
        gguf::Writer w;
        w.add("general.architecture", gguf::MetaValue::str("llama"));
        w.add("split.no", gguf::MetaValue::u16(shard));
        w.add("split.count", gguf::MetaValue::u16(2));
        w.add("split.tensors.count", gguf::MetaValue::i32(4));
        write_gguf(dir.file(fmt::format("m-{:05}-of-00002.gguf", shard + 1)), tensors, w);
        all.insert(all.end(), tensors.begin(), tensors.end());
    }
    const auto r = convert(dir.file("m-00002-of-00002.gguf"), dir.file("m.onnx"), Mode::unpack);
    EXPECT_EQ(r.tensors, 4u);
    const onnx::ModelProto m = check_model(dir.file("m.onnx"));
    ASSERT_EQ(m.graph().output_size(), 4);
    const auto outputs = run(dir.file("m.onnx"));
    for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(m.graph().output(int(i)).name(), all[i].name);
        if (all[i].type == GgmlType::q4_0) {
            EXPECT_TRUE(same_bits(llama_decode(llama(), all[i].type, all[i].bytes),
                                  floats(outputs.at(all[i].name)), Nans::exact));
        }
    }
    bool has_shards = false;
    for (const auto &p : m.metadata_props())
        has_shards |= p.key() == "gguftool.gguf_shards" && p.value() == "2";
    EXPECT_TRUE(has_shards);
}

// Generated names never collide with GGUF tensor names, whatever those are.
TEST(Export, GeneratedNamesAvoidTensorNames) {
    TempDir dir;
    const TensorSpec a = quantized_tensor(GgmlType::q4_0, "a", 1);
    const TensorSpec b = quantized_tensor(GgmlType::q4_0, "a:packed", 2);
    const TensorSpec c = quantized_tensor(GgmlType::q4_0, "a:codes", 3);
    const TensorSpec d{"gguftool:int64_32", GgmlType::f32, {1}, {0, 0, 0, 0}};
    write_gguf(dir.file("m.gguf"), {a, b, c, d});
    for (Mode mode : {Mode::packed, Mode::unpack}) {
        convert(dir.file("m.gguf"), dir.file("m.onnx"), mode);
        check_model(dir.file("m.onnx"));
        const auto outputs = run(dir.file("m.onnx"));
        for (const TensorSpec &t : {a, b, c})
            EXPECT_TRUE(same_bits(llama_decode(llama(), t.type, t.bytes),
                                  floats(outputs.at(t.name)), Nans::exact))
                << t.name;
    }
}

TEST(Export, TensorGlobsSelectASubset) {
    TempDir dir;
    write_gguf(dir.file("m.gguf"), {quantized_tensor(GgmlType::q4_0, "blk.0.a", 1),
                                    quantized_tensor(GgmlType::q8_0, "blk.1.a", 2),
                                    quantized_tensor(GgmlType::q4_k, "output.weight", 3)});
    onnx_export::Options o;
    o.tensor_globs = {"blk.1.*", "output.*"};
    const gguf::Model model = gguf::Model::open(dir.file("m.gguf"));
    EXPECT_EQ(onnx_export::export_model(model, dir.file("m.onnx"), o).tensors, 2u);
    const onnx::ModelProto m = check_model(dir.file("m.onnx"));
    ASSERT_EQ(m.graph().output_size(), 2);
    EXPECT_EQ(m.graph().output(0).name(), "blk.1.a");
    EXPECT_EQ(m.graph().output(1).name(), "output.weight");

    o.tensor_globs = {"nothing*"};
    EXPECT_THROW(onnx_export::export_model(model, dir.file("n.onnx"), o), Error);
    EXPECT_FALSE(fs::exists(dir.file("n.onnx")));
}

}  // namespace
}  // namespace gguftool::onnxtest
