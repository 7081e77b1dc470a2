// The standard operators that lowered graphs use beyond ops_test.cpp's: Div, Mod, Min,
// BitwiseAnd, BitShift, Equal, Neg, Where, Slice, Transpose, BitCast, Range and Shape, against
// hand-checked values and plain reference loops, with their errors, empty tensors and
// broadcasting.
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

size_t count_of(const rt::Shape &s) {
    size_t n = 1;
    for (int64_t d : s) n *= size_t(d);
    return n;
}

template <class T>
std::vector<T> random_values(size_t n, uint64_t seed, bool nonzero = false) {
    std::mt19937_64 rng(seed);
    std::vector<T> v(n);
    for (T &x : v) {
        do {
            if constexpr (std::is_floating_point_v<T>)
                x = T(int(rng() % 2001) - 1000) / T(8);
            else
                x = T(rng());
        } while (nonzero && x == T(0));
    }
    return v;
}

// A model with graph inputs a, b (and c ...) feeding one node "n" whose output is y.
ModelBuilder one_node(const std::string &op, int64_t opset, size_t inputs,
                      std::initializer_list<onnx::AttributeProto> attrs = {}) {
    ModelBuilder m(opset);
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs; ++i) {
        names.push_back(std::string(1, char('a' + i)));
        m.input(names.back());
    }
    m.output("y");
    m.node(op, names, {"y"}, attrs, "n");
    return m;
}

rt::Tensor run2(const ModelBuilder &m, const rt::Tensor &a, const rt::Tensor &b) {
    return run1(m, {{"a", a}, {"b", b}});
}
std::string error2(const ModelBuilder &m, const rt::Tensor &a, const rt::Tensor &b) {
    return run_error(m, {{"a", a}, {"b", b}});
}

#define EXPECT_HAS(haystack, needle) \
    EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

template <class T>
std::vector<uint32_t> bits_of(const std::vector<T> &v) {
    std::vector<uint32_t> b;
    for (T x : v) b.push_back(std::bit_cast<uint32_t>(x));
    return b;
}

// Checks `op` on random a, b of `dt` and shapes sa, sb against `ref` (computed in T).
template <class T, class Ref>
void check_against(const ModelBuilder &m, DataType dt, const rt::Shape &sa, const rt::Shape &sb,
                   uint64_t seed, bool nonzero_b, Ref ref) {
    SCOPED_TRACE(
        fmt::format("{} {} {}", dtype_name(dt), rt::shape_string(sa), rt::shape_string(sb)));
    const std::vector<T> a = random_values<T>(count_of(sa), seed);
    const std::vector<T> b = random_values<T>(count_of(sb), seed + 1000, nonzero_b);
    rt::Shape shape;
    const auto expected = broadcast_ref(a, sa, b, sb, &shape, ref);
    const rt::Tensor y = run2(m, tensor(dt, sa, a), tensor(dt, sb, b));
    EXPECT_EQ(y.shape(), shape);
    using R = typename decltype(expected)::value_type;
    EXPECT_EQ(y.to_vector<R>(), expected);
}

const std::pair<rt::Shape, rt::Shape> kShapes[] = {
    {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}}, {{1}, {5}},           {{}, {2, 2}},
    {{4, 1, 3}, {1, 5, 1}}, {{0, 3}, {1, 3}},    {{3, 70000}, {3, 1}}, {{2, 1, 4, 1}, {3, 1, 5}}};

// ---------------------------------------------------------------------------------------------
// Div

template <class T>
T trunc_div(T a, T b) {  // C++ truncates; the minimum / -1 wraps
    if constexpr (std::is_signed_v<T>)
        if (b == -1) return T(uint64_t(0) - uint64_t(a));
    return T(a / b);
}

TEST(Div, IntegersTruncateTowardZero) {
    const ModelBuilder m = one_node("Div", 14, 2);
    EXPECT_EQ(
        run2(m, tensor(DataType::int32, {6}, std::vector<int32_t>{7, -7, 7, -7, 0, INT32_MIN}),
             tensor(DataType::int32, {6}, std::vector<int32_t>{2, 2, -2, -2, -3, -1}))
            .to_vector<int32_t>(),
        (std::vector<int32_t>{3, -3, -3, 3, 0, INT32_MIN}));
    EXPECT_EQ(run2(m, tensor(DataType::int8, {3}, std::vector<int8_t>{-128, -128, 127}),
                   tensor(DataType::int8, {3}, std::vector<int8_t>{-1, 3, -128}))
                  .to_vector<int8_t>(),
              (std::vector<int8_t>{-128, -42, 0}));
    EXPECT_EQ(run2(m, tensor(DataType::uint8, {3}, std::vector<uint8_t>{200, 7, 255}),
                   tensor(DataType::uint8, {1}, std::vector<uint8_t>{3}))
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{66, 2, 85}));
    EXPECT_EQ(run2(m, tensor(DataType::int64, {2}, std::vector<int64_t>{INT64_MIN, INT64_MIN}),
                   tensor(DataType::int64, {2}, std::vector<int64_t>{-1, 2}))
                  .to_vector<int64_t>(),
              (std::vector<int64_t>{INT64_MIN, INT64_MIN / 2}));
    uint64_t seed = 1;
    for (const auto &[sa, sb] : kShapes) {
        check_against<int32_t>(m, DataType::int32, sa, sb, seed++, true, trunc_div<int32_t>);
        check_against<int8_t>(m, DataType::int8, sb, sa, seed++, true, trunc_div<int8_t>);
        check_against<uint16_t>(m, DataType::uint16, sa, sb, seed++, true, trunc_div<uint16_t>);
        check_against<int64_t>(m, DataType::int64, sa, sb, seed++, true, trunc_div<int64_t>);
        check_against<uint64_t>(m, DataType::uint64, sa, sb, seed++, true, trunc_div<uint64_t>);
    }
}

TEST(Div, FloatsAndHalves) {
    const ModelBuilder m = one_node("Div", 13, 2);
    uint64_t seed = 100;
    for (const auto &[sa, sb] : kShapes) {
        check_against<float>(m, DataType::float32, sa, sb, seed++, false,
                             [](float a, float b) { return a / b; });
        check_against<double>(m, DataType::float64, sa, sb, seed++, false,
                              [](double a, double b) { return a / b; });
    }
    const rt::Tensor y = run2(m, tensor(DataType::float32, {4}, std::vector<float>{1, -1, 0, 1}),
                              tensor(DataType::float32, {4}, std::vector<float>{0, 0, 0, 3}));
    const std::vector<float> v = y.to_vector<float>();
    EXPECT_EQ(v[0], INFINITY);
    EXPECT_EQ(v[1], -INFINITY);
    EXPECT_TRUE(std::isnan(v[2]));
    EXPECT_EQ(v[3], 1.0f / 3);
    // float16: 1 / 3 = 0x3555 (0.333252); 1 / 2048 = 0x1000; 65504 / 0.5 overflows to inf.
    EXPECT_EQ(run2(m, tensor(DataType::float16, {3}, std::vector<uint16_t>{0x3c00, 0x3c00, 0x7bff}),
                   tensor(DataType::float16, {3}, std::vector<uint16_t>{0x4200, 0x6800, 0x3800}))
                  .to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3555, 0x1000, 0x7c00}));
    // bfloat16: 1 / 3 = 0x3eab (0.333984).
    EXPECT_EQ(run2(m, tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0x3f80}),
                   tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0x4040}))
                  .to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3eab}));
}

TEST(Div, IntegerDivisionByZeroIsAnErrorNamingTheNode) {
    const ModelBuilder m = one_node("Div", 14, 2);
    const std::string e = error2(m, tensor(DataType::int32, {3}, std::vector<int32_t>{5, 6, 7}),
                                 tensor(DataType::int32, {3}, std::vector<int32_t>{1, 0, 2}));
    EXPECT_HAS(e, "node \"n\" (Div-14): integer division by zero (element 1 of input B is 0)");
    // A broadcast zero; an empty output divides nothing.
    EXPECT_HAS(error2(m, tensor(DataType::uint8, {2}, std::vector<uint8_t>{1, 2}),
                      tensor(DataType::uint8, {1}, std::vector<uint8_t>{0})),
               "division by zero (element 0 of input B is 0)");
    EXPECT_EQ(run2(m, tensor(DataType::uint8, {0}, std::vector<uint8_t>{}),
                   tensor(DataType::uint8, {1}, std::vector<uint8_t>{0}))
                  .shape(),
              (rt::Shape{0}));
    EXPECT_HAS(error2(m, tensor(DataType::int32, {1}, std::vector<int32_t>{1}),
                      tensor(DataType::int64, {1}, std::vector<int64_t>{1})),
               "must have the same type");
    EXPECT_HAS(error2(m, tensor(DataType::bool_, {1}, std::vector<uint8_t>{1}),
                      tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})),
               "must be numeric");
    EXPECT_EQ(run2(m, tensor(DataType::int32, {0, 2}, std::vector<int32_t>{}),
                   tensor(DataType::int32, {2}, std::vector<int32_t>{1, 2}))
                  .shape(),
              (rt::Shape{0, 2}));
}

// ---------------------------------------------------------------------------------------------
// Mod

template <class T>
T python_mod(T a, T b) {
    const int64_t r = b == T(-1) ? 0 : int64_t(a) % int64_t(b);
    if (std::is_signed_v<T> && r != 0 && (r < 0) != (b < T(0))) return T(r + int64_t(b));
    return T(r);
}
template <class T>
T c_mod(T a, T b) {
    if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return 0;
    return T(a % b);
}

TEST(Mod, IntegerModTakesTheDivisorsSign) {
    const ModelBuilder m = one_node("Mod", 13, 2);
    EXPECT_EQ(
        run2(m, tensor(DataType::int32, {7}, std::vector<int32_t>{7, -7, 7, -7, 0, -8, INT32_MIN}),
             tensor(DataType::int32, {7}, std::vector<int32_t>{3, 3, -3, -3, -3, 5, -1}))
            .to_vector<int32_t>(),
        (std::vector<int32_t>{1, 2, -2, -1, 0, 2, 0}));
    EXPECT_EQ(run2(m, tensor(DataType::int8, {4}, std::vector<int8_t>{-128, -7, 7, -1}),
                   tensor(DataType::int8, {4}, std::vector<int8_t>{-1, 3, -3, 127}))
                  .to_vector<int8_t>(),
              (std::vector<int8_t>{0, 2, -2, 126}));
    EXPECT_EQ(run2(m, tensor(DataType::uint8, {3}, std::vector<uint8_t>{200, 7, 255}),
                   tensor(DataType::uint8, {3}, std::vector<uint8_t>{3, 2, 16}))
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{2, 1, 15}));
    uint64_t seed = 200;
    for (const auto &[sa, sb] : kShapes) {
        check_against<int32_t>(m, DataType::int32, sa, sb, seed++, true, python_mod<int32_t>);
        check_against<int16_t>(m, DataType::int16, sb, sa, seed++, true, python_mod<int16_t>);
        check_against<int64_t>(m, DataType::int64, sa, sb, seed++, true, [](int64_t a, int64_t b) {
            const int64_t r = b == -1 ? 0 : a % b;
            return r != 0 && (r < 0) != (b < 0) ? r + b : r;
        });
        check_against<uint32_t>(m, DataType::uint32, sa, sb, seed++, true, c_mod<uint32_t>);
    }
    // Modulo by zero names the node.
    EXPECT_HAS(error2(m, tensor(DataType::int64, {2}, std::vector<int64_t>{5, 6}),
                      tensor(DataType::int64, {2}, std::vector<int64_t>{2, 0})),
               "node \"n\" (Mod-13): integer modulo by zero (element 1 of input B is 0)");
}

TEST(Mod, FmodTakesTheDividendsSign) {
    const ModelBuilder m = one_node("Mod", 13, 2, {attr_int("fmod", 1)});
    const std::vector<float> y =
        run2(m,
             tensor(DataType::float32, {7},
                    std::vector<float>{7.5f, -7.5f, 7.5f, -0.0f, 3, 5, INFINITY}),
             tensor(DataType::float32, {7}, std::vector<float>{2, 2, -2, 2, INFINITY, 0, 2}))
            .to_vector<float>();
    EXPECT_EQ(bits_of(std::vector<float>(y.begin(), y.begin() + 5)),
              bits_of(std::vector<float>{1.5f, -1.5f, 1.5f, -0.0f, 3}));
    EXPECT_TRUE(std::isnan(y[5]));
    EXPECT_TRUE(std::isnan(y[6]));
    uint64_t seed = 300;
    for (const auto &[sa, sb] : kShapes) {
        check_against<double>(m, DataType::float64, sa, sb, seed++, true,
                              [](double a, double b) { return std::fmod(a, b); });
        check_against<int32_t>(m, DataType::int32, sa, sb, seed++, true, c_mod<int32_t>);
    }
    // Exact for integers beyond 2^53 (onnxruntime goes through double there).
    EXPECT_EQ(
        run2(m,
             tensor(DataType::int64, {2}, std::vector<int64_t>{(int64_t(1) << 62) + 1, INT64_MIN}),
             tensor(DataType::int64, {2}, std::vector<int64_t>{3, -1}))
            .to_vector<int64_t>(),
        (std::vector<int64_t>{2, 0}));
    // float16: fmod(5.5, 2) = 1.5.
    const rt::Tensor h = run2(m, tensor(DataType::float16, {1}, std::vector<uint16_t>{0x4580}),
                              tensor(DataType::float16, {1}, std::vector<uint16_t>{0x4000}));
    EXPECT_EQ(h.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3e00}));
}

TEST(Mod, Errors) {
    const rt::Tensor f = tensor(DataType::float32, {1}, std::vector<float>{1});
    EXPECT_HAS(error2(one_node("Mod", 13, 2), f, f),
               "node \"n\" (Mod-13): float inputs need attribute 'fmod' 1");
    EXPECT_HAS(error2(one_node("Mod", 10, 2, {attr_int("fmod", 2)}), f, f),
               "node \"n\" (Mod-10): attribute 'fmod' must be 0 or 1, not 2");
    EXPECT_HAS(error2(one_node("Mod", 13, 2, {attr_int("fmod", 1)}), f,
                      tensor(DataType::float64, {1}, std::vector<double>{1})),
               "must have the same type");
}

// Divisors that are powers of two (the lowering's Mod by 2^k, Div by 2^k): every sign.
TEST(Mod, PowersOfTwoDivisorsAgainstReference) {
    std::vector<int32_t> a = random_values<int32_t>(4096, 900);
    for (int i = 0; i < 64; ++i) a[size_t(i)] = int32_t(i) - 32;
    a[64] = INT32_MIN, a[65] = INT32_MAX;
    std::vector<int32_t> b;
    for (int k = 0; k < 31; ++k) b.push_back(int32_t(1) << k), b.push_back(-(int32_t(1) << k));
    b.push_back(INT32_MIN);
    const rt::Shape sa = {4096, 1}, sb = {int64_t(b.size())};
    for (const auto &[op, ref] : std::vector<std::pair<std::string, int32_t (*)(int32_t, int32_t)>>{
             {"Mod", python_mod<int32_t>}, {"Div", trunc_div<int32_t>}}) {
        SCOPED_TRACE(op);
        rt::Shape shape;
        const auto want = broadcast_ref(a, sa, b, sb, &shape, ref);
        EXPECT_EQ(run2(one_node(op, 14, 2), tensor(DataType::int32, sa, a),
                       tensor(DataType::int32, sb, b))
                      .to_vector<int32_t>(),
                  want);
    }
    std::vector<uint8_t> u(256), ub;
    std::iota(u.begin(), u.end(), 0);
    for (int k = 0; k < 8; ++k) ub.push_back(uint8_t(1 << k));
    ub.push_back(3);
    for (const auto &[op, ref] : std::vector<std::pair<std::string, uint8_t (*)(uint8_t, uint8_t)>>{
             {"Mod", c_mod<uint8_t>}, {"Div", trunc_div<uint8_t>}}) {
        SCOPED_TRACE(op);
        rt::Shape shape;
        const auto want = broadcast_ref(u, {256, 1}, ub, {9}, &shape, ref);
        EXPECT_EQ(run2(one_node(op, 14, 2), tensor(DataType::uint8, {256, 1}, u),
                       tensor(DataType::uint8, {9}, ub))
                      .to_vector<uint8_t>(),
                  want);
    }
}

// ---------------------------------------------------------------------------------------------
// Min

TEST(Min, VariadicBroadcastingAndNaN) {
    ModelBuilder m3(13);
    m3.input("a").input("b").input("c").output("y");
    m3.node("Min", {"a", "b", "c"}, {"y"}, {}, "n");
    // Hand-checked: rows [5] and [-2] against [4, 0, 9] and 3.
    const rt::Tensor y =
        run1(m3, {{"a", tensor(DataType::int64, {2, 1}, std::vector<int64_t>{5, -2})},
                  {"b", tensor(DataType::int64, {3}, std::vector<int64_t>{4, 0, 9})},
                  {"c", tensor(DataType::int64, {}, std::vector<int64_t>{3})}});
    EXPECT_EQ(y.shape(), (rt::Shape{2, 3}));
    EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 3, -2, -2, -2}));
    // One input: itself.
    const ModelBuilder m1 = one_node("Min", 12, 1);
    EXPECT_EQ(run1(m1, {{"a", tensor(DataType::int32, {2}, std::vector<int32_t>{4, -1})}})
                  .to_vector<int32_t>(),
              (std::vector<int32_t>{4, -1}));
    // NaN wins from either side; -0 is below +0 in either order.
    const ModelBuilder m = one_node("Min", 13, 2);
    const float qnan = std::bit_cast<float>(0x7fc00001u);
    EXPECT_EQ(
        bits_of(
            run2(m, tensor(DataType::float32, {6}, std::vector<float>{qnan, 1, 0.0f, -0.0f, 2, -3}),
                 tensor(DataType::float32, {6},
                        std::vector<float>{1, qnan, -0.0f, 0.0f, -INFINITY, -2}))
                .to_vector<float>()),
        (std::vector<uint32_t>{0x7fc00001, 0x7fc00001, 0x80000000, 0x80000000, 0xff800000,
                               0xc0400000}));
    EXPECT_EQ(
        run2(m,
             tensor(DataType::float16, {4}, std::vector<uint16_t>{0x7e00, 0x3c00, 0x0000, 0xbc00}),
             tensor(DataType::float16, {4}, std::vector<uint16_t>{0x3c00, 0x7e01, 0x8000, 0x3c00}))
            .to_vector<uint16_t>(),
        (std::vector<uint16_t>{0x7e00, 0x7e01, 0x8000, 0xbc00}));
    uint64_t seed = 400;
    for (const auto &[sa, sb] : kShapes) {
        check_against<float>(m, DataType::float32, sa, sb, seed++, false,
                             [](float a, float b) { return b < a ? b : a; });
        check_against<uint8_t>(m, DataType::uint8, sa, sb, seed++, false,
                               [](uint8_t a, uint8_t b) { return std::min(a, b); });
        check_against<int32_t>(m, DataType::int32, sa, sb, seed++, false,
                               [](int32_t a, int32_t b) { return std::min(a, b); });
    }
    // Errors.
    std::string e = run_error(m3, {{"a", tensor(DataType::int64, {1}, std::vector<int64_t>{1})},
                                   {"b", tensor(DataType::int64, {1}, std::vector<int64_t>{1})},
                                   {"c", tensor(DataType::int32, {1}, std::vector<int32_t>{1})}});
    EXPECT_HAS(e, "node \"n\" (Min-13): input 2 is int32 but input 0 is int64");
    e = run_error(m3, {{"a", tensor(DataType::int64, {2}, std::vector<int64_t>{1, 2})},
                       {"b", tensor(DataType::int64, {1}, std::vector<int64_t>{1})},
                       {"c", tensor(DataType::int64, {3}, std::vector<int64_t>{1, 2, 3})}});
    EXPECT_HAS(e, "shapes [2] and [3] cannot be broadcast together");
    EXPECT_HAS(run_error(m1, {{"a", tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})}}),
               "must be numeric");
}

// ---------------------------------------------------------------------------------------------
// BitwiseAnd, BitShift

TEST(BitwiseAnd, IntegersAgainstReference) {
    const ModelBuilder m = one_node("BitwiseAnd", 18, 2);
    uint64_t seed = 500;
    for (const auto &[sa, sb] : kShapes) {
        check_against<int32_t>(m, DataType::int32, sa, sb, seed++, false,
                               [](int32_t a, int32_t b) { return int32_t(a & b); });
        check_against<uint8_t>(m, DataType::uint8, sa, sb, seed++, false,
                               [](uint8_t a, uint8_t b) { return uint8_t(a & b); });
        check_against<uint64_t>(m, DataType::uint64, sa, sb, seed++, false,
                                [](uint64_t a, uint64_t b) { return a & b; });
        check_against<int16_t>(m, DataType::int16, sa, sb, seed++, false,
                               [](int16_t a, int16_t b) { return int16_t(a & b); });
    }
    EXPECT_EQ(run2(m, tensor(DataType::int8, {2}, std::vector<int8_t>{-1, 0x5a}),
                   tensor(DataType::int8, {1}, std::vector<int8_t>{0x0f}))
                  .to_vector<int8_t>(),
              (std::vector<int8_t>{0x0f, 0x0a}));
    const rt::Tensor f = tensor(DataType::float32, {1}, std::vector<float>{1});
    EXPECT_HAS(error2(m, f, f), "node \"n\" (BitwiseAnd-18): inputs must be integers, not float");
    const rt::Tensor b = tensor(DataType::bool_, {1}, std::vector<uint8_t>{1});
    EXPECT_HAS(error2(m, b, b), "must be integers, not bool");
}

template <class T>
void check_shifts(DataType dt) {
    SCOPED_TRACE(dtype_name(dt));
    const unsigned w = sizeof(T) * 8;
    const std::vector<T> s = {0, 1, T(w - 1), T(w), T(w + 1), T(2 * w), T(63), T(64), T(~T(0))};
    const std::vector<T> x(s.size(), T(0xA5A5A5A5A5A5A5A5ull));
    for (const bool left : {true, false}) {
        const ModelBuilder m =
            one_node("BitShift", 11, 2, {attr_string("direction", left ? "LEFT" : "RIGHT")});
        std::vector<T> want;
        for (T k : s) {
            // Plain reference: shift one bit at a time.
            T v = x[0];
            for (uint64_t i = 0; i < std::min<uint64_t>(k, 200); ++i) v = T(left ? v << 1 : v >> 1);
            want.push_back(v);
        }
        const int64_t n = int64_t(s.size());
        EXPECT_EQ(run2(m, tensor(dt, {n}, x), tensor(dt, {n}, s)).template to_vector<T>(), want);
        // Broadcast shift amounts: one per column of [2, n].
        std::vector<T> x2(x);
        x2.insert(x2.end(), x.begin(), x.end());
        std::vector<T> want2(want);
        want2.insert(want2.end(), want.begin(), want.end());
        EXPECT_EQ(run2(m, tensor(dt, {2, n}, x2), tensor(dt, {n}, s)).template to_vector<T>(),
                  want2);
    }
}

TEST(BitShift, LeftRightAndShiftsOfTheWidthOrMoreGiveZero) {
    check_shifts<uint8_t>(DataType::uint8);
    check_shifts<uint16_t>(DataType::uint16);
    check_shifts<uint32_t>(DataType::uint32);
    check_shifts<uint64_t>(DataType::uint64);
    // ONNX's example: RIGHT [1, 4] by [1, 1] is [0, 2]; LEFT [1, 2] by [1, 2] is [2, 8].
    EXPECT_EQ(run2(one_node("BitShift", 11, 2, {attr_string("direction", "RIGHT")}),
                   tensor(DataType::uint32, {2}, std::vector<uint32_t>{1, 4}),
                   tensor(DataType::uint32, {2}, std::vector<uint32_t>{1, 1}))
                  .to_vector<uint32_t>(),
              (std::vector<uint32_t>{0, 2}));
    const rt::Tensor u = tensor(DataType::uint8, {1}, std::vector<uint8_t>{1});
    EXPECT_HAS(error2(one_node("BitShift", 11, 2, {attr_string("direction", "left")}), u, u),
               "node \"n\" (BitShift-11): attribute 'direction' must be \"LEFT\" or \"RIGHT\", "
               "not \"left\"");
    EXPECT_HAS(error2(one_node("BitShift", 11, 2), u, u), "attribute 'direction' is required");
    const rt::Tensor i = tensor(DataType::int32, {1}, std::vector<int32_t>{1});
    EXPECT_HAS(error2(one_node("BitShift", 11, 2, {attr_string("direction", "LEFT")}), i, i),
               "must be uint8, uint16, uint32 or uint64, not int32");
    EXPECT_HAS(error2(one_node("BitShift", 11, 2, {attr_int("direction", 1)}), u, u),
               "attribute 'direction' must be of type STRING, not INT");
}

// ---------------------------------------------------------------------------------------------
// Equal

TEST(Equal, OutputsBoolForEveryType) {
    const ModelBuilder m = one_node("Equal", 19, 2);
    const rt::Tensor y =
        run2(m, tensor(DataType::float32, {4}, std::vector<float>{NAN, 0.0f, 1, 2}),
             tensor(DataType::float32, {4}, std::vector<float>{NAN, -0.0f, 1, 3}));
    EXPECT_EQ(y.dtype(), DataType::bool_);
    EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
    // float16 -0 == +0; NaN unequal to itself.
    EXPECT_EQ(run2(m, tensor(DataType::float16, {3}, std::vector<uint16_t>{0x8000, 0x7e00, 0x3c00}),
                   tensor(DataType::float16, {3}, std::vector<uint16_t>{0x0000, 0x7e00, 0x3c00}))
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{1, 0, 1}));
    EXPECT_EQ(run2(m, tensor(DataType::bool_, {2, 1}, std::vector<uint8_t>{1, 0}),
                   tensor(DataType::bool_, {2}, std::vector<uint8_t>{1, 0}))
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{1, 0, 0, 1}));
    uint64_t seed = 600;
    for (const auto &[sa, sb] : kShapes) {
        check_against<uint8_t>(m, DataType::uint8, sa, sb, seed++, false,
                               [](uint8_t a, uint8_t b) { return uint8_t(a == b); });
        check_against<int64_t>(m, DataType::int64, sa, sb, seed++, false,
                               [](int64_t a, int64_t b) { return uint8_t(a == b); });
    }
    // Equal over random bytes: reduce them to few values so that both outcomes occur.
    const std::vector<int32_t> a = {1, 2, 3, 1}, b = {1, 1, 3, 2};
    EXPECT_EQ(run2(one_node("Equal", 7, 2), tensor(DataType::int32, {4}, a),
                   tensor(DataType::int32, {4}, b))
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{1, 0, 1, 0}));
    EXPECT_HAS(error2(m, tensor(DataType::int32, {1}, std::vector<int32_t>{1}),
                      tensor(DataType::uint32, {1}, std::vector<uint32_t>{1})),
               "node \"n\" (Equal-19): inputs A (int32) and B (uint32) must have the same type");
}

// bfloat16 through the operators that take it (computed in float, exact here).
TEST(Bfloat16, ModMinEqualWhere) {
    const auto bf = [](std::vector<uint16_t> v) {
        return tensor(DataType::bfloat16, {int64_t(v.size())}, v);
    };
    // fmod(5.5, 2) = 1.5, fmod(-3, 2) = -1.
    EXPECT_EQ(run2(one_node("Mod", 13, 2, {attr_int("fmod", 1)}), bf({0x40b0, 0xc040}),
                   bf({0x4000, 0x4000}))
                  .to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3fc0, 0xbf80}));
    EXPECT_EQ(
        run2(one_node("Min", 13, 2), bf({0x3f80, 0x7fc1, 0x0000}), bf({0xbf80, 0x3f80, 0x8000}))
            .to_vector<uint16_t>(),
        (std::vector<uint16_t>{0xbf80, 0x7fc1, 0x8000}));
    EXPECT_EQ(
        run2(one_node("Equal", 13, 2), bf({0x8000, 0x7fc0, 0x4000}), bf({0x0000, 0x7fc0, 0x4000}))
            .to_vector<uint8_t>(),
        (std::vector<uint8_t>{1, 0, 1}));
    EXPECT_EQ(run1(one_node("Where", 16, 3),
                   {{"a", tensor(DataType::bool_, {2}, std::vector<uint8_t>{1, 0})},
                    {"b", bf({0x3f80, 0x4000})},
                    {"c", bf({0x8000})}})
                  .to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3f80, 0x8000}));
}

// ---------------------------------------------------------------------------------------------
// Neg

TEST(Neg, FlipsTheSignBitAndWrapsIntegers) {
    const ModelBuilder m = one_node("Neg", 13, 1);
    const rt::Tensor f = run1(
        m, {{"a", tensor(DataType::float32, {5},
                         std::vector<float>{std::bit_cast<float>(0x7fc00000u), 0.0f,
                                            std::bit_cast<float>(0xffc00001u), 1, -INFINITY})}});
    EXPECT_EQ(bits_of(f.to_vector<float>()),
              (std::vector<uint32_t>{0xffc00000, 0x80000000, 0x7fc00001, 0xbf800000, 0x7f800000}));
    EXPECT_EQ(
        run1(m,
             {{"a", tensor(DataType::float16, {3}, std::vector<uint16_t>{0x7e00, 0x0000, 0x3c00})}})
            .to_vector<uint16_t>(),
        (std::vector<uint16_t>{0xfe00, 0x8000, 0xbc00}));
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0xbf80})}})
                  .to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x3f80}));
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::float64, {1}, std::vector<double>{2.5})}})
                  .to_vector<double>(),
              (std::vector<double>{-2.5}));
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::int8, {3}, std::vector<int8_t>{-128, 5, 0})}})
                  .to_vector<int8_t>(),
              (std::vector<int8_t>{-128, -5, 0}));
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::int64, {2}, std::vector<int64_t>{INT64_MIN, -7})}})
                  .to_vector<int64_t>(),
              (std::vector<int64_t>{INT64_MIN, 7}));
    // A big tensor against a reference loop.
    const std::vector<int32_t> big = random_values<int32_t>(200000, 7);
    std::vector<int32_t> want(big.size());
    for (size_t i = 0; i < big.size(); ++i) want[i] = int32_t(0u - uint32_t(big[i]));
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::int32, {200000}, big)}}).to_vector<int32_t>(), want);
    EXPECT_EQ(run1(m, {{"a", tensor(DataType::int16, {0, 3}, std::vector<int16_t>{})}}).shape(),
              (rt::Shape{0, 3}));
    EXPECT_HAS(run_error(m, {{"a", tensor(DataType::uint8, {1}, std::vector<uint8_t>{1})}}),
               "node \"n\" (Neg-13): input must be a signed integer or floating type, not uint8");
}

// ---------------------------------------------------------------------------------------------
// Where

template <class T>
void check_where(DataType dt, const rt::Shape &sc, const rt::Shape &sx, const rt::Shape &sy,
                 uint64_t seed) {
    SCOPED_TRACE(fmt::format("{} {} {} {}", dtype_name(dt), rt::shape_string(sc),
                             rt::shape_string(sx), rt::shape_string(sy)));
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> c(count_of(sc));
    for (uint8_t &v : c) v = rng() % 2;
    const std::vector<T> x = random_values<T>(count_of(sx), seed + 1);
    const std::vector<T> y = random_values<T>(count_of(sy), seed + 2);
    const rt::Shape out = broadcast_shape({sc, sx, sy});
    std::vector<T> want(count_of(out));
    for (size_t i = 0; i < want.size(); ++i)
        want[i] = c[broadcast_source(i, out, sc)] ? x[broadcast_source(i, out, sx)]
                                                  : y[broadcast_source(i, out, sy)];
    const rt::Tensor got = run1(one_node("Where", 16, 3), {{"a", tensor(DataType::bool_, sc, c)},
                                                           {"b", tensor(dt, sx, x)},
                                                           {"c", tensor(dt, sy, y)}});
    EXPECT_EQ(got.shape(), out);
    EXPECT_EQ(got.dtype(), dt);
    EXPECT_EQ(got.to_vector<T>(), want);
}

TEST(Where, ThreeWayBroadcastingAgainstReference) {
    const rt::Shape shapes[][3] = {
        {{2, 3}, {2, 3}, {2, 3}}, {{3}, {2, 1}, {}},     {{2, 1, 4}, {3, 1}, {1, 4}},
        {{}, {5}, {5}},           {{1}, {1}, {1}},       {{4, 1}, {4, 70000}, {1}},
        {{70000}, {70000}, {1}},  {{0, 2}, {2}, {1, 2}}, {{2, 1, 3}, {1, 5, 1}, {2, 5, 3}}};
    uint64_t seed = 700;
    for (const auto &s : shapes) {
        check_where<float>(DataType::float32, s[0], s[1], s[2], seed += 3);
        check_where<uint8_t>(DataType::uint8, s[0], s[1], s[2], seed += 3);
        check_where<int16_t>(DataType::int16, s[0], s[1], s[2], seed += 3);
        check_where<double>(DataType::float64, s[0], s[1], s[2], seed += 3);
    }
    // Any non-zero condition byte is true (as from a BitCast of uint8).
    const rt::Tensor got = run1(one_node("Where", 9, 3),
                                {{"a", tensor(DataType::bool_, {3}, std::vector<uint8_t>{2, 0, 1})},
                                 {"b", tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})},
                                 {"c", tensor(DataType::bool_, {1}, std::vector<uint8_t>{0})}});
    EXPECT_EQ(got.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
    const ModelBuilder m = one_node("Where", 16, 3);
    const rt::Tensor f = tensor(DataType::float32, {1}, std::vector<float>{1});
    EXPECT_HAS(
        run_error(
            m, {{"a", tensor(DataType::uint8, {1}, std::vector<uint8_t>{1})}, {"b", f}, {"c", f}}),
        "node \"n\" (Where-16): input condition must be bool, not uint8");
    EXPECT_HAS(run_error(m, {{"a", tensor(DataType::bool_, {1}, std::vector<uint8_t>{1})},
                             {"b", f},
                             {"c", tensor(DataType::float16, {1}, std::vector<uint16_t>{0})}}),
               "inputs X (float) and Y (float16) must have the same type");
    EXPECT_HAS(run_error(m, {{"a", tensor(DataType::bool_, {2}, std::vector<uint8_t>{1, 0})},
                             {"b", f},
                             {"c", tensor(DataType::float32, {3}, std::vector<float>(3))}}),
               "shapes [2] and [3] cannot be broadcast together");
}

// ---------------------------------------------------------------------------------------------
// Slice

// ONNX's rule for one axis: the indices read, in order.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
    const auto clamp = [](__int128 v, __int128 lo, __int128 hi) {
        return v < lo ? lo : v > hi ? hi : v;
    };
    __int128 s = start < 0 ? __int128(start) + dim : start;
    __int128 e = end < 0 ? __int128(end) + dim : end;
    std::vector<int64_t> out;
    if (dim == 0) return out;
    if (step > 0) {
        s = clamp(s, 0, dim);
        e = clamp(e, 0, dim);
        for (__int128 k = s; k < e; k += step) out.push_back(int64_t(k));
    } else {
        s = clamp(s, 0, dim - 1);
        e = clamp(e, -1, dim - 1);
        for (__int128 k = s; k > e; k += step) out.push_back(int64_t(k));
    }
    return out;
}

struct SliceAxis {
    int64_t axis, start, end, step;
};

// The sliced values of `x` (shape `shape`) by a plain loop over the output.
std::vector<int32_t> slice_ref(const std::vector<int32_t> &x, const rt::Shape &shape,
                               const std::vector<SliceAxis> &axes, rt::Shape *out_shape) {
    const size_t r = shape.size();
    std::vector<std::vector<int64_t>> picks(r);
    for (size_t d = 0; d < r; ++d) {
        picks[d].resize(size_t(shape[d]));
        std::iota(picks[d].begin(), picks[d].end(), 0);
    }
    for (const SliceAxis &a : axes) {
        const size_t d = size_t(a.axis < 0 ? a.axis + int64_t(r) : a.axis);
        picks[d] = slice_indices(shape[d], a.start, a.end, a.step);
    }
    out_shape->clear();
    for (const auto &p : picks) out_shape->push_back(int64_t(p.size()));
    std::vector<int32_t> y(count_of(*out_shape));
    for (size_t flat = 0; flat < y.size(); ++flat) {
        size_t rest = flat, src = 0, stride = 1;
        for (size_t d = r; d-- > 0;) {
            const size_t k = rest % picks[d].size();
            rest /= picks[d].size();
            src += size_t(picks[d][k]) * stride;
            stride *= size_t(shape[d]);
        }
        y[flat] = x[src];
    }
    return y;
}

rt::Tensor slice(int64_t opset, const rt::Tensor &x, const std::vector<SliceAxis> &axes,
                 DataType index_type = DataType::int64, bool with_axes = true,
                 bool with_steps = true, std::string *error = nullptr) {
    ModelBuilder m(opset);
    m.input("x").input("s").input("e").output("y");
    std::vector<std::string> ins = {"x", "s", "e"};
    if (with_axes || with_steps) ins.push_back(with_axes ? "a" : "");
    if (with_steps) ins.push_back("t");
    if (with_axes) m.input("a");
    if (with_steps) m.input("t");
    m.node("Slice", ins, {"y"}, {}, "n");
    const auto list = [&](auto field) {
        std::vector<int64_t> v;
        for (const SliceAxis &a : axes) v.push_back(a.*field);
        const int64_t n = int64_t(v.size());
        if (index_type == DataType::int64) return tensor(index_type, {n}, v);
        return tensor(index_type, {n}, std::vector<int32_t>(v.begin(), v.end()));
    };
    rt::Inputs in = {{"x", x}, {"s", list(&SliceAxis::start)}, {"e", list(&SliceAxis::end)}};
    if (with_axes) in["a"] = list(&SliceAxis::axis);
    if (with_steps) in["t"] = list(&SliceAxis::step);
    if (error) {
        *error = run_error(m, in);
        return {};
    }
    return run1(m, in);
}

TEST(Slice, OneAxisClampingAndNegativeSteps) {
    std::vector<int32_t> x(10);
    std::iota(x.begin(), x.end(), 0);
    const rt::Tensor t = tensor(DataType::int32, {10}, x);
    struct Case {
        int64_t start, end, step;
        std::vector<int32_t> want;  // hand-checked (and what onnxruntime 1.30 gives)
    };
    const Case cases[] = {
        {INT64_MAX, INT64_MIN, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {-1, -100, -3, {9, 6, 3, 0}},
        {5, 100, INT64_MAX, {5}},
        {9, -11, INT64_MIN, {9}},
        {100, 0, -2, {9, 7, 5, 3, 1}},
        {-100, 3, 1, {0, 1, 2}},
        {3, 3, -1, {}},
        {0, -1, 4, {0, 4, 8}},
        {2, 8, 3, {2, 5}},
        {-3, INT64_MAX, 1, {7, 8, 9}},
        {8, 2, 1, {}},
    };
    for (const int64_t opset : {10, 11, 13}) {
        for (const Case &c : cases) {
            SCOPED_TRACE(fmt::format("opset {}: {} {} {}", opset, c.start, c.end, c.step));
            const rt::Tensor y = slice(opset, t, {{0, c.start, c.end, c.step}});
            EXPECT_EQ(y.shape(), (rt::Shape{int64_t(c.want.size())}));
            EXPECT_EQ(y.to_vector<int32_t>(), c.want);
        }
    }
    // ONNX's examples.
    const rt::Tensor d =
        tensor(DataType::int32, {2, 4}, std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(slice(13, d, {{0, 1, 2, 1}, {1, 0, 3, 2}}).to_vector<int32_t>(),
              (std::vector<int32_t>{5, 7}));
    const rt::Tensor e =
        slice(13, d, {{0, 0, -1, 1}, {1, 1, 1000, 1}}, DataType::int32, false, false);
    EXPECT_EQ(e.shape(), (rt::Shape{1, 3}));
    EXPECT_EQ(e.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 4}));
}

TEST(Slice, ManyAxesAgainstReference) {
    const rt::Shape shape = {4, 5, 6, 7};
    std::vector<int32_t> x(count_of(shape));
    std::iota(x.begin(), x.end(), 0);
    const rt::Tensor t = tensor(DataType::int32, shape, x);
    std::mt19937_64 rng(11);
    const int64_t picks[] = {INT64_MIN, -9, -7, -3, -1, 0, 1, 2, 3, 5, 6, 7, 9, INT64_MAX};
    const int64_t steps[] = {-3, -2, -1, 1, 1, 2, 3, 4};
    for (int iter = 0; iter < 300; ++iter) {
        std::vector<SliceAxis> axes;
        std::vector<int64_t> order = {0, 1, 2, 3};
        std::shuffle(order.begin(), order.end(), rng);
        const size_t n = rng() % 5;
        for (size_t i = 0; i < n; ++i) {
            int64_t a = order[i];
            if (rng() % 2) a -= 4;  // negative axes
            axes.push_back({a, picks[rng() % std::size(picks)], picks[rng() % std::size(picks)],
                            steps[rng() % std::size(steps)]});
        }
        const DataType index_type = iter % 3 ? DataType::int64 : DataType::int32;
        if (index_type == DataType::int32)
            for (SliceAxis &a : axes)
                for (int64_t *v : {&a.start, &a.end, &a.step})
                    *v = std::clamp<int64_t>(*v, INT32_MIN, INT32_MAX);
        rt::Shape want_shape;
        const std::vector<int32_t> want = slice_ref(x, shape, axes, &want_shape);
        const rt::Tensor y = slice(iter % 2 ? 13 : 11, t, axes, index_type);
        std::string desc;
        for (const SliceAxis &a : axes)
            desc += fmt::format(" ({} {} {} {})", a.axis, a.start, a.end, a.step);
        ASSERT_EQ(y.shape(), want_shape) << iter << desc;
        ASSERT_EQ(y.to_vector<int32_t>(), want) << iter;
    }
    // Large: contiguous runs, strided inner copies, byte and 8-byte elements.
    const rt::Shape big = {3, 300, 500};
    std::vector<int32_t> bx(count_of(big));
    std::iota(bx.begin(), bx.end(), 0);
    for (const auto &axes :
         std::vector<std::vector<SliceAxis>>{{{1, 10, -10, 1}},
                                             {{2, -1, INT64_MIN, -1}},
                                             {{0, 1, 3, 1}, {2, 3, 400, 7}},
                                             {{1, 299, 0, -2}, {2, 0, 250, 1}}}) {
        rt::Shape want_shape;
        const std::vector<int32_t> want = slice_ref(bx, big, axes, &want_shape);
        const rt::Tensor y = slice(13, tensor(DataType::int32, big, bx), axes);
        EXPECT_EQ(y.shape(), want_shape);
        EXPECT_EQ(y.to_vector<int32_t>(), want);
        // The same positions in uint8 and int64 tensors.
        std::vector<uint8_t> b8(bx.size());
        std::vector<int64_t> b64(bx.size());
        for (size_t i = 0; i < bx.size(); ++i) b8[i] = uint8_t(bx[i]), b64[i] = bx[i] * 3;
        std::vector<uint8_t> w8;
        std::vector<int64_t> w64;
        for (int32_t v : want) w8.push_back(uint8_t(v)), w64.push_back(int64_t(v) * 3);
        EXPECT_EQ(slice(13, tensor(DataType::uint8, big, b8), axes).to_vector<uint8_t>(), w8);
        EXPECT_EQ(slice(13, tensor(DataType::int64, big, b64), axes).to_vector<int64_t>(), w64);
    }
}

TEST(Slice, EmptyTensorsAndErrors) {
    const rt::Tensor empty = tensor(DataType::float32, {0, 3}, std::vector<float>{});
    EXPECT_EQ(slice(13, empty, {{0, 0, 5, 1}}).shape(), (rt::Shape{0, 3}));
    EXPECT_EQ(slice(13, empty, {{0, -1, INT64_MIN, -1}, {1, 1, 3, 1}}).shape(), (rt::Shape{0, 2}));
    const rt::Tensor x = tensor(DataType::float32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
    EXPECT_EQ(slice(13, x, {{1, 3, 0, 1}}).shape(), (rt::Shape{2, 0}));
    EXPECT_EQ(slice(13, x, {}).to_vector<float>(), x.to_vector<float>());
    std::string e;
    slice(13, x, {{1, 0, 2, 0}}, DataType::int64, true, true, &e);
    EXPECT_HAS(e, "node \"n\" (Slice-13): input steps has 0 (for axis 1)");
    slice(11, x, {{1, 0, 2, 1}, {-1, 0, 1, 1}}, DataType::int64, true, true, &e);
    EXPECT_HAS(e, "node \"n\" (Slice-11): input axes names axis 1 twice");
    slice(10, x, {{2, 0, 2, 1}}, DataType::int64, true, true, &e);
    EXPECT_HAS(e, "node \"n\" (Slice-10): axes value 2 is out of range for rank 2");
    slice(13, x, {{0, 0, 1, 1}, {1, 0, 1, 1}, {0, 0, 1, 1}}, DataType::int64, false, false, &e);
    EXPECT_HAS(e, "input starts has 3 values but the data has rank 2");
    // Mismatched lengths and index types.
    ModelBuilder m(13);
    m.input("x").input("s").input("e").output("y");
    m.node("Slice", {"x", "s", "e"}, {"y"}, {}, "n");
    EXPECT_HAS(run_error(m, {{"x", x},
                             {"s", tensor(DataType::int64, {2}, std::vector<int64_t>{0, 0})},
                             {"e", tensor(DataType::int64, {1}, std::vector<int64_t>{1})}}),
               "input ends has 1 values but input starts has 2");
    EXPECT_HAS(run_error(m, {{"x", x},
                             {"s", tensor(DataType::int64, {1}, std::vector<int64_t>{0})},
                             {"e", tensor(DataType::int32, {1}, std::vector<int32_t>{1})}}),
               "input ends is int32 but input starts is int64");
    EXPECT_HAS(run_error(m, {{"x", x},
                             {"s", tensor(DataType::float32, {1}, std::vector<float>{0})},
                             {"e", tensor(DataType::float32, {1}, std::vector<float>{1})}}),
               "input starts must be int32 or int64, not float");
    EXPECT_HAS(run_error(m, {{"x", x}, {"s", scalar_i64(0)}, {"e", scalar_i64(1)}}),
               "input starts must be one-dimensional, not of shape []");
    // Slice-1 (attributes) is not supported.
    ModelBuilder v1(9);
    v1.input("x").output("y");
    v1.node("Slice", {"x"}, {"y"}, {}, "n");
    EXPECT_THROW(v1.model(), Error);
}

// ---------------------------------------------------------------------------------------------
// Transpose

template <class T>
void check_transpose(const rt::Shape &shape, const std::vector<int64_t> &perm, DataType dt,
                     bool default_perm = false) {
    SCOPED_TRACE(fmt::format("{} {} perm [{}]", dtype_name(dt), rt::shape_string(shape),
                             fmt::join(perm, ", ")));
    std::vector<T> x(count_of(shape));
    for (size_t i = 0; i < x.size(); ++i) x[i] = T(i * 2654435761u);
    rt::Shape out(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[size_t(perm[i])];
    // Reference: each output index to its input index.
    std::vector<T> want(x.size());
    for (size_t flat = 0; flat < want.size(); ++flat) {
        std::vector<size_t> idx(out.size());
        size_t rest = flat;
        for (size_t d = out.size(); d-- > 0;)
            idx[d] = rest % size_t(out[d]), rest /= size_t(out[d]);
        std::vector<size_t> in_idx(shape.size());
        for (size_t i = 0; i < perm.size(); ++i) in_idx[size_t(perm[i])] = idx[i];
        size_t src = 0;
        for (size_t d = 0; d < shape.size(); ++d) src = src * size_t(shape[d]) + in_idx[d];
        want[flat] = x[src];
    }
    ModelBuilder m(21);
    m.input("x").output("y");
    if (default_perm)
        m.node("Transpose", {"x"}, {"y"}, {}, "n");
    else
        m.node("Transpose", {"x"}, {"y"}, {attr_ints("perm", perm)}, "n");
    const rt::Tensor y = run1(m, {{"x", tensor(dt, shape, x)}});
    EXPECT_EQ(y.shape(), out);
    EXPECT_EQ(y.to_vector<T>(), want);
}

TEST(Transpose, PermutationsAgainstReference) {
    check_transpose<float>({}, {}, DataType::float32);
    check_transpose<float>({5}, {0}, DataType::float32);
    check_transpose<float>({2, 3}, {1, 0}, DataType::float32);
    check_transpose<float>({2, 3, 4}, {2, 1, 0}, DataType::float32, true);  // default: reversed
    std::mt19937_64 rng(5);
    const rt::Shape shapes[] = {{2, 3, 4, 5}, {1, 7, 1, 3}, {3, 1, 2, 1, 4}, {2, 2, 2, 2, 2, 2}};
    for (const rt::Shape &s : shapes)
        for (int k = 0; k < 12; ++k) {
            std::vector<int64_t> perm(s.size());
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng);
            check_transpose<int32_t>(s, perm, DataType::int32);
            check_transpose<uint8_t>(s, perm, DataType::uint8);
        }
    // Big enough for the tiled path, with ragged tiles, for every element size.
    check_transpose<uint8_t>({70, 90}, {1, 0}, DataType::uint8);
    check_transpose<uint16_t>({3, 100, 33}, {2, 1, 0}, DataType::float16);
    check_transpose<uint32_t>({50, 2, 65}, {2, 1, 0}, DataType::uint32);
    check_transpose<uint64_t>({40, 3, 37, 2}, {2, 1, 0, 3}, DataType::int64);
    check_transpose<double>({300, 400}, {1, 0}, DataType::float64);
    check_transpose<float>({4, 64, 48}, {0, 2, 1}, DataType::float32);
    check_transpose<float>({0, 3}, {1, 0}, DataType::float32);
}

TEST(Transpose, PermErrors) {
    const rt::Tensor x = tensor(DataType::float32, {2, 3}, std::vector<float>(6));
    const auto err = [&](const std::vector<int64_t> &perm) {
        ModelBuilder m(13);
        m.input("x").output("y");
        m.node("Transpose", {"x"}, {"y"}, {attr_ints("perm", perm)}, "n");
        return run_error(m, {{"x", x}});
    };
    EXPECT_HAS(err({0}),
               "node \"n\" (Transpose-13): attribute 'perm' has 1 values but the input "
               "has rank 2");
    EXPECT_HAS(err({1, 1}), "attribute 'perm' [1, 1] is not a permutation of 0..1");
    EXPECT_HAS(err({0, 2}), "attribute 'perm' [0, 2] is not a permutation of 0..1");
    EXPECT_HAS(err({-1, 0}), "is not a permutation");
}

// ---------------------------------------------------------------------------------------------
// Gather (the copy paths by row size)

TEST(Gather, RowSizesAndAxesAgainstReference) {
    const auto check = [](DataType dt, const rt::Shape &shape, int64_t axis,
                          const std::vector<int64_t> &idx) {
        SCOPED_TRACE(fmt::format("{} {} axis {}", dtype_name(dt), rt::shape_string(shape), axis));
        const size_t es = dtype_size(dt), n = count_of(shape);
        std::vector<uint8_t> data(n * es);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + i / 251);
        const size_t a = size_t(axis);
        size_t outer = 1, inner = es;
        for (size_t d = 0; d < a; ++d) outer *= size_t(shape[d]);
        for (size_t d = a + 1; d < shape.size(); ++d) inner *= size_t(shape[d]);
        const int64_t size = shape[a];
        std::vector<uint8_t> want;
        for (size_t o = 0; o < outer; ++o)
            for (int64_t k : idx) {
                const size_t row = size_t(k < 0 ? k + size : k);
                const uint8_t *p = &data[(o * size_t(size) + row) * inner];
                want.insert(want.end(), p, p + inner);
            }
        ModelBuilder m(13);
        m.input("d").input("i").output("y");
        m.node("Gather", {"d", "i"}, {"y"}, {attr_int("axis", axis)}, "g");
        rt::Session s(m.model());
        const rt::Tensor y = s.run({{"d", rt::Tensor::copy_of(dt, shape, data)},
                                    {"i", tensor(DataType::int64, {int64_t(idx.size())}, idx)}})
                                 .at(0)
                                 .second;
        EXPECT_EQ(std::vector<uint8_t>(y.bytes().begin(), y.bytes().end()), want);
    };
    const std::vector<int64_t> idx = {3, -1, 0, 2, -4, 1, 1};
    for (const DataType dt :
         {DataType::uint8, DataType::float16, DataType::float32, DataType::int64}) {
        check(dt, {5, 4}, 1, idx);     // a row is one element
        check(dt, {3, 4, 2}, 1, idx);  // two elements
        check(dt, {2, 4, 3}, 1, idx);  // three (no fixed size)
        check(dt, {4, 7}, 0, idx);     // axis 0
        check(dt, {2, 3, 4}, 2, idx);  // the last axis
    }
    check(DataType::uint8, {1000, 64}, 1, std::vector<int64_t>(70000, -3));  // many threads
    // With several outer rows, the first bad index (in index order) is the one named.
    ModelBuilder m(13);
    m.input("d").input("i").output("y");
    m.node("Gather", {"d", "i"}, {"y"}, {attr_int("axis", 1)}, "g");
    std::vector<int64_t> bad(200000, 1);
    bad[150000] = 9, bad[190000] = -9;
    EXPECT_HAS(run_error(m, {{"d", rt::Tensor::zeros(DataType::uint8, {3, 4})},
                             {"i", tensor(DataType::int64, {200000}, bad)}}),
               "index 9 (element 150000 of indices) is out of range for axis 1 of size 4");
    EXPECT_HAS(run_error(m, {{"d", rt::Tensor::zeros(DataType::uint8, {0, 4})},
                             {"i", tensor(DataType::int64, {2}, std::vector<int64_t>{0, -5})}}),
               "index -5 (element 1 of indices)");
}

// ---------------------------------------------------------------------------------------------
// BitCast

TEST(BitCast, ReinterpretsTheBytes) {
    const auto bitcast = [](const rt::Tensor &x, DataType to) {
        ModelBuilder m(26);
        m.input("x").output("y");
        m.node("BitCast", {"x"}, {"y"}, {attr_int("to", int64_t(to))}, "n");
        return run1(m, {{"x", x}});
    };
    const rt::Tensor f =
        bitcast(tensor(DataType::uint32, {2, 1}, std::vector<uint32_t>{0x3f800000, 0xc0000000}),
                DataType::float32);
    EXPECT_EQ(f.dtype(), DataType::float32);
    EXPECT_EQ(f.shape(), (rt::Shape{2, 1}));
    EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.0f, -2.0f}));
    EXPECT_EQ(
        bitcast(tensor(DataType::int8, {3}, std::vector<int8_t>{-1, 0, -128}), DataType::uint8)
            .to_vector<uint8_t>(),
        (std::vector<uint8_t>{255, 0, 128}));
    EXPECT_EQ(
        bitcast(tensor(DataType::float16, {1}, std::vector<uint16_t>{0x3c00}), DataType::bfloat16)
            .to_vector<uint16_t>(),
        (std::vector<uint16_t>{0x3c00}));
    EXPECT_EQ(
        bitcast(tensor(DataType::float64, {0}, std::vector<double>{}), DataType::int64).shape(),
        (rt::Shape{0}));
    // The viewed tensor feeds kernels as its new type: (1.0f bits) * 2 = 2.0f.
    ModelBuilder chain(26);
    chain.input("x").output("y");
    chain.initializer("two", tensor(DataType::float32, {}, std::vector<float>{2}));
    chain.node("BitCast", {"x"}, {"f"}, {attr_int("to", int64_t(DataType::float32))}, "cast");
    chain.node("Mul", {"f", "two"}, {"y"}, {}, "mul");
    EXPECT_EQ(run1(chain, {{"x", tensor(DataType::int32, {1}, std::vector<int32_t>{0x3f800000})}})
                  .to_vector<float>(),
              (std::vector<float>{2.0f}));
    // Errors.
    ModelBuilder wide(26);
    wide.input("x").output("y");
    wide.node("BitCast", {"x"}, {"y"}, {attr_int("to", int64_t(DataType::int64))}, "n");
    EXPECT_HAS(run_error(wide, {{"x", tensor(DataType::float32, {1}, std::vector<float>{1})}}),
               "node \"n\" (BitCast-26): cannot bitcast float (32 bits) to int64 (64 bits)");
    ModelBuilder none(26);
    none.input("x").output("y");
    none.node("BitCast", {"x"}, {"y"}, {}, "n");
    EXPECT_HAS(run_error(none, {{"x", scalar_i64(1)}}), "attribute 'to' is required");
    ModelBuilder old(25);
    old.input("x").output("y");
    old.node("BitCast", {"x"}, {"y"}, {attr_int("to", 1)}, "n");
    EXPECT_THROW(old.model(), Error);  // BitCast needs opset 26
}

// ---------------------------------------------------------------------------------------------
// Range

template <class T>
rt::Tensor range(DataType dt, T start, T limit, T delta, int64_t opset = 11,
                 std::initializer_list<onnx::AttributeProto> attrs = {},
                 std::string *error = nullptr) {
    ModelBuilder m(opset);
    m.input("s").input("l").input("d").output("y");
    m.node("Range", {"s", "l", "d"}, {"y"}, attrs, "n");
    const rt::Inputs in = {{"s", tensor(dt, {}, std::vector<T>{start})},
                           {"l", tensor(dt, {}, std::vector<T>{limit})},
                           {"d", tensor(dt, {}, std::vector<T>{delta})}};
    if (error) {
        *error = run_error(m, in);
        return {};
    }
    return run1(m, in);
}

TEST(Range, IntegersAndONNXExamples) {
    EXPECT_EQ(range<int64_t>(DataType::int64, 3, 9, 3).to_vector<int64_t>(),
              (std::vector<int64_t>{3, 6}));
    EXPECT_EQ(range<int64_t>(DataType::int64, 10, 4, -2).to_vector<int64_t>(),
              (std::vector<int64_t>{10, 8, 6}));
    EXPECT_EQ(range<int32_t>(DataType::int32, -3, 4, 3).to_vector<int32_t>(),
              (std::vector<int32_t>{-3, 0, 3}));
    EXPECT_EQ(range<int16_t>(DataType::int16, 5, 5, 1).shape(), (rt::Shape{0}));
    EXPECT_EQ(range<int16_t>(DataType::int16, 5, 9, -1).shape(), (rt::Shape{0}));
    // Extreme values: the count is exact and the values wrap nowhere.
    const rt::Tensor big = range<int64_t>(DataType::int64, INT64_MIN, INT64_MAX, INT64_MAX);
    EXPECT_EQ(big.to_vector<int64_t>(), (std::vector<int64_t>{INT64_MIN, -1, INT64_MAX - 1}));
    EXPECT_EQ(range<int32_t>(DataType::int32, INT32_MAX, INT32_MIN, INT32_MIN).to_vector<int32_t>(),
              (std::vector<int32_t>{INT32_MAX, -1}));
    // A long one against start + i * delta.
    const rt::Tensor y = range<int32_t>(DataType::int32, -1000000, 2000000, 3);
    ASSERT_EQ(y.elements(), 1000000u);
    const std::vector<int32_t> v = y.to_vector<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], -1000000 + 3 * int32_t(i)) << i;
}

TEST(Range, FloatsAccumulateAsOnnxruntime) {
    // Each element is the previous one plus delta, rounded: not start + i * delta.
    const rt::Tensor y = range<float>(DataType::float32, 0.1f, 10.0f, 0.1f);
    const std::vector<float> v = y.to_vector<float>();
    EXPECT_EQ(v.size(), 99u);  // ceil(float(10 - 0.1) / 0.1) in double
    float acc = 0.1f;
    size_t differs_from_product = 0;
    for (size_t i = 0; i < v.size(); ++i, acc += 0.1f) {
        EXPECT_EQ(v[i], acc) << i;
        differs_from_product += v[i] != 0.1f + float(i) * 0.1f;
    }
    EXPECT_GT(differs_from_product, 0u);
    const std::vector<double> d = range<double>(DataType::float64, 1, -1, -0.5).to_vector<double>();
    EXPECT_EQ(d, (std::vector<double>{1, 0.5, 0, -0.5}));
    EXPECT_EQ(range<float>(DataType::float32, 0, 1, 0.3f).elements(), 4u);
    // Range-27: float16 accumulating in float (stash_type default) or double, each element
    // rounded once: 2048 + 1 + 1 in float is 2050; in float16 2048 + 1 would stay 2048.
    // 2048 to 2054 by 1: 2048, 2049 (a tie: 2048), 2050, 2051 (a tie: 2052), 2052, 2053 (2052).
    const rt::Tensor h = range<uint16_t>(DataType::float16, 0x6800, 0x6803, 0x3c00, 27);
    EXPECT_EQ(h.to_vector<uint16_t>(),
              (std::vector<uint16_t>{0x6800, 0x6800, 0x6801, 0x6802, 0x6802, 0x6802}));
    const rt::Tensor hd = range<uint16_t>(DataType::bfloat16, 0x3f80, 0x4040, 0x3f00, 27,
                                          {attr_int("stash_type", 11)});
    EXPECT_EQ(hd.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3f80, 0x3fc0, 0x4000, 0x4020}));
}

TEST(Range, Errors) {
    std::string e;
    range<int32_t>(DataType::int32, 0, 4, 0, 11, {}, &e);
    EXPECT_HAS(e, "node \"n\" (Range-11): input delta is 0");
    range<float>(DataType::float32, 0, NAN, 1, 11, {}, &e);
    EXPECT_HAS(e, "is NaN");
    range<int64_t>(DataType::int64, 0, INT64_MAX, 1, 11, {}, &e);
    EXPECT_HAS(e, "the output would have 9223372036854775807 elements (more than 2^56)");
    range<float>(DataType::float32, 0, INFINITY, 1, 11, {}, &e);
    EXPECT_HAS(e, "more than 2^56");
    // Within 2^56 elements but over the byte limit: the allocation refuses.
    rt::set_tensor_byte_limit(1 << 20);
    range<int64_t>(DataType::int64, 0, int64_t(1) << 40, 1, 11, {}, &e);
    rt::set_tensor_byte_limit(0);
    EXPECT_HAS(e, "more than the 1048576 bytes allowed for one tensor");
    range<uint16_t>(DataType::float16, 0, 0x3c00, 0x3c00, 11, {}, &e);
    EXPECT_HAS(e, "inputs must be float, double, int16, int32 or int64, not float16");
    range<uint16_t>(DataType::float16, 0, 0x3c00, 0x3c00, 27, {attr_int("stash_type", 10)}, &e);
    EXPECT_HAS(e, "attribute 'stash_type' must be 1 (float) or 11 (double), not 10");
    range<uint8_t>(DataType::uint8, 0, 1, 1, 11, {}, &e);
    EXPECT_HAS(e, "not uint8");
    ModelBuilder m(11);
    m.input("s").input("l").input("d").output("y");
    m.node("Range", {"s", "l", "d"}, {"y"}, {}, "n");
    // A one-element vector is taken as a scalar (as onnxruntime does); two elements are not.
    EXPECT_EQ(run1(m, {{"s", tensor(DataType::int64, {1}, std::vector<int64_t>{10})},
                       {"l", scalar_i64(4)},
                       {"d", scalar_i64(-2)}})
                  .to_vector<int64_t>(),
              (std::vector<int64_t>{10, 8, 6}));
    EXPECT_HAS(run_error(m, {{"s", scalar_i64(0)},
                             {"l", tensor(DataType::int64, {2}, std::vector<int64_t>{4, 4})},
                             {"d", scalar_i64(1)}}),
               "input limit must be a scalar, not of shape [2]");
    EXPECT_HAS(run_error(m, {{"s", scalar_i64(0)},
                             {"l", tensor(DataType::int32, {}, std::vector<int32_t>{4})},
                             {"d", scalar_i64(1)}}),
               "input limit is int32 but input start is int64");
}

// ---------------------------------------------------------------------------------------------
// Shape

TEST(Shape, StartAndEndAreClamped) {
    const auto shape_of = [](int64_t opset, const rt::Shape &dims,
                             std::initializer_list<onnx::AttributeProto> attrs = {}) {
        ModelBuilder m(opset);
        m.input("x").output("y");
        m.node("Shape", {"x"}, {"y"}, attrs, "n");
        const rt::Tensor y = run1(m, {{"x", rt::Tensor::zeros(DataType::float16, dims)}});
        EXPECT_EQ(y.dtype(), DataType::int64);
        EXPECT_EQ(y.rank(), 1u);
        return y.to_vector<int64_t>();
    };
    using V = std::vector<int64_t>;
    for (const int64_t opset : {1, 13, 15, 19, 21, 25, 29}) {
        EXPECT_EQ(shape_of(opset, {2, 3, 4}), (V{2, 3, 4}));
        EXPECT_EQ(shape_of(opset, {}), V{});
        EXPECT_EQ(shape_of(opset, {0, 5}), (V{0, 5}));
    }
    EXPECT_EQ(shape_of(15, {2, 3, 4}, {attr_int("start", -1)}), V{4});
    EXPECT_EQ(shape_of(15, {2, 3, 4}, {attr_int("end", -1)}), (V{2, 3}));
    EXPECT_EQ(shape_of(15, {2, 3, 4}, {attr_int("start", 1), attr_int("end", 2)}), V{3});
    EXPECT_EQ(shape_of(19, {2, 3, 4}, {attr_int("start", -10), attr_int("end", 10)}), (V{2, 3, 4}));
    EXPECT_EQ(shape_of(21, {2, 3, 4}, {attr_int("start", 2), attr_int("end", 1)}), V{});
    EXPECT_EQ(shape_of(25, {2, 3, 4}, {attr_int("start", INT64_MIN), attr_int("end", INT64_MAX)}),
              (V{2, 3, 4}));
    // start/end are unknown to Shape-1/13.
    ModelBuilder m(13);
    m.input("x").output("y");
    m.node("Shape", {"x"}, {"y"}, {attr_int("start", 1)}, "n");
    EXPECT_THROW(m.model(), Error);
}

// Every new operator's node is named with the version its opset selects.
TEST(LoweringOps, VersionsTheOpsetSelects) {
    const std::pair<const char *, std::vector<std::pair<int64_t, int>>> rows[] = {
        {"Div", {{7, 7}, {12, 7}, {13, 13}, {17, 14}, {26, 14}}},
        {"Mod", {{10, 10}, {13, 13}, {26, 13}}},
        {"Min", {{8, 8}, {12, 12}, {13, 13}, {26, 13}}},
        {"BitwiseAnd", {{18, 18}, {26, 18}}},
        {"BitShift", {{11, 11}, {26, 11}}},
        {"Equal", {{7, 7}, {11, 11}, {13, 13}, {18, 13}, {19, 19}, {29, 19}}},
        {"Neg", {{6, 6}, {13, 13}, {29, 13}}},
        {"Where", {{9, 9}, {16, 16}, {29, 16}}},
        {"Slice", {{10, 10}, {11, 11}, {13, 13}, {29, 13}}},
        {"Transpose",
         {{1, 1}, {13, 13}, {20, 13}, {21, 21}, {23, 23}, {24, 24}, {25, 25}, {29, 25}}},
        {"Range", {{11, 11}, {26, 11}, {27, 27}, {29, 27}}},
        {"Shape", {{1, 1}, {13, 13}, {15, 15}, {19, 19}, {21, 21}, {25, 25}}},
        {"BitCast", {{26, 26}, {29, 26}}},
    };
    for (const auto &[op, versions] : rows)
        for (const auto &[opset, version] : versions) {
            ModelBuilder m(opset);
            m.output("y");
            m.node(op, {}, {"y"}, {}, "n");  // arity is checked after the version is chosen
            try {
                m.model();
                ADD_FAILURE() << op << " with no inputs loaded";
            } catch (const Error &e) {
                EXPECT_HAS(std::string(e.what()), fmt::format("node \"n\" ({}-{})", op, version));
            }
        }
    ModelBuilder early(6);
    early.output("y");
    early.node("Div", {}, {"y"}, {}, "n");
    EXPECT_THROW(early.model(), Error);  // Div-1/6 (broadcast attribute) are not supported
}

}  // namespace
}  // namespace gguftool::rttest
