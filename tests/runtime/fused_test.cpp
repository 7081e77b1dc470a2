// Fused weight products (lib/runtime/fuse.cpp and op_fused.cpp; the CPU kernels in cpu_matmul.cpp
// and cpu_index.cpp; the dot kernels in formats/dot.cpp), per format: a Gemm on a
// DequantizePacked output and a Gather of one, run unfused, fused with float products and fused
// with int8 activations. Fused with float products is bit for bit the unfused result; with int8
// activations the products are those of the activations quantized as llama.cpp quantizes them
// (checked against a double-precision sum of the decoded weights times those activations), and
// within the quantization's error of the exact products. Also: Gather(stack, e) -> DequantizePacked
// -> Gemm in a Loop body, float16 weights, errors naming the nodes.
#include <cmath>
#include <cstring>

#include "format_cases.hpp"
#include "formats/dispatch.hpp"
#include "formats/dot.hpp"
#include "gguftool/quant.hpp"
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

using rt::WeightProducts;

constexpr WeightProducts kModes[] = {WeightProducts::unfused, WeightProducts::fused_float,
                                     WeightProducts::fused};

// A weight [n, k] of a format case's rows, repeated `repeat` times (more rows than the case has).
struct Weight {
    GgmlType type;
    int64_t n, k;
    std::vector<uint8_t> bytes;
    std::vector<float> values;  // llama.cpp's decode
};

Weight weight_of(const testkit::FormatCase &c, int repeat) {
    Weight w{c.type, c.shape[0] * repeat, c.shape[1], {}, {}};
    for (int r = 0; r < repeat; ++r) {
        w.bytes.insert(w.bytes.end(), c.bytes.begin(), c.bytes.end());
        w.values.insert(w.values.end(), c.want.begin(), c.want.end());
    }
    return w;
}

// Activations [m, k]: normal-ish values, a few large ones, deterministic.
std::vector<float> activations(int64_t m, int64_t k, uint64_t seed) {
    std::vector<float> a = testkit::make_values(testkit::Distribution::normal, size_t(m * k), seed);
    for (size_t i = 7; i < a.size(); i += 97) a[i] *= 6;
    return a;
}

// Y = Gemm(A, DequantizePacked(x) [Cast to float], bias, transB = 1) and G = Gather(that, ids).
ModelBuilder product_model(const Weight &w, int64_t m, DataType weight_dtype, bool bias) {
    ModelBuilder b;
    b.input("a", DataType::float32, {m, w.k}).input("ids", DataType::int64, {-1});
    b.bytes_initializer("x", w.bytes);
    b.dequantize_packed("w_dq", "x", "w", w.type, {w.n, w.k}, weight_dtype);
    std::string weight = "w";
    if (weight_dtype != DataType::float32) {
        b.node("Cast", {"w"}, {"w_f32"}, {attr_int("to", 1)}, "w_cast");
        weight = "w_f32";
    }
    std::vector<std::string> in = {"a", weight};
    if (bias) {
        std::vector<float> c(size_t(w.n));
        for (size_t i = 0; i < c.size(); ++i) c[i] = float(i % 7) - 3.0f;
        b.initializer("bias", tensor(DataType::float32, {w.n}, c));
        in.push_back("bias");
    }
    b.node("Gemm", in, {"y"}, {attr_int("transB", 1), attr_float("alpha", 0.5f)}, "product");
    b.node("Gather", {weight, "ids"}, {"g"}, {}, "rows");
    b.output("y").output("g");
    return b;
}

struct Outputs {
    rt::Tensor y, g;
};

Outputs run(const ModelBuilder &b, const std::vector<float> &a, int64_t m, int64_t k,
            const std::vector<int64_t> &ids, WeightProducts mode, unsigned threads = 2) {
    rt::Session s(b.model(), rt::RunOptions{.threads = threads, .weight_products = mode});
    // Fused: no DequantizePacked is left to run.
    size_t dequantize = 0;
    for (const rt::NodePlacement &p : s.placement()) dequantize += p.op_type == "DequantizePacked";
    EXPECT_EQ(dequantize, mode == WeightProducts::unfused ? 1u : 0u);
    const auto out = s.run({{"a", tensor(DataType::float32, {m, k}, a)},
                            {"ids", tensor(DataType::int64, {int64_t(ids.size())}, ids)}});
    return {out.at(0).second, out.at(1).second};
}

bool same_bits(const rt::Tensor &x, const rt::Tensor &y) {
    return x.shape() == y.shape() && x.dtype() == y.dtype() &&
           std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

// A row of activations as llama.cpp's quantizer leaves them (formats::quantize_activations for
// the weight's vec_dot_type): d * q per element, and per element d (its block's scale).
struct Quantized {
    std::vector<double> value, scale;
};
Quantized quantized_row(formats::ActFormat f, const float *x, size_t k) {
    std::vector<uint8_t> q(k / formats::act_block_elements(f) * formats::act_block_bytes(f));
    formats::quantize_activations(f, x, k, q.data());
    Quantized r;
    for (size_t i = 0; i < k; ++i) {
        double d, v;
        if (f == formats::ActFormat::q8_0) {
            const auto *b = reinterpret_cast<const formats::ActQ8_0 *>(q.data()) + i / 32;
            d = b->d, v = b->qs[i % 32];
        } else {
            const auto *b = reinterpret_cast<const formats::BlockQ8_K *>(q.data()) + i / 256;
            d = b->d, v = b->qs[i % 256];
        }
        r.value.push_back(d * v);
        r.scale.push_back(std::fabs(d));
    }
    return r;
}

// Checks the int8 products y [m, n] (alpha 0.5, the bias) against the weight's decoded values.
void expect_int8_products(const Weight &w, const formats::DotKernel &dot,
                          const std::vector<float> &a, int64_t m, const rt::Tensor &y,
                          const rt::Tensor &exact) {
    const float *py = y.data_as<float>(), *pe = exact.data_as<float>();
    for (int64_t i = 0; i < m; ++i) {
        const Quantized q = quantized_row(dot.act, a.data() + i * w.k, size_t(w.k));
        for (int64_t r = 0; r < w.n; ++r) {
            const float *wr = w.values.data() + r * w.k;
            double sum = 0, magnitude = 0, bound = 0;
            for (int64_t j = 0; j < w.k; ++j) {
                sum += double(wr[j]) * q.value[size_t(j)];
                magnitude += std::fabs(double(wr[j]) * q.value[size_t(j)]);
                // |x - d q| <= d / 2 from the rounding, plus 127 d 2^-11 from d's rounding to f16.
                bound += std::fabs(double(wr[j])) * 0.57 * q.scale[size_t(j)];
            }
            const double bias = double(r % 7) - 3.0;
            const double want = 0.5 * sum + bias;
            const double got = py[i * w.n + r];
            ASSERT_NEAR(got, want, 1e-5 * (0.5 * magnitude + 1))
                << "row " << i << ", weight row " << r << ": not the product of llama.cpp's "
                << "quantized activations";
            ASSERT_NEAR(got, double(pe[i * w.n + r]), 0.5 * bound + 1e-5 * (magnitude + 1))
                << "row " << i << ", weight row " << r << ": farther from the exact product "
                << "than the activations' quantization allows";
        }
    }
}

class FusedFormat : public ::testing::TestWithParam<GgmlType> {};

// Every mode on M = 1 (a decode step), 5 (a short batch: int8) and 24 (float tiles; with 80 rows
// of 1024, a product above OpenBLAS's small-matrix line), with a bias, on each target dispatch
// can use.
TEST_P(FusedFormat, FloatProductsAreTheUnfusedOnesAndInt8ProductsLlamaCpps) {
    const GgmlType type = GetParam();
    const std::vector<int64_t> ids = {3, 0, 79, 40, -1};
    for (const testkit::FormatCase &c : testkit::format_cases()) {
        if (c.type != type || c.shape[0] == 0) continue;
        SCOPED_TRACE(c.name);
        const bool llama = c.name.ends_with("_llama");
        const Weight w = weight_of(c, 40);
        for (int64_t m : {1, 5, 24}) {
            SCOPED_TRACE(fmt::format("M = {}", m));
            const ModelBuilder b = product_model(w, m, DataType::float32, true);
            const std::vector<float> a = activations(m, w.k, uint64_t(m) * 31 + uint64_t(type));
            const Outputs unfused = run(b, a, m, w.k, ids, WeightProducts::unfused);
            for (const int64_t target : simd::usable_targets()) {
                SCOPED_TRACE(fmt::format("target {:#x}", target));
                simd::force_target(target);
                const Outputs exact = run(b, a, m, w.k, ids, WeightProducts::fused_float);
                const Outputs int8 = run(b, a, m, w.k, ids, WeightProducts::fused);
                const formats::DotKernel *dot = formats::dot_kernel(type);
                simd::force_target(0);
                EXPECT_TRUE(same_bits(exact.y, unfused.y)) << "fused float products differ";
                EXPECT_TRUE(same_bits(exact.g, unfused.g)) << "fused Gather differs";
                EXPECT_TRUE(same_bits(int8.g, unfused.g)) << "fused Gather differs (int8)";
                if (!dot || m > 16) {
                    EXPECT_TRUE(same_bits(int8.y, unfused.y)) << "float tiles expected";
                } else if (llama) {
                    expect_int8_products(w, *dot, a, m, int8.y, unfused.y);
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, FusedFormat, ::testing::ValuesIn(testkit::quantized_types()),
                         [](const ::testing::TestParamInfo<GgmlType> &info) {
                             return std::string(type_name(info.param));
                         });

// The formats of the five benchmark targets (and more) have int8 kernels where the CPU has AVX2.
TEST(FusedProducts, TheBenchmarkFormatsHaveDotKernels) {
    if (!(simd::cpu_targets() & HWY_AVX2)) GTEST_SKIP() << "no AVX2 on this CPU";
    for (GgmlType t :
         {GgmlType::q4_0, GgmlType::q8_0, GgmlType::q4_k, GgmlType::q6_k, GgmlType::iq4_xs})
        EXPECT_NE(formats::dot_kernel(t), nullptr) << type_name(t);
}

// A float16 DequantizePacked and a Cast to float: the fused products round each weight to float16
// as the unfused graph does (bit for bit), on one thread and two.
TEST(FusedProducts, Float16WeightsAreRoundedAsTheCastGraphRoundsThem) {
    for (const testkit::FormatCase &c : testkit::format_cases()) {
        if (c.name != "q4_k_llama" && c.name != "iq2_xs_llama" && c.name != "q8_0_llama") continue;
        SCOPED_TRACE(c.name);
        const Weight w = weight_of(c, 8);
        for (DataType dt : {DataType::float16, DataType::bfloat16, DataType::float64}) {
            const ModelBuilder b = product_model(w, 20, dt, false);
            const std::vector<float> a = activations(20, w.k, 3);
            for (unsigned threads : {1u, 2u}) {
                const Outputs unfused =
                    run(b, a, 20, w.k, {1, 2}, WeightProducts::unfused, threads);
                const Outputs exact =
                    run(b, a, 20, w.k, {1, 2}, WeightProducts::fused_float, threads);
                EXPECT_TRUE(same_bits(exact.y, unfused.y)) << dtype_name(dt);
                EXPECT_TRUE(same_bits(exact.g, unfused.g)) << dtype_name(dt);
            }
        }
    }
}

// A mixture of experts' body: Loop over experts e, acc += Gemm(a, DequantizePacked(Gather(stack,
// e)), transB = 1). Fused in the body (no float copy of an expert); an expert index out of range
// is an error naming the fused nodes.
ModelBuilder experts_model(const Weight &expert, int64_t experts, int64_t m) {
    ModelBuilder body;
    body.input("i", DataType::int64, {}).input("cond", DataType::bool_, {}).input("acc");
    body.node("Gather", {"stack", "i"}, {"one"}, {}, "pick");
    body.dequantize_packed("expert_dq", "one", "w", expert.type, {expert.n, expert.k},
                           DataType::float32);
    body.node("Gemm", {"a", "w"}, {"y"}, {attr_int("transB", 1)}, "expert_product");
    body.node("Add", {"acc", "y"}, {"acc_out"});
    body.node("Identity", {"cond"}, {"cond_out"});
    body.output("cond_out").output("acc_out");

    ModelBuilder b(29);
    b.input("a", DataType::float32, {m, expert.k}).input("trips", DataType::int64, {});
    std::vector<uint8_t> stack;
    for (int64_t e = 0; e < experts; ++e) {
        // Each expert its own: the bytes rotated by a whole number of blocks.
        const size_t block = traits(expert.type).type_size * size_t(e) * 3;
        std::vector<uint8_t> one(expert.bytes);
        std::rotate(one.begin(), one.begin() + std::ptrdiff_t(block % one.size()), one.end());
        stack.insert(stack.end(), one.begin(), one.end());
    }
    b.initializer("stack", tensor(DataType::uint8, {experts, int64_t(expert.bytes.size())}, stack));
    b.initializer("acc0", rt::Tensor::zeros(DataType::float32, {m, expert.n}));
    onnx::NodeProto &n = b.node("Loop", {"trips", "", "acc0"}, {"total"}, {}, "experts");
    onnx::AttributeProto &g = *n.add_attribute();
    g.set_name("body");
    g.set_type(onnx::AttributeProto::GRAPH);
    *g.mutable_g() = body.proto().graph();
    b.output("total");
    return b;
}

TEST(FusedProducts, ExpertsPickedByAGatherInALoopBody) {
    for (const testkit::FormatCase &c : testkit::format_cases()) {
        if (c.name != "q4_k_llama" && c.name != "q8_0_llama" && c.name != "iq3_s_llama") continue;
        SCOPED_TRACE(c.name);
        const Weight w = weight_of(c, 4);
        for (int64_t m : {1, 20}) {
            const ModelBuilder b = experts_model(w, 4, m);
            const std::vector<float> a = activations(m, w.k, 9);
            auto total = [&](WeightProducts mode, int64_t trips) {
                rt::Session s(b.model(), rt::RunOptions{.threads = 2, .weight_products = mode});
                return s
                    .run({{"a", tensor(DataType::float32, {m, w.k}, a)},
                          {"trips", scalar_i64(trips)}})
                    .at(0)
                    .second;
            };
            const rt::Tensor unfused = total(WeightProducts::unfused, 4);
            EXPECT_TRUE(same_bits(total(WeightProducts::fused_float, 4), unfused));
            const rt::Tensor int8 = total(WeightProducts::fused, 4);
            const float *pi = int8.data_as<float>(), *pu = unfused.data_as<float>();
            double worst = 0, spread = 0;
            for (uint64_t i = 0; i < int8.elements(); ++i) {
                worst = std::max(worst, std::fabs(double(pi[i]) - pu[i]));
                spread = std::max(spread, std::fabs(double(pu[i])));
            }
            EXPECT_LE(worst, 0.02 * spread) << "M = " << m;
            try {
                total(WeightProducts::fused, 5);
                ADD_FAILURE() << "expert 4 of 4 was taken";
            } catch (const Error &e) {
                const std::string what = e.what();
                EXPECT_NE(what.find("node \"expert_product\" (Gemm-13) fused with node "
                                    "\"expert_dq\" (DequantizePacked-29)"),
                          std::string::npos)
                    << what;
                EXPECT_NE(what.find("index 4 (element 0 of indices) is out of range for axis 0 "
                                    "of size 4"),
                          std::string::npos)
                    << what;
            }
        }
    }
}

// A fused node checks what the nodes it replaces checked, with their messages and its names.
TEST(FusedProducts, ErrorsNameTheFusedNodes) {
    const testkit::FormatCase *q8 = nullptr;
    for (const testkit::FormatCase &c : testkit::format_cases())
        if (c.name == "q8_0_llama") q8 = &c;
    ASSERT_NE(q8, nullptr);
    Weight w = weight_of(*q8, 1);
    const ModelBuilder b = product_model(w, 1, DataType::float32, false);
    const std::vector<float> a = activations(1, w.k, 1);
    auto error = [&](const std::vector<int64_t> &ids, int64_t k) {
        try {
            rt::Session s(b.model(), rt::RunOptions{.weight_products = WeightProducts::fused});
            s.run({{"a", tensor(DataType::float32, {1, k}, std::vector<float>(size_t(k), 1.0f))},
                   {"ids", tensor(DataType::int64, {int64_t(ids.size())}, ids)}});
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    std::string e = error({2}, w.k);
    EXPECT_NE(e.find("node \"rows\" (Gather-13) fused with node \"w_dq\" (DequantizePacked-29)"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("index 2 (element 0 of indices) is out of range for axis 0 of size 2"),
              std::string::npos)
        << e;
    // The graph declares A [1, 1024]: a wrong K is refused before any node runs.
    e = error({0}, 512);
    EXPECT_NE(e.find("graph input \"a\" has shape [1, 512]"), std::string::npos) << e;
}

}  // namespace
}  // namespace gguftool::rttest
