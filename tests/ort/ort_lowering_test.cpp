// The standard operators that lowered graphs use (Slice, Transpose, Neg, Div, Mod, Min, Equal,
// Where, BitShift, BitwiseAnd, Range, Shape, Gather, BitCast, with Mul, Sub, Cast) in one model,
// run by onnxruntime and by gguftool's runtime at opsets 17, 18 and 26: every output the same, bit
// for bit. Skipped, saying why, without onnxruntime (ort_support.hpp).
#include <bit>
#include <cmath>
#include <random>

#include "../runtime/runtime_test_util.hpp"
#include "gguftool/half.hpp"
#include "gguftool/runtime/tensor_io.hpp"
#include "ort_support.hpp"

namespace gguftool::orttest {
namespace {

namespace rt = gguftool::runtime;
using rttest::attr_int;
using rttest::attr_ints;
using rttest::attr_string;
using rttest::ModelBuilder;
using rttest::tensor;

std::vector<int64_t> i64s(std::initializer_list<int64_t> v) {
    return v;
}
rt::Tensor i64_vector(std::initializer_list<int64_t> v) {
    return tensor(DataType::int64, {int64_t(v.size())}, i64s(v));
}

// The inputs: random values with NaN, infinities and signed zeros where they are unambiguous.
rt::Inputs make_inputs() {
    std::mt19937_64 rng(2024);
    const auto pick = [&](int lo, int hi) { return lo + int(rng() % uint64_t(hi - lo + 1)); };
    const rt::Shape s = {4, 6, 8};
    std::vector<float> xf(192), yf(48);
    for (float &v : xf) v = float(pick(-64, 64)) / 8;
    xf[3] = NAN, xf[17] = -NAN, xf[40] = INFINITY, xf[41] = -INFINITY, xf[50] = 0.0f,
    xf[51] = -0.0f;
    for (float &v : yf) {
        do v = float(pick(-40, 40)) / 16;
        while (v == 0);
    }
    yf[5] = INFINITY;
    std::vector<int32_t> xi(192), di(6);
    for (int32_t &v : xi) v = pick(-1000, 1000);
    xi[0] = INT32_MAX, xi[1] = INT32_MIN + 1;
    for (int32_t &v : di) {
        do v = pick(-7, 7);
        while (v == 0);
    }
    std::vector<uint16_t> xh(192), dh(8);
    for (uint16_t &v : xh) v = f32_to_fp16(float(pick(-3000, 3000)) / 64);
    for (uint16_t &v : dh) {
        do v = f32_to_fp16(float(pick(-300, 300)) / 32);
        while ((v & 0x7fff) == 0);
    }
    std::vector<uint8_t> xu8(192), su8(8), cond(6);
    for (uint8_t &v : xu8) v = uint8_t(rng());
    for (uint8_t &v : su8) v = uint8_t(pick(0, 10));
    for (uint8_t &v : cond) v = uint8_t(rng() % 2);
    cond[0] = 1;  // Where selects xf[51] = -0
    std::vector<uint32_t> xu32(48), su32(8);
    for (uint32_t &v : xu32) v = uint32_t(rng());
    for (uint32_t &v : su32) v = uint32_t(pick(0, 40));
    std::vector<uint64_t> xu64(8), su64(8);
    for (uint64_t &v : xu64) v = rng();
    for (uint64_t &v : su64) v = uint64_t(pick(0, 70));
    return {
        {"xf", tensor(DataType::float32, s, xf)},
        {"yf", tensor(DataType::float32, {6, 8}, yf)},
        {"xi", tensor(DataType::int32, s, xi)},
        {"di", tensor(DataType::int32, {6, 1}, di)},
        {"xh", tensor(DataType::float16, s, xh)},
        {"dh", tensor(DataType::float16, {8}, dh)},
        {"xu8", tensor(DataType::uint8, s, xu8)},
        {"su8", tensor(DataType::uint8, {8}, su8)},
        {"xu32", tensor(DataType::uint32, {6, 8}, xu32)},
        {"su32", tensor(DataType::uint32, {8}, su32)},
        {"xu64", tensor(DataType::uint64, {8}, xu64)},
        {"su64", tensor(DataType::uint64, {8}, su64)},
        {"cond", tensor(DataType::bool_, {6, 1}, cond)},
        {"idx", i64_vector({5, -1, 0, -6, 2})},
        {"rs", rttest::scalar_i64(-7)},
        {"rl", rttest::scalar_i64(100)},
        {"rd", rttest::scalar_i64(3)},
        {"fs", tensor(DataType::float32, {}, std::vector<float>{0.1f})},
        {"fl", tensor(DataType::float32, {}, std::vector<float>{7.3f})},
        {"fd", tensor(DataType::float32, {}, std::vector<float>{0.07f})},
    };
}

ModelBuilder make_model(int64_t opset, const rt::Inputs &inputs) {
    ModelBuilder m(opset);
    for (const auto &[name, t] : inputs) m.input(name, t.dtype(), t.shape());
    m.initializer("sl_starts", i64_vector({-1, 1, 7}));
    m.initializer("sl_ends", i64_vector({INT64_MIN, 5, -100}));
    m.initializer("sl_axes", i64_vector({0, -2, 2}));
    m.initializer("sl_steps", i64_vector({-1, 2, -3}));
    m.initializer("half", tensor(DataType::float32, {}, std::vector<float>{0.5f}));
    m.initializer("zero_i", tensor(DataType::int32, {}, std::vector<int32_t>{0}));
    m.initializer("minus1_i", tensor(DataType::int32, {}, std::vector<int32_t>{-1}));
    std::vector<std::string> outs;
    const auto node = [&](const std::string &op, const std::vector<std::string> &in,
                          const std::string &out,
                          std::initializer_list<onnx::AttributeProto> attrs = {}) {
        m.node(op, in, {out}, attrs, out);
        m.output(out);
    };
    node("Slice", {"xf", "sl_starts", "sl_ends", "sl_axes", "sl_steps"}, "sliced");
    node("Transpose", {"sliced"}, "transposed", {attr_ints("perm", {2, 0, 1})});
    node("Transpose", {"xf"}, "transposed_default");
    node("Transpose", {"xu8"}, "transposed_u8", {attr_ints("perm", {1, 2, 0})});
    node("Neg", {"transposed"}, "neg");
    node("Neg", {"xi"}, "neg_i");
    node("Neg", {"xh"}, "neg_h");
    node("Div", {"xf", "yf"}, "div_f");
    node("Div", {"xi", "di"}, "div_i");
    node("Div", {"xh", "dh"}, "div_h");
    node("Mul", {"xh", "dh"}, "mul_h");
    node("Sub", {"xh", "dh"}, "sub_h");
    node("Mod", {"xi", "di"}, "mod_i");
    node("Mod", {"xi", "di"}, "fmod_i", {attr_int("fmod", 1)});
    node("Mod", {"xf", "yf"}, "fmod_f", {attr_int("fmod", 1)});
    node("Mod", {"xh", "dh"}, "fmod_h", {attr_int("fmod", 1)});
    node("Min", {"xf", "yf", "half"}, "min_f");
    node("Min", {"xi", "di"}, "min_i");
    node("Equal", {"mod_i", "zero_i"}, "eq_i");
    node("Equal", {"xf", "xf"}, "eq_f");
    node("Where", {"cond", "xf", "yf"}, "where_f");
    node("Where", {"eq_i", "xi", "minus1_i"}, "where_i");
    node("BitShift", {"xu8", "su8"}, "shl_u8", {attr_string("direction", "LEFT")});
    node("BitShift", {"xu32", "su32"}, "shr_u32", {attr_string("direction", "RIGHT")});
    node("BitShift", {"xu64", "su64"}, "shl_u64", {attr_string("direction", "LEFT")});
    node("Range", {"rs", "rl", "rd"}, "range_i");
    node("Range", {"fs", "fl", "fd"}, "range_f");
    node("Shape", {"xf"}, "shape");
    node("Shape", {"xf"}, "shape_tail", {attr_int("start", -2)});
    node("Gather", {"xu8", "idx"}, "gather_u8", {attr_int("axis", 1)});
    node("Gather", {"xf", "idx"}, "gather_f", {attr_int("axis", 2)});
    node("Cast", {"range_i"}, "range_as_f", {attr_int("to", int64_t(DataType::float32))});
    if (opset >= 18) {
        m.initializer("mask_i", tensor(DataType::int32, {}, std::vector<int32_t>{0x3f5}));
        node("BitwiseAnd", {"xi", "mask_i"}, "and_i");
        node("BitwiseAnd", {"xu8", "su8"}, "and_u8");
    }
    if (opset >= 26) {
        // A lowering's field extraction: the exponent bits of floats.
        m.initializer("shift23", tensor(DataType::uint32, {}, std::vector<uint32_t>{23}));
        m.initializer("mask8", tensor(DataType::uint32, {}, std::vector<uint32_t>{0xff}));
        node("BitCast", {"xf"}, "bits", {attr_int("to", int64_t(DataType::uint32))});
        node("BitShift", {"bits", "shift23"}, "bits_shifted", {attr_string("direction", "RIGHT")});
        node("BitwiseAnd", {"bits_shifted", "mask8"}, "exponent");
        node("BitCast", {"exponent"}, "exponent_as_f",
             {attr_int("to", int64_t(DataType::float32))});
    }
    return m;
}

class OrtLowering : public testing::TestWithParam<int64_t> {};

TEST_P(OrtLowering, EveryOutputMatchesOnnxruntimeBitForBit) {
    SKIP_WITHOUT_ORT();
    const int64_t opset = GetParam();
    const rt::Inputs inputs = make_inputs();
    ModelBuilder m = make_model(opset, inputs);
    testkit::TempDir dir;
    const std::string model = dir.file("m.onnx"), outdir = dir.file("out");
    m.save(model);
    std::vector<std::string> argv = {kNode, kDriver, model, outdir};
    for (const auto &[name, t] : inputs) {
        const std::string npy = dir.file(name + ".npy");
        rt::write_npy(npy, t);
        argv.push_back(name + "=" + npy);
    }
    const test::RunResult r = testkit::run(argv);
    ASSERT_EQ(r.status, 0) << r.err;

    rt::Session session(m.model());
    const rt::NamedTensors ours = session.run(inputs);
    ASSERT_EQ(ours.size(), size_t(m.proto().graph().output_size()));
    for (const auto &[name, got] : ours) {
        SCOPED_TRACE(name);
        const rt::Tensor want = rt::read_npy(outdir + "/" + name + ".npy");
        EXPECT_EQ(got.dtype(), want.dtype());
        EXPECT_EQ(got.shape(), want.shape());
        ASSERT_EQ(got.nbytes(), want.nbytes());
        if (name == "where_f") {
            // onnxruntime's Where merges "cond ? X : 0" and "cond ? 0 : Y" by "x != 0 ? x : y",
            // so a -0 selected from X comes out +0. gguftool selects (as numpy.where): -0.
            const std::vector<uint32_t> g = got.to_vector<uint32_t>(),
                                        w = want.to_vector<uint32_t>();
            size_t negative_zeros = 0;
            for (size_t i = 0; i < g.size(); ++i) {
                if (g[i] == w[i]) continue;
                EXPECT_EQ(g[i], 0x80000000u) << i;
                EXPECT_EQ(w[i], 0u) << i;
                ++negative_zeros;
            }
            EXPECT_EQ(negative_zeros, 1u);
            continue;
        }
        size_t differing = 0, first = 0;
        for (size_t i = 0; i < got.nbytes(); ++i)
            if (got.data()[i] != want.data()[i] && differing++ == 0) first = i;
        EXPECT_EQ(differing, 0u) << "first differing byte " << first;
    }
    // The checks had something to compare: NaN stayed NaN, shifts past the width gave 0.
    const auto output = [&](const std::string &name) {
        for (const auto &[n, t] : ours)
            if (n == name) return t;
        throw std::runtime_error("no output " + name);
    };
    EXPECT_EQ(output("eq_f").to_vector<uint8_t>()[3], 0);
    EXPECT_GT(output("range_f").elements(), 100u);
}

INSTANTIATE_TEST_SUITE_P(Opsets, OrtLowering, testing::Values(17, 18, 26),
                         [](const auto &info) { return "opset" + std::to_string(info.param); });

}  // namespace
}  // namespace gguftool::orttest
