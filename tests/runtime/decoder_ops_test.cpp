// The standard operators an LLM decoder graph needs, on the CPU: MatMul, Gemm, Softmax,
// ReduceMean, Sqrt, Tanh, Sigmoid, Exp, Reciprocal, Greater, Less, GreaterOrEqual, LessOrEqual,
// And, Or, Not, Expand and Squeeze. Every expected value comes from a plain double-precision loop
// written here (or is written out by hand), never from the runtime.
#include <cmath>
#include <limits>
#include <random>

#include "gguftool/half.hpp"
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

using rt::Capability;
using rt::shape_string;

#define EXPECT_HAS(haystack, needle) \
    EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

size_t count_of(const rt::Shape &s) {
    size_t n = 1;
    for (const int64_t d : s) n *= size_t(d);
    return n;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float &x : v) x = dist(gen);
    return v;
}

// A one-node model whose inputs are all fed.
ModelBuilder one_node(int64_t opset, const std::string &op, const std::vector<std::string> &inputs,
                      std::initializer_list<onnx::AttributeProto> attrs = {}) {
    ModelBuilder b(opset);
    for (const std::string &in : inputs)
        if (!in.empty()) b.input(in);
    b.output("y");
    b.node(op, inputs, {"y"}, attrs);
    return b;
}

rt::Tensor f32(rt::Shape shape, const std::vector<float> &v) {
    return tensor(DataType::float32, std::move(shape), v);
}
rt::Tensor i64(const std::vector<int64_t> &v) {
    return tensor(DataType::int64, {int64_t(v.size())}, v);
}

// ---------------------------------------------------------------------------------------------
// MatMul: NumPy's matmul by the definition, in double, with the bound sum |a_ik * b_kj| for the
// tolerance of each element.

struct MatMulRef {
    rt::Shape shape;
    std::vector<double> y, magnitude;
};

MatMulRef matmul_ref(const std::vector<double> &a, rt::Shape sa, const std::vector<double> &b,
                     rt::Shape sb) {
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) sb.push_back(1);
    const size_t m = size_t(sa[sa.size() - 2]), k = size_t(sa.back()), n = size_t(sb.back());
    const rt::Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    const rt::Shape batch = broadcast_shape({ba, bb});
    MatMulRef r;
    r.shape = batch;
    if (!a1) r.shape.push_back(int64_t(m));
    if (!b1) r.shape.push_back(int64_t(n));
    const size_t batches = count_of(batch);
    for (size_t t = 0; t < batches; ++t) {
        const size_t oa = broadcast_source(t, batch, ba) * m * k;
        const size_t ob = broadcast_source(t, batch, bb) * k * n;
        for (size_t i = 0; i < m; ++i)
            for (size_t j = 0; j < n; ++j) {
                double s = 0, mag = 0;
                for (size_t q = 0; q < k; ++q) {
                    s += a[oa + i * k + q] * b[ob + q * n + j];
                    mag += std::fabs(a[oa + i * k + q] * b[ob + q * n + j]);
                }
                r.y.push_back(s);
                r.magnitude.push_back(mag);
            }
    }
    return r;
}

void check_matmul(const rt::Shape &sa, const rt::Shape &sb, unsigned threads, uint32_t seed) {
    SCOPED_TRACE(
        fmt::format("{} x {}, {} threads", rt::shape_string(sa), rt::shape_string(sb), threads));
    const std::vector<float> a = random_floats(count_of(sa), seed);
    const std::vector<float> b = random_floats(count_of(sb), seed + 1);
    const MatMulRef ref = matmul_ref({a.begin(), a.end()}, sa, {b.begin(), b.end()}, sb);
    rt::Session s(one_node(13, "MatMul", {"a", "b"}).model(), rt::RunOptions{.threads = threads});
    const rt::Tensor y = s.run({{"a", f32(sa, a)}, {"b", f32(sb, b)}}).at(0).second;
    ASSERT_EQ(y.dtype(), DataType::float32);
    ASSERT_EQ(y.shape(), ref.shape);
    const std::vector<float> got = y.to_vector<float>();
    ASSERT_EQ(got.size(), ref.y.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::fabs(double(got[i]) - ref.y[i]) > 1e-5 * ref.magnitude[i] + 1e-30) {
            if (++bad <= 5)
                ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << ref.y[i];
        }
    EXPECT_EQ(bad, 0u);
}

TEST(MatMul, NumPyShapesAgainstADoubleLoop) {
    const std::vector<std::pair<rt::Shape, rt::Shape>> cases = {
        {{3, 4}, {4, 5}},
        {{4}, {4, 5}},                       // 1-D A: [1, 4], the 1 removed
        {{3, 4}, {4}},                       // 1-D B
        {{7}, {7}},                          // a dot product: a scalar
        {{2, 3, 4}, {4, 5}},                 // a weight for every batch
        {{2, 3, 4}, {2, 4, 5}},              // batch by batch
        {{1, 3, 4}, {2, 4, 5}},              // A broadcast
        {{2, 1, 3, 4}, {3, 4, 5}},           // both broadcast: [2, 3, 3, 5]
        {{2, 6, 4}, {4}},                    // N-D times a vector
        {{5}, {2, 3, 5, 2}},                 // a vector times N-D
        {{2, 2, 3, 5, 8}, {2, 2, 1, 8, 7}},  // [B, Hkv, r, S, D] x [B, Hkv, 1, D, T]
        {{1, 4, 1, 64}, {1, 4, 64, 33}},     // decode attention scores
    };
    uint32_t seed = 1;
    for (const auto &[sa, sb] : cases)
        for (const unsigned threads : {1u, 3u}) check_matmul(sa, sb, threads, seed += 2);
}

// Large enough that the product is cut into pieces across threads (rows or columns).
TEST(MatMul, LargeProductsSplitAcrossThreads) {
    check_matmul({1, 512}, {512, 1024}, 4, 11);  // one row: column blocks
    check_matmul({300, 96}, {96, 40}, 4, 13);    // more rows than columns: row blocks
    check_matmul({2, 3, 70, 64}, {2, 3, 64, 70}, 2, 17);
    check_matmul({2, 100, 64}, {64, 128}, 3, 19);  // the weight path, folded batch
}

TEST(MatMul, Float64AndEmpty) {
    const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {0.5, -1, 2, 0.25, 1, -3};
    const rt::Tensor y = run1(
        one_node(13, "MatMul", {"a", "b"}),
        {{"a", tensor(DataType::float64, {2, 3}, a)}, {"b", tensor(DataType::float64, {3, 2}, b)}});
    EXPECT_EQ(y.dtype(), DataType::float64);
    EXPECT_EQ(y.to_vector<double>(), matmul_ref(a, {2, 3}, b, {3, 2}).y);
    // K = 0: zeros; M = 0: empty.
    const rt::Tensor z =
        run1(one_node(13, "MatMul", {"a", "b"}), {{"a", f32({2, 0}, {})}, {"b", f32({0, 3}, {})}});
    EXPECT_EQ(z.shape(), (rt::Shape{2, 3}));
    EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
    const rt::Tensor e = run1(one_node(13, "MatMul", {"a", "b"}),
                              {{"a", f32({0, 4}, {})}, {"b", f32({4, 3}, std::vector<float>(12))}});
    EXPECT_EQ(e.shape(), (rt::Shape{0, 3}));
}

TEST(MatMul, Errors) {
    const auto err = [](const rt::Tensor &a, const rt::Tensor &b, int64_t opset = 13) {
        return run_error(one_node(opset, "MatMul", {"a", "b"}), {{"a", a}, {"b", b}});
    };
    EXPECT_HAS(err(f32({2, 3}, std::vector<float>(6)), f32({4, 2}, std::vector<float>(8))),
               "A [2, 3] has 3 columns but B [4, 2] has 4 rows");
    EXPECT_HAS(err(f32({2, 2, 3}, std::vector<float>(12)), f32({3, 3, 2}, std::vector<float>(18))),
               "the batch dims of A [2, 2, 3] and B [3, 3, 2] cannot be broadcast together");
    EXPECT_HAS(err(tensor(DataType::int32, {1, 1}, std::vector<int32_t>{1}),
                   tensor(DataType::int32, {1, 1}, std::vector<int32_t>{1})),
               "inputs must be float or double here, not int32");
    EXPECT_HAS(err(f32({1}, {1}), tensor(DataType::float64, {1}, std::vector<double>{1})),
               "must have the same type");
    EXPECT_HAS(err(f32({}, {1}), f32({1}, {1})), "rank at least 1");
    // MatMul-1 at opset 1..8 runs the same code.
    EXPECT_EQ(err(f32({1, 1}, {2}), f32({1, 1}, {3}), 8), "");
}

// ---------------------------------------------------------------------------------------------
// Gemm

std::vector<double> gemm_ref(const std::vector<float> &a, const rt::Shape &sa,
                             const std::vector<float> &b, const rt::Shape &sb,
                             const std::vector<float> *c, const rt::Shape &sc, bool ta, bool tb,
                             double alpha, double beta) {
    const size_t m = size_t(ta ? sa[1] : sa[0]), k = size_t(ta ? sa[0] : sa[1]);
    const size_t n = size_t(tb ? sb[0] : sb[1]);
    std::vector<double> y(m * n);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            double s = 0;
            for (size_t q = 0; q < k; ++q)
                s += double(ta ? a[q * m + i] : a[i * k + q]) *
                     double(tb ? b[j * k + q] : b[q * n + j]);
            double bias = 0;
            if (c) bias = (*c)[broadcast_source(i * n + j, {int64_t(m), int64_t(n)}, sc)];
            y[i * n + j] = alpha * s + beta * bias;
        }
    return y;
}

TEST(Gemm, TransposesScalesAndBiasShapes) {
    const int64_t m = 5, k = 7, n = 6;
    uint32_t seed = 100;
    for (const bool ta : {false, true})
        for (const bool tb : {false, true})
            for (const rt::Shape &sc :
                 std::vector<rt::Shape>{{}, {1}, {n}, {1, n}, {m, 1}, {m, n}, {-1}})  // {-1}: no C
                for (const auto &[alpha, beta] :
                     std::vector<std::pair<float, float>>{{1, 1}, {0.25f, 0.35f}, {2, 0}}) {
                    SCOPED_TRACE(fmt::format("transA {} transB {} C {} alpha {} beta {}", ta, tb,
                                             rt::shape_string(sc), alpha, beta));
                    const rt::Shape sa = ta ? rt::Shape{k, m} : rt::Shape{m, k};
                    const rt::Shape sb = tb ? rt::Shape{n, k} : rt::Shape{k, n};
                    const std::vector<float> a = random_floats(size_t(m * k), ++seed);
                    const std::vector<float> b = random_floats(size_t(n * k), ++seed);
                    const bool has_c = sc != rt::Shape{-1};
                    const std::vector<float> c = random_floats(has_c ? count_of(sc) : 0, ++seed);
                    ModelBuilder g(13);
                    g.input("a").input("b").output("y");
                    if (has_c) g.input("c");
                    g.node("Gemm", {"a", "b", has_c ? "c" : ""}, {"y"},
                           {attr_int("transA", ta), attr_int("transB", tb),
                            attr_float("alpha", alpha), attr_float("beta", beta)});
                    rt::Inputs in = {{"a", f32(sa, a)}, {"b", f32(sb, b)}};
                    if (has_c) in["c"] = f32(sc, c);
                    const rt::Tensor y = run1(g, in);
                    ASSERT_EQ(y.shape(), (rt::Shape{m, n}));
                    const std::vector<double> want =
                        gemm_ref(a, sa, b, sb, has_c ? &c : nullptr, sc, ta, tb, alpha, beta);
                    const std::vector<float> got = y.to_vector<float>();
                    for (size_t i = 0; i < got.size(); ++i)
                        EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
                }
}

TEST(Gemm, LinearLayerSplitAcrossThreads) {
    // Y = X Wᵀ + bias, the exporter's linear layer, big enough to be cut into column blocks.
    const int64_t m = 3, k = 256, n = 640;
    const std::vector<float> x = random_floats(size_t(m * k), 1),
                             w = random_floats(size_t(n * k), 2);
    const std::vector<float> bias = random_floats(size_t(n), 3);
    ModelBuilder g(13);
    g.input("a").input("b").input("c").output("y");
    g.node("Gemm", {"a", "b", "c"}, {"y"}, {attr_int("transB", 1)});
    rt::Session s(g.model(), rt::RunOptions{.threads = 4});
    const rt::Tensor y =
        s.run({{"a", f32({m, k}, x)}, {"b", f32({n, k}, w)}, {"c", f32({n}, bias)}}).at(0).second;
    const std::vector<double> want = gemm_ref(x, {m, k}, w, {n, k}, &bias, {n}, false, true, 1, 1);
    const std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
}

TEST(Gemm, Errors) {
    const auto err = [](std::initializer_list<onnx::AttributeProto> attrs, const rt::Tensor &a,
                        const rt::Tensor &b, const rt::Tensor *c, int64_t opset = 13) {
        ModelBuilder g(opset);
        g.input("a").input("b").output("y");
        if (c) g.input("c");
        g.node("Gemm", {"a", "b", c ? "c" : ""}, {"y"}, attrs);
        rt::Inputs in = {{"a", a}, {"b", b}};
        if (c) in["c"] = *c;
        return run_error(g, in);
    };
    const rt::Tensor a = f32({2, 3}, std::vector<float>(6)),
                     b = f32({3, 4}, std::vector<float>(12));
    EXPECT_HAS(err({attr_int("transB", 1)}, a, b, nullptr),
               "A [2, 3] has K = 3 but B [3, 4] (transposed) has K = 4");
    EXPECT_HAS(err({attr_int("transA", 2)}, a, b, nullptr), "attribute 'transA' must be 0 or 1");
    const rt::Tensor c_bad = f32({3, 4}, std::vector<float>(12));
    EXPECT_HAS(err({}, a, b, &c_bad), "input C [3, 4] cannot be broadcast to [2, 4]");
    const rt::Tensor v = f32({6}, std::vector<float>(6));
    EXPECT_HAS(err({}, v, b, nullptr), "inputs A and B must be 2-D");
    // Gemm-9 needs C; Gemm-11 does not.
    EXPECT_HAS(err({}, a, b, nullptr, 9), "input");
    EXPECT_EQ(err({}, a, b, nullptr, 11), "");
}

// ---------------------------------------------------------------------------------------------
// Softmax

std::vector<double> softmax_ref(const std::vector<float> &x, const rt::Shape &shape, size_t axis) {
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= size_t(shape[d]);
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= size_t(shape[d]);
    const size_t len = size_t(shape[axis]);
    std::vector<double> y(x.size());
    for (size_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < inner; ++i) {
            const auto at = [&](size_t j) { return (o * len + j) * inner + i; };
            double max = -INFINITY, sum = 0;
            for (size_t j = 0; j < len; ++j) max = std::max(max, double(x[at(j)]));
            for (size_t j = 0; j < len; ++j) sum += std::exp(double(x[at(j)]) - max);
            for (size_t j = 0; j < len; ++j) y[at(j)] = std::exp(double(x[at(j)]) - max) / sum;
        }
    return y;
}

TEST(Softmax, EveryAxisAgainstADoubleLoop) {
    const rt::Shape shape = {3, 4, 5};
    const std::vector<float> x = random_floats(60, 7, -20, 20);
    for (const int64_t axis : {-3, -2, -1, 0, 1, 2, 99}) {
        SCOPED_TRACE(axis);
        const ModelBuilder g = axis == 99
                                   ? one_node(13, "Softmax", {"x"})
                                   : one_node(13, "Softmax", {"x"}, {attr_int("axis", axis)});
        const rt::Tensor y = run1(g, {{"x", f32(shape, x)}});
        const std::vector<double> want =
            softmax_ref(x, shape, size_t(axis == 99 ? 2 : (axis + 3) % 3));
        const std::vector<float> got = y.to_vector<float>();
        for (size_t i = 0; i < got.size(); ++i)
            EXPECT_NEAR(got[i], want[i], 1e-6 * want[i] + 1e-30) << i;
    }
}

TEST(Softmax, MaskedRowsAreFiniteAndUniform) {
    const float lowest = -3.4e38f, inf = std::numeric_limits<float>::infinity();
    const std::vector<float> x = {lowest, lowest,   lowest,   lowest,     // fully masked
                                  -inf,   -inf,     -inf,     -inf,       // fully masked with -inf
                                  lowest, 0,        lowest,   1,          // causal mask
                                  1e4f,   1e4f + 1, 1e4f + 2, 1e4f + 3};  // large numbers
    const rt::Tensor y = run1(one_node(13, "Softmax", {"x"}), {{"x", f32({4, 4}, x)}});
    const std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(got[i], 0.25f) << i;
    EXPECT_EQ(got[8], 0.0f);
    EXPECT_EQ(got[10], 0.0f);
    EXPECT_FLOAT_EQ(got[9], float(1 / (1 + std::exp(1.0))));
    EXPECT_FLOAT_EQ(got[11], float(std::exp(1.0) / (1 + std::exp(1.0))));
    const double s = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    EXPECT_FLOAT_EQ(got[12], float(1 / s));
    EXPECT_FLOAT_EQ(got[15], float(std::exp(3.0) / s));
    for (const float v : got) EXPECT_TRUE(std::isfinite(v));
}

TEST(Softmax, HalvesAndErrors) {
    // float16 [0, ln 3]: 1/4 and 3/4 are exact halves.
    const std::vector<uint16_t> h = {0x0000, 0x3C65};  // 0 and 1.0986 (ln 3, rounded)
    const rt::Tensor y =
        run1(one_node(13, "Softmax", {"x"}), {{"x", tensor(DataType::float16, {2}, h)}});
    EXPECT_EQ(y.dtype(), DataType::float16);
    const std::vector<uint16_t> got = y.to_vector<uint16_t>();
    EXPECT_NEAR(fp16_to_f32(got[0]), 0.25, 1e-3);
    EXPECT_NEAR(fp16_to_f32(got[1]), 0.75, 1e-3);
    EXPECT_HAS(run_error(one_node(13, "Softmax", {"x"}, {attr_int("axis", 2)}),
                         {{"x", f32({2, 2}, {1, 2, 3, 4})}}),
               "attribute 'axis'");
    EXPECT_HAS(run_error(one_node(13, "Softmax", {"x"}),
                         {{"x", tensor(DataType::int32, {2}, std::vector<int32_t>{1, 2})}}),
               "input must be float, double, float16 or bfloat16, not int32");
    EXPECT_HAS(run_error(one_node(12, "Softmax", {"x"}), {{"x", f32({2}, {1, 2})}}),
               "supported from opset 13");
}

// ---------------------------------------------------------------------------------------------
// ReduceMean

std::pair<rt::Shape, std::vector<double>> mean_ref(const std::vector<float> &x,
                                                   const rt::Shape &shape,
                                                   const std::vector<bool> &reduced,
                                                   bool keepdims) {
    rt::Shape kept;  // the output with reduced dims as 1
    for (size_t d = 0; d < shape.size(); ++d) kept.push_back(reduced[d] ? 1 : shape[d]);
    std::vector<double> sum(count_of(kept), 0);
    size_t per = 1;
    for (size_t d = 0; d < shape.size(); ++d)
        if (reduced[d]) per *= size_t(shape[d]);
    for (size_t flat = 0; flat < x.size(); ++flat) {
        size_t rest = flat, out = 0, stride = 1;
        for (size_t d = shape.size(); d-- > 0;) {
            const size_t i = rest % size_t(shape[d]);
            rest /= size_t(shape[d]);
            if (!reduced[d]) out += i * stride;
            stride *= size_t(kept[d]);
        }
        sum[out] += x[flat];
    }
    for (double &s : sum) s /= double(per);
    rt::Shape out_shape;
    for (size_t d = 0; d < shape.size(); ++d)
        if (!reduced[d] || keepdims) out_shape.push_back(kept[d]);
    return {out_shape, sum};
}

TEST(ReduceMean, AxesKeepdimsAndBothVersions) {
    const rt::Shape shape = {2, 3, 4, 5};
    const std::vector<float> x = random_floats(120, 23, -10, 10);
    const std::vector<std::vector<int64_t>> axes_cases = {
        {}, {3}, {-1}, {0}, {1, 2}, {0, 2}, {-4, 3}, {2, 0, 3}, {0, 1, 2, 3}};
    for (const std::vector<int64_t> &axes : axes_cases)
        for (const int64_t keepdims : {0, 1})
            for (const int64_t opset : {13, 18}) {
                SCOPED_TRACE(fmt::format("axes [{}] keepdims {} opset {}", fmt::join(axes, ", "),
                                         keepdims, opset));
                std::vector<bool> reduced(4, axes.empty());
                for (const int64_t a : axes) reduced[size_t((a + 4) % 4)] = true;
                const auto [want_shape, want] = mean_ref(x, shape, reduced, keepdims != 0);
                rt::Tensor y;
                if (opset == 13) {
                    ModelBuilder g =
                        axes.empty()
                            ? one_node(13, "ReduceMean", {"x"}, {attr_int("keepdims", keepdims)})
                            : one_node(13, "ReduceMean", {"x"},
                                       {attr_ints("axes", axes), attr_int("keepdims", keepdims)});
                    y = run1(g, {{"x", f32(shape, x)}});
                } else {
                    y = run1(
                        one_node(18, "ReduceMean", {"x", "axes"}, {attr_int("keepdims", keepdims)}),
                        {{"x", f32(shape, x)}, {"axes", i64(axes)}});
                }
                ASSERT_EQ(y.shape(), want_shape);
                const std::vector<float> got = y.to_vector<float>();
                for (size_t i = 0; i < got.size(); ++i)
                    EXPECT_EQ(got[i], float(want[i])) << i;  // sums in double, rounded once
            }
}

TEST(ReduceMean, NoopWithEmptyAxesAndErrors) {
    const std::vector<float> x = {1, 2, 3, 4, 5, 6};
    // ReduceMean-18 without axes (absent or empty): every axis, or the input with noop.
    EXPECT_EQ(run1(one_node(18, "ReduceMean", {"x"}), {{"x", f32({2, 3}, x)}}).to_vector<float>(),
              std::vector<float>{3.5f});
    const rt::Tensor same =
        run1(one_node(18, "ReduceMean", {"x", "axes"}, {attr_int("noop_with_empty_axes", 1)}),
             {{"x", f32({2, 3}, x)}, {"axes", i64({})}});
    EXPECT_EQ(same.shape(), (rt::Shape{2, 3}));
    EXPECT_EQ(same.to_vector<float>(), x);
    const rt::Tensor all =
        run1(one_node(18, "ReduceMean", {"x", "axes"}, {attr_int("keepdims", 0)}),
             {{"x", f32({2, 3}, x)}, {"axes", i64({})}});
    EXPECT_EQ(all.shape(), rt::Shape{});
    EXPECT_EQ(all.to_vector<float>(), std::vector<float>{3.5f});
    // float16: (1 + 2) / 2 = 1.5, exact.
    const rt::Tensor h =
        run1(one_node(18, "ReduceMean", {"x"}),
             {{"x", tensor(DataType::float16, {2}, std::vector<uint16_t>{0x3C00, 0x4000})}});
    EXPECT_EQ(h.to_vector<uint16_t>(), std::vector<uint16_t>{0x3E00});

    const auto err18 = [&](const std::vector<int64_t> &axes) {
        return run_error(one_node(18, "ReduceMean", {"x", "axes"}),
                         {{"x", f32({2, 3}, x)}, {"axes", i64(axes)}});
    };
    EXPECT_HAS(err18({1, -1}), "axes contains axis 1 twice");
    EXPECT_HAS(err18({2}), "axes value");
    EXPECT_HAS(run_error(one_node(13, "ReduceMean", {"x"}, {attr_int("keepdims", 2)}),
                         {{"x", f32({2, 3}, x)}}),
               "attribute 'keepdims' must be 0 or 1, not 2");
    EXPECT_HAS(run_error(one_node(13, "ReduceMean", {"x", "axes"}),
                         {{"x", f32({2, 3}, x)}, {"axes", i64({0})}}),
               "input");  // ReduceMean-13 has one input
    EXPECT_HAS(run_error(one_node(18, "ReduceMean", {"x"}),
                         {{"x", tensor(DataType::int64, {1}, std::vector<int64_t>{1})}}),
               "not int64");
}

// ---------------------------------------------------------------------------------------------
// Sqrt, Tanh, Sigmoid, Exp, Reciprocal

TEST(FloatUnary, EachAgainstDoubleMath) {
    const std::vector<float> x = random_floats(1000, 31, -8, 8);
    const std::vector<std::pair<const char *, double (*)(double)>> ops = {
        {"Sqrt", [](double v) { return std::sqrt(std::fabs(v)); }},
        {"Tanh", [](double v) { return std::tanh(v); }},
        {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
        {"Exp", [](double v) { return std::exp(v); }},
        {"Reciprocal", [](double v) { return 1 / v; }},
    };
    for (const auto &[op, f] : ops) {
        SCOPED_TRACE(op);
        std::vector<float> in = x;
        if (std::string(op) == "Sqrt")
            for (float &v : in) v = std::fabs(v);
        for (const unsigned threads : {1u, 2u}) {
            rt::Session s(one_node(13, op, {"x"}).model(), rt::RunOptions{.threads = threads});
            const rt::Tensor y = s.run({{"x", f32({10, 100}, in)}}).at(0).second;
            ASSERT_EQ(y.shape(), (rt::Shape{10, 100}));
            const std::vector<float> got = y.to_vector<float>();
            for (size_t i = 0; i < got.size(); ++i) {
                const double want = f(in[i]);
                EXPECT_NEAR(got[i], want, 1e-7 * std::fabs(want)) << in[i];
            }
        }
        // float64 and the -6 version.
        const rt::Tensor d =
            run1(one_node(6, op, {"x"}),
                 {{"x", tensor(DataType::float64, {2}, std::vector<double>{0.5, 2.25})}});
        EXPECT_EQ(d.dtype(), DataType::float64);
        const std::vector<double> got = d.to_vector<double>();
        EXPECT_NEAR(got[0], f(0.5), 1e-15 * std::fabs(f(0.5)));
        EXPECT_NEAR(got[1], f(2.25), 1e-15 * std::fabs(f(2.25)));
    }
}

TEST(FloatUnary, ExactCasesHalvesAndErrors) {
    EXPECT_EQ(run1(one_node(13, "Sqrt", {"x"}), {{"x", f32({3}, {1, 4, 9})}}).to_vector<float>(),
              (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(
        run1(one_node(13, "Reciprocal", {"x"}), {{"x", f32({2}, {-4, 2})}}).to_vector<float>(),
        (std::vector<float>{-0.25f, 0.5f}));
    // Sigmoid saturates without NaN; Exp overflows to inf.
    const std::vector<float> s =
        run1(one_node(13, "Sigmoid", {"x"}), {{"x", f32({3}, {-1000, 0, 1000})}})
            .to_vector<float>();
    EXPECT_EQ(s, (std::vector<float>{0, 0.5f, 1}));
    EXPECT_TRUE(std::isinf(
        run1(one_node(13, "Exp", {"x"}), {{"x", f32({1}, {100})}}).to_vector<float>()[0]));
    // float16: sqrt(4) = 2, bfloat16: 1 / 4.
    EXPECT_EQ(run1(one_node(13, "Sqrt", {"x"}),
                   {{"x", tensor(DataType::float16, {1}, std::vector<uint16_t>{0x4400})}})
                  .to_vector<uint16_t>(),
              std::vector<uint16_t>{0x4000});
    EXPECT_EQ(run1(one_node(13, "Reciprocal", {"x"}),
                   {{"x", tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0x4080})}})
                  .to_vector<uint16_t>(),
              std::vector<uint16_t>{0x3E80});
    EXPECT_HAS(run_error(one_node(13, "Tanh", {"x"}),
                         {{"x", tensor(DataType::int32, {1}, std::vector<int32_t>{1})}}),
               "input must be float, double, float16 or bfloat16, not int32");
}

// ---------------------------------------------------------------------------------------------
// Greater, Less, GreaterOrEqual, LessOrEqual, And, Or, Not

template <class T>
void check_comparisons(DataType dtype, const std::vector<T> &a, const rt::Shape &sa,
                       const std::vector<T> &b, const rt::Shape &sb) {
    // Compared in T itself (int64 values beyond 2^53 stay distinct).
    const std::vector<std::pair<const char *, bool (*)(T, T)>> ops = {
        {"Greater", [](T x, T y) { return x > y; }},
        {"Less", [](T x, T y) { return x < y; }},
        {"GreaterOrEqual", [](T x, T y) { return x >= y; }},
        {"LessOrEqual", [](T x, T y) { return x <= y; }},
    };
    for (const auto &[op, f] : ops) {
        SCOPED_TRACE(fmt::format("{} {} {} {}", op, dtype_name(dtype), rt::shape_string(sa),
                                 rt::shape_string(sb)));
        rt::Shape shape;
        const auto want =
            broadcast_ref(a, sa, b, sb, &shape, [f = f](T x, T y) { return uint8_t(f(x, y)); });
        const rt::Tensor y = run1(one_node(16, op, {"a", "b"}),
                                  {{"a", tensor(dtype, sa, a)}, {"b", tensor(dtype, sb, b)}});
        EXPECT_EQ(y.dtype(), DataType::bool_);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.to_vector<uint8_t>(), want);
    }
}

TEST(Compare, NumericTypesWithBroadcasting) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    check_comparisons<float>(DataType::float32, {1, 2, 3, nan, -0.0f, 5, 6, 7}, {2, 4},
                             {2, 2, 0.0f, 8}, {4});
    check_comparisons<float>(DataType::float32, random_floats(24, 5), {2, 3, 4},
                             random_floats(6, 6), {2, 3, 1});
    check_comparisons<int32_t>(DataType::int32, {-3, 0, 7, 2147483647}, {4, 1},
                               {0, 7, -2147483647 - 1}, {3});
    check_comparisons<int64_t>(DataType::int64, {1LL << 60, -5}, {2}, {(1LL << 60) + 1}, {});
    check_comparisons<uint8_t>(DataType::uint8, {0, 200, 255}, {3}, {200}, {1});
    // Large enough to run on several threads.
    const std::vector<float> big = random_floats(200000, 9);
    rt::Session s(one_node(13, "Greater", {"a", "b"}).model(), rt::RunOptions{.threads = 3});
    const rt::Tensor y = s.run({{"a", f32({200000}, big)}, {"b", f32({}, {0.0f})}}).at(0).second;
    const std::vector<uint8_t> got = y.to_vector<uint8_t>();
    for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(got[i], big[i] > 0) << i;
}

TEST(Logical, AndOrNot) {
    const std::vector<uint8_t> a = {0, 1, 0, 1, 2, 0}, b = {0, 1, 1};
    const auto both = [&](const char *op) {
        return run1(one_node(7, op, {"a", "b"}), {{"a", tensor(DataType::bool_, {2, 3}, a)},
                                                  {"b", tensor(DataType::bool_, {3}, b)}});
    };
    rt::Shape shape;
    EXPECT_EQ(both("And").to_vector<uint8_t>(),
              broadcast_ref(a, {2, 3}, b, {3}, &shape,
                            [](uint8_t x, uint8_t y) { return uint8_t(x && y); }));
    EXPECT_EQ(both("Or").to_vector<uint8_t>(),
              broadcast_ref(a, {2, 3}, b, {3}, &shape,
                            [](uint8_t x, uint8_t y) { return uint8_t(x || y); }));
    EXPECT_EQ(both("Or").shape(), (rt::Shape{2, 3}));
    const rt::Tensor n =
        run1(one_node(1, "Not", {"x"}), {{"x", tensor(DataType::bool_, {2, 3}, a)}});
    EXPECT_EQ(n.dtype(), DataType::bool_);
    EXPECT_EQ(n.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 0, 0, 1}));
    EXPECT_HAS(
        run_error(one_node(7, "And", {"a", "b"}), {{"a", f32({1}, {1})}, {"b", f32({1}, {1})}}),
        "inputs must be bool, not float");
    EXPECT_HAS(run_error(one_node(1, "Not", {"x"}), {{"x", f32({1}, {1})}}),
               "input must be bool, not float");
    EXPECT_HAS(run_error(one_node(13, "Greater", {"a", "b"}),
                         {{"a", tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})},
                          {"b", tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})}}),
               "inputs must be numeric, not bool");
    EXPECT_HAS(run_error(one_node(13, "Less", {"a", "b"}),
                         {{"a", f32({2}, {1, 2})}, {"b", f32({3}, {1, 2, 3})}}),
               "shapes [2] and [3] cannot be broadcast together");
}

// ---------------------------------------------------------------------------------------------
// Expand and Squeeze

TEST(Expand, BroadcastsBothWays) {
    const std::vector<float> x = {1, 2, 3};
    const rt::Tensor y = run1(one_node(13, "Expand", {"x", "shape"}),
                              {{"x", f32({3, 1}, x)}, {"shape", i64({2, 1, 6})}});
    EXPECT_EQ(y.shape(), (rt::Shape{2, 3, 6}));
    std::vector<float> want;
    for (int r = 0; r < 2; ++r)
        for (const float v : x) want.insert(want.end(), 6, v);
    EXPECT_EQ(y.to_vector<float>(), want);
    // A shape smaller than the input's keeps the input's dims.
    const rt::Tensor z = run1(one_node(8, "Expand", {"x", "shape"}),
                              {{"x", f32({3, 1}, x)}, {"shape", i64({3, 4})}});
    EXPECT_EQ(z.shape(), (rt::Shape{3, 4}));
    const rt::Tensor u =
        run1(one_node(13, "Expand", {"x", "shape"}), {{"x", f32({1, 3}, x)}, {"shape", i64({1})}});
    EXPECT_EQ(u.shape(), (rt::Shape{1, 3}));
    EXPECT_EQ(u.to_vector<float>(), x);
    // Int64 and bool elements; the causal-mask shape.
    const rt::Tensor m =
        run1(one_node(13, "Expand", {"x", "shape"}),
             {{"x", tensor(DataType::bool_, {1, 1, 2, 2}, std::vector<uint8_t>{1, 0, 1, 1})},
              {"shape", i64({2, 3, 2, 2})}});
    EXPECT_EQ(m.to_vector<uint8_t>().size(), 24u);
    EXPECT_EQ(m.to_vector<uint8_t>()[20], 1);
    EXPECT_EQ(m.to_vector<uint8_t>()[21], 0);
    EXPECT_HAS(run_error(one_node(13, "Expand", {"x", "shape"}),
                         {{"x", f32({3, 1}, x)}, {"shape", i64({2, 6})}}),
               "cannot be broadcast together");
    EXPECT_HAS(run_error(one_node(13, "Expand", {"x", "shape"}),
                         {{"x", f32({3, 1}, x)}, {"shape", i64({-1, 1})}}),
               "negative dimension -1");
}

TEST(Squeeze, AxesInputAttributeAndErrors) {
    const std::vector<float> x = {1, 2, 3};
    const auto sq13 = [&](const rt::Shape &shape, const std::vector<int64_t> *axes) {
        ModelBuilder g =
            axes ? one_node(13, "Squeeze", {"x", "axes"}) : one_node(13, "Squeeze", {"x"});
        rt::Inputs in = {{"x", f32(shape, x)}};
        if (axes) in["axes"] = i64(*axes);
        return run1(g, in);
    };
    const std::vector<int64_t> first = {0}, neg = {-2}, both = {0, -1};
    EXPECT_EQ(sq13({1, 3, 1}, &first).shape(), (rt::Shape{3, 1}));
    EXPECT_EQ(sq13({1, 3, 1, 1}, &neg).shape(), (rt::Shape{1, 3, 1}));
    EXPECT_EQ(sq13({1, 3, 1}, &both).shape(), (rt::Shape{3}));
    EXPECT_EQ(sq13({1, 3, 1}, nullptr).shape(), (rt::Shape{3}));
    EXPECT_EQ(sq13({1, 3, 1}, nullptr).to_vector<float>(), x);
    EXPECT_EQ(
        run1(one_node(11, "Squeeze", {"x"}, {attr_ints("axes", {-1})}), {{"x", f32({3, 1}, x)}})
            .shape(),
        (rt::Shape{3}));
    const std::vector<int64_t> bad = {1};
    EXPECT_HAS(run_error(one_node(13, "Squeeze", {"x", "axes"}),
                         {{"x", f32({1, 3}, x)}, {"axes", i64(bad)}}),
               "cannot squeeze axis 1 of shape [1, 3]: its size is not 1");
    EXPECT_HAS(run_error(one_node(1, "Squeeze", {"x"}, {attr_ints("axes", {-1})}),
                         {{"x", f32({3, 1}, x)}}),
               "negative");
}

// ---------------------------------------------------------------------------------------------
// A decoder-shaped chain: dtype inference names each node's types before anything runs, and a
// backend that registers none of these kernels reports them unsupported.

TEST(DecoderOps, DtypeInferenceThroughAChain) {
    ModelBuilder g(18);
    g.input("x", DataType::float32, {2, 4}).input("w", DataType::float32, {4, 3});
    g.output("mask");
    g.initializer("axes", i64({-1}));
    g.initializer("zero", f32({}, {0}));
    g.node("MatMul", {"x", "w"}, {"h"});
    g.node("Sigmoid", {"h"}, {"s"});
    g.node("Softmax", {"s"}, {"p"});
    g.node("ReduceMean", {"p", "axes"}, {"m"});
    g.node("Greater", {"m", "zero"}, {"g"});
    g.node("Not", {"g"}, {"ng"});
    g.node("Or", {"g", "ng"}, {"mask"});
    rt::Session s(g.model());
    const rt::Tensor y =
        s.run({{"x", f32({2, 4}, random_floats(8, 1))}, {"w", f32({4, 3}, random_floats(12, 2))}})
            .at(0)
            .second;
    EXPECT_EQ(y.dtype(), DataType::bool_);
    EXPECT_EQ(y.shape(), (rt::Shape{2, 1}));
    EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1}));

    // What the session asks a backend: every node's types, inferred before anything runs. A
    // backend without these kernels has the nodes refused, naming the first.
    struct Recording final : rt::Backend {
        std::unique_ptr<rt::Backend> cpu = rt::make_cpu_backend(1);
        std::vector<rt::OpQuery> *queries;
        Recording(std::vector<rt::OpQuery> *q, bool kernels) : queries(q) {
            if (!kernels) return;
            for (const char *op :
                 {"MatMul", "Sigmoid", "Softmax", "ReduceMean", "Greater", "Not", "Or"})
                register_kernel(op, *cpu->kernel(op), [this](const rt::OpQuery &query) {
                    queries->push_back(query);
                    return rt::Capability{};
                });
        }
        std::string name() const override { return "recording"; }
        rt::DeviceTensor allocate(DataType d, const rt::Shape &s) override {
            return cpu->allocate(d, s);
        }
        rt::DeviceTensor upload(const rt::Tensor &t) override { return cpu->upload(t); }
        rt::Tensor download(const rt::DeviceTensor &t) override { return cpu->download(t); }
    };
    std::vector<rt::OpQuery> queries;
    rt::Session recorded(g.model(), std::make_unique<Recording>(&queries, true));
    const std::vector<std::pair<std::string, DataType>> want = {
        {"MatMul", DataType::float32},  {"Sigmoid", DataType::float32},
        {"Softmax", DataType::float32}, {"ReduceMean", DataType::float32},
        {"Greater", DataType::bool_},   {"Not", DataType::bool_},
        {"Or", DataType::bool_}};
    ASSERT_EQ(queries.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(queries[i].op_type, want[i].first);
        EXPECT_EQ(queries[i].outputs, std::vector<DataType>{want[i].second}) << want[i].first;
    }
    EXPECT_EQ(queries[3].version, 18);
    EXPECT_EQ(queries[4].inputs, (std::vector<DataType>{DataType::float32, DataType::float32}));
    EXPECT_EQ(recorded
                  .run({{"x", f32({2, 4}, random_floats(8, 1))},
                        {"w", f32({4, 3}, random_floats(12, 2))}})
                  .at(0)
                  .second.to_vector<uint8_t>(),
              (std::vector<uint8_t>{1, 1}));
    try {
        rt::Session bare(g.model(), std::make_unique<Recording>(&queries, false),
                         rt::RunOptions{.fallback = false});
        ADD_FAILURE() << "a backend without a MatMul kernel ran MatMul";
    } catch (const Error &e) {
        EXPECT_HAS(std::string(e.what()), "MatMul");
    }
}

}  // namespace
}  // namespace gguftool::rttest
