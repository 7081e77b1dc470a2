// DequantizePacked-29 against llama.cpp: data quantized by llama.cpp's own quantizer, decoded by a
// one-node graph, compared bit for bit with dequantize_row_<type>. Plus every attribute and size
// error, each naming the node.
#include "ggml_data.hpp"
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

constexpr const char *kNode = "dq_under_test";
constexpr int64_t kRows = 4, kPerRow = 1024;

struct Format {
    const char *id;
    GgmlType type;
};

// Formats from every family: legacy, K-quants, IQ grids, ternary, FP4, q1/q2.
constexpr Format kFormats[] = {
    {"gguf:q4_0", GgmlType::q4_0},       {"gguf:q5_1", GgmlType::q5_1},
    {"gguf:q8_0", GgmlType::q8_0},       {"gguf:q2_k", GgmlType::q2_k},
    {"gguf:q4_k", GgmlType::q4_k},       {"gguf:q6_k", GgmlType::q6_k},
    {"gguf:iq4_nl", GgmlType::iq4_nl},   {"gguf:iq3_xxs", GgmlType::iq3_xxs},
    {"gguf:iq2_xxs", GgmlType::iq2_xxs}, {"gguf:tq2_0", GgmlType::tq2_0},
    {"gguf:mxfp4", GgmlType::mxfp4},     {"gguf:q2_0", GgmlType::q2_0},
};

std::vector<uint8_t> llama_quantized(const reference::Ggml &g, GgmlType t, uint64_t seed) {
    const std::vector<float> values =
        testkit::make_values(testkit::Distribution::normal, size_t(kRows * kPerRow), seed);
    const bool needs = g.quantize_requires_imatrix && g.quantize_requires_imatrix(int(t));
    const std::vector<float> imatrix =
        needs ? testkit::make_imatrix(size_t(kPerRow), seed + 1) : std::vector<float>{};
    const testkit::Quantized q =
        testkit::quantize_with_llama(g, t, values, size_t(kPerRow), imatrix);
    EXPECT_FALSE(q.bytes.empty()) << type_name(t) << ": " << q.failure;
    return q.bytes;
}

ModelBuilder dq_model(const std::string &format, const std::vector<int64_t> &shape,
                      int64_t output_dtype = 1) {
    ModelBuilder b;
    b.input("x").output("y");
    b.node("DequantizePacked", {"x"}, {"y"},
           {attr_string("format", format), attr_ints("shape", shape),
            attr_int("output_dtype", output_dtype)},
           kNode);
    return b;
}

TEST(DequantizePacked, MatchesLlamaCpp) {
    auto g = reference::ggml();
    ASSERT_TRUE(g) << "llama.cpp's libggml-base.so is required";
    uint64_t seed = 5;
    for (const Format &f : kFormats) {
        SCOPED_TRACE(f.id);
        const uint32_t id = uint32_t(f.type);
        ASSERT_TRUE(g->dequantize_row[id]) << "libggml-base.so lacks dequantize_row for " << f.id;
        const std::vector<uint8_t> bytes = llama_quantized(*g, f.type, seed++);
        ASSERT_FALSE(bytes.empty());
        std::vector<float> expected(size_t(kRows * kPerRow));
        g->dequantize_row[id](bytes.data(), expected.data(), kRows * kPerRow);

        const rt::Tensor y = run1(dq_model(f.id, {kRows, kPerRow}), {{"x", bytes_u8(bytes)}});
        const rt::AllcloseResult c =
            rt::allclose(y, tensor(DataType::float32, {kRows, kPerRow}, expected), /*exact=*/true);
        EXPECT_TRUE(c.equal) << c.message;
    }
}

// FLOAT16, BFLOAT16 and DOUBLE outputs equal the FLOAT output converted by the runtime's Cast:
// two independent conversions (the core's and Cast's) must agree.
TEST(DequantizePacked, OutputTypesEqualCastOfFloat) {
    auto g = reference::ggml();
    ASSERT_TRUE(g) << "llama.cpp's libggml-base.so is required";
    const std::vector<uint8_t> bytes = llama_quantized(*g, GgmlType::q4_k, 99);
    for (const DataType t : {DataType::float16, DataType::bfloat16, DataType::float64}) {
        SCOPED_TRACE(dtype_name(t));
        ModelBuilder b;
        b.input("x", DataType::uint8).output("direct").output("cast");
        b.node("DequantizePacked", {"x"}, {"direct"},
               {attr_string("format", "gguf:q4_k"), attr_ints("shape", {kRows, kPerRow}),
                attr_int("output_dtype", int64_t(t))},
               "direct");
        b.node("DequantizePacked", {"x"}, {"f"},
               {attr_string("format", "gguf:q4_k"), attr_ints("shape", {kRows, kPerRow})}, "float");
        b.node("Cast", {"f"}, {"cast"}, {attr_int("to", int64_t(t))}, "cast");
        rt::Session s(b.model());
        const rt::NamedTensors out = s.run({{"x", bytes_u8(bytes)}});
        EXPECT_EQ(out[0].second.dtype(), t);
        const rt::AllcloseResult c = rt::allclose(out[0].second, out[1].second, true);
        EXPECT_TRUE(c.equal) << c.message;
    }
}

TEST(DequantizePacked, EmptyAndHigherRank) {
    const rt::Tensor y = run1(dq_model("gguf:q2_k", {0, 256}), {{"x", bytes_u8({})}});
    EXPECT_EQ(y.shape(), (rt::Shape{0, 256}));
    EXPECT_EQ(y.dtype(), DataType::float32);
    // Three dims: 2 x 3 rows of one q8_0 block each, all zero scales -> zeros.
    const rt::Tensor z =
        run1(dq_model("gguf:q8_0", {2, 3, 32}), {{"x", bytes_u8(std::vector<uint8_t>(6 * 34, 0))}});
    EXPECT_EQ(z.shape(), (rt::Shape{2, 3, 32}));
    for (float v : z.to_vector<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(DequantizePacked, ErrorsNameTheNode) {
    const auto expect_error = [](const ModelBuilder &b, const rt::Tensor &x,
                                 const std::string &fragment) {
        const std::string e = run_error(b, {{"x", x}});
        EXPECT_NE(e.find(std::string("node \"") + kNode + "\" (DequantizePacked-29)"),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find(fragment), std::string::npos) << e;
    };
    const rt::Tensor block = bytes_u8(std::vector<uint8_t>(18, 0));  // one q4_0 block
    expect_error(dq_model("gguf:q4_0", {64}), block,
                 "input x is 18 bytes but shape [64] in gguf:q4_0 takes 36");
    expect_error(dq_model("gguf:q4_0", {2, 32}), bytes_u8(std::vector<uint8_t>(37, 0)), "takes 36");
    expect_error(dq_model("gguf:Q4_0", {32}), block, "unknown format \"gguf:Q4_0\"");
    expect_error(dq_model("gguf:q4_K", {256}), block, "unknown format");
    expect_error(dq_model("gguf:f32", {32}), block, "unknown format");
    expect_error(dq_model("q4_0", {32}), block, "unknown format");
    expect_error(dq_model("gguf:q4_0", {}), block, "rank at least 1");
    expect_error(dq_model("gguf:q4_0", {-1, 32}), block, "negative dimension");
    expect_error(dq_model("gguf:q4_0", {48}), block, "not a multiple of gguf:q4_0's 32");
    expect_error(dq_model("gguf:q2_k", {1, 0, 128}), bytes_u8({}), "not a multiple");
    expect_error(dq_model("gguf:q4_0", {32}, 7), block, "'output_dtype' 7 is not FLOAT");
    expect_error(dq_model("gguf:q4_0", {int64_t(1) << 40, int64_t(1) << 40, 32}), block,
                 "more than 2^63 - 1 elements");
    expect_error(dq_model("gguf:q4_0", {32}), tensor(DataType::int8, {18}, std::vector<int8_t>(18)),
                 "must be uint8");
    expect_error(dq_model("gguf:q4_0", {32}),
                 tensor(DataType::uint8, {1, 18}, std::vector<uint8_t>(18)), "one-dimensional");

    ModelBuilder missing;
    missing.input("x").output("y");
    missing.node("DequantizePacked", {"x"}, {"y"}, {attr_ints("shape", {32})}, kNode);
    expect_error(missing, block, "attribute 'format' is required");
    ModelBuilder typed;
    typed.input("x").output("y");
    typed.node("DequantizePacked", {"x"}, {"y"}, {attr_int("format", 2), attr_ints("shape", {32})},
               kNode);
    expect_error(typed, block, "attribute 'format' must be of type STRING, not INT");
}

}  // namespace
}  // namespace gguftool::rttest
