// OneHot-9/11, Unsqueeze-1/11/13 attribute variants, and the standard operators (Cast, Add, Sub,
// Mul, Gather, Reshape, Identity, Concat, Constant) against plain reference loops.
#include <bit>
#include <cmath>
#include <random>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

// ---------------------------------------------------------------------------------------------
// OneHot

ModelBuilder one_hot_model(int64_t opset, std::initializer_list<onnx::AttributeProto> attrs = {}) {
    ModelBuilder b(opset);
    b.input("indices").input("depth").input("values").output("y");
    b.node("OneHot", {"indices", "depth", "values"}, {"y"}, attrs, "oh");
    return b;
}

// np.eye-style reference: out[..., axis = k, ...] = on where index == k (after wrapping).
std::vector<float> one_hot_ref(const std::vector<int64_t> &idx, const rt::Shape &shape,
                               int64_t depth, int64_t axis, bool wrap, float off, float on) {
    const int64_t r = int64_t(shape.size());
    const int64_t a = axis < 0 ? axis + r + 1 : axis;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= shape[size_t(d)];
    for (int64_t d = a; d < r; ++d) inner *= shape[size_t(d)];
    std::vector<float> out(size_t(outer * depth * inner), off);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            int64_t k = idx[size_t(o * inner + i)];
            if (wrap && k < 0) k += depth;
            if (k >= 0 && k < depth) out[size_t((o * depth + k) * inner + i)] = on;
        }
    return out;
}

TEST(OneHot, AxesDepthsAndNegativeIndices) {
    const std::vector<int64_t> idx = {0, 3, -1, 5, -4, 2, 9, -7, 1, 4, -5, 0};
    const rt::Shape shape = {2, 3, 2};
    const rt::Tensor values = tensor(DataType::float32, {2}, std::vector<float>{-1.5f, 2.5f});
    for (const int64_t opset : {9, 11})
        for (const int64_t axis : {-4, -3, -2, -1, 0, 1, 2, 3})
            for (const bool depth_vector : {false, true}) {
                SCOPED_TRACE(fmt::format("opset {} axis {}", opset, axis));
                const int64_t depth = 5;
                const rt::Tensor d = depth_vector
                                         ? tensor(DataType::int64, {1}, std::vector<int64_t>{depth})
                                         : tensor(DataType::float32, {}, std::vector<float>{5.9f});
                const rt::Tensor y = run1(one_hot_model(opset, {attr_int("axis", axis)}),
                                          {{"indices", tensor(DataType::int64, shape, idx)},
                                           {"depth", d},
                                           {"values", values}});
                rt::Shape expect_shape = shape;
                expect_shape.insert(expect_shape.begin() + (axis < 0 ? axis + 4 : axis), depth);
                EXPECT_EQ(y.shape(), expect_shape);
                EXPECT_EQ(y.to_vector<float>(),
                          one_hot_ref(idx, shape, depth, axis, opset >= 11, -1.5f, 2.5f));
            }
}

TEST(OneHot, IndexAndValueTypes) {
    // Float indices truncate toward zero; NaN and huge values are out of range (all off).
    const std::vector<float> fidx = {1.9f, -0.5f, NAN, 1e30f, 2.0f};
    const rt::Tensor y = run1(
        one_hot_model(11), {{"indices", tensor(DataType::float32, {5}, fidx)},
                            {"depth", tensor(DataType::int32, {}, std::vector<int32_t>{3})},
                            {"values", tensor(DataType::int64, {2}, std::vector<int64_t>{0, 7})}});
    EXPECT_EQ(y.dtype(), DataType::int64);
    EXPECT_EQ(y.to_vector<int64_t>(),
              (std::vector<int64_t>{0, 7, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}));
    // uint8 indices, bool values.
    const rt::Tensor z =
        run1(one_hot_model(11, {attr_int("axis", 0)}),
             {{"indices", tensor(DataType::uint8, {2}, std::vector<uint8_t>{1, 200})},
              {"depth", tensor(DataType::uint8, {}, std::vector<uint8_t>{2})},
              {"values", tensor(DataType::bool_, {2}, std::vector<uint8_t>{0, 1})}});
    EXPECT_EQ(z.shape(), (rt::Shape{2, 2}));
    EXPECT_EQ(z.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1, 0}));
}

TEST(OneHot, Errors) {
    const rt::Tensor i = tensor(DataType::int64, {2}, std::vector<int64_t>{0, 1});
    const rt::Tensor v = tensor(DataType::float32, {2}, std::vector<float>{0, 1});
    const rt::Tensor d = scalar_i64(3);
    const auto err = [&](const ModelBuilder &b, const rt::Tensor &ii, const rt::Tensor &dd,
                         const rt::Tensor &vv) {
        const std::string e = run_error(b, {{"indices", ii}, {"depth", dd}, {"values", vv}});
        EXPECT_NE(e.find("node \"oh\" (OneHot-11)"), std::string::npos) << e;
        return e;
    };
    EXPECT_NE(err(one_hot_model(11, {attr_int("axis", 2)}), i, d, v).find("out of range"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11, {attr_int("axis", -3)}), i, d, v).find("out of range"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11), i, scalar_i64(-2), v).find("depth -2 is negative"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11), i, tensor(DataType::int64, {2}, std::vector<int64_t>{3, 3}), v)
                  .find("scalar or a one-element vector"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11), i, d, tensor(DataType::float32, {3}, std::vector<float>(3)))
                  .find("[off_value, on_value]"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11), tensor(DataType::bool_, {1}, std::vector<uint8_t>{1}), d, v)
                  .find("must be numeric"),
              std::string::npos);
    EXPECT_NE(err(one_hot_model(11), i, tensor(DataType::float32, {}, std::vector<float>{NAN}), v)
                  .find("not a valid size"),
              std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Unsqueeze

rt::Shape unsqueeze_shape(int64_t opset, const rt::Shape &in, const std::vector<int64_t> &axes,
                          std::string *error = nullptr) {
    ModelBuilder b(opset);
    b.input("x").output("y");
    rt::Inputs inputs = {{"x", rt::Tensor::zeros(DataType::float32, in)}};
    if (opset >= 13) {
        b.input("axes");
        b.node("Unsqueeze", {"x", "axes"}, {"y"}, {}, "uq");
        inputs["axes"] = tensor(DataType::int64, {int64_t(axes.size())}, axes);
    } else {
        b.node("Unsqueeze", {"x"}, {"y"}, {attr_ints("axes", axes)}, "uq");
    }
    if (error) {
        *error = run_error(b, inputs);
        return {};
    }
    return run1(b, inputs).shape();
}

TEST(Unsqueeze, AllVersions) {
    for (const int64_t opset : {1, 11, 13, 21, 29}) {
        SCOPED_TRACE(opset);
        EXPECT_EQ(unsqueeze_shape(opset, {3, 4, 5}, {0, 4}), (rt::Shape{1, 3, 4, 5, 1}));
        EXPECT_EQ(unsqueeze_shape(opset, {3, 4, 5}, {5, 4, 2}), (rt::Shape{3, 4, 1, 5, 1, 1}));
        EXPECT_EQ(unsqueeze_shape(opset, {}, {0}), (rt::Shape{1}));
        EXPECT_EQ(unsqueeze_shape(opset, {0, 2}, {1}), (rt::Shape{0, 1, 2}));
        if (opset >= 11) {
            EXPECT_EQ(unsqueeze_shape(opset, {1, 3, 1, 5}, {-2}), (rt::Shape{1, 3, 1, 1, 5}));
            EXPECT_EQ(unsqueeze_shape(opset, {3}, {-1, 0}), (rt::Shape{1, 3, 1}));
        }
        std::string e;
        unsqueeze_shape(opset, {3, 4}, {1, 1}, &e);
        EXPECT_NE(e.find("twice"), std::string::npos) << e;
        unsqueeze_shape(opset, {3, 4}, {3}, &e);
        EXPECT_NE(e.find("out of range for output rank 3"), std::string::npos) << e;
        unsqueeze_shape(opset, {3, 4}, {-4}, &e);
        EXPECT_NE(e.find(opset == 1 ? "negative" : "out of range"), std::string::npos) << e;
        EXPECT_NE(e.find("node \"uq\" (Unsqueeze-"), std::string::npos) << e;
        // Negative axes, valid from 11, are an error for Unsqueeze-1.
        if (opset == 1) {
            unsqueeze_shape(opset, {3}, {-1}, &e);
            EXPECT_NE(e.find("Unsqueeze-1 takes non-negative axes"), std::string::npos) << e;
        }
    }
    // The data is unchanged.
    ModelBuilder b(13);
    b.input("x").input("axes").output("y");
    b.node("Unsqueeze", {"x", "axes"}, {"y"}, {}, "uq");
    const rt::Tensor y =
        run1(b, {{"x", tensor(DataType::int16, {2, 2}, std::vector<int16_t>{1, 2, 3, 4})},
                 {"axes", tensor(DataType::int64, {1}, std::vector<int64_t>{1})}});
    EXPECT_EQ(y.shape(), (rt::Shape{2, 1, 2}));
    EXPECT_EQ(y.to_vector<int16_t>(), (std::vector<int16_t>{1, 2, 3, 4}));
    // Axes as an attribute at opset 13, or missing at opset 11, are errors.
    ModelBuilder c(13);
    c.input("x").output("y");
    c.node("Unsqueeze", {"x"}, {"y"}, {attr_ints("axes", {0})}, "uq");
    EXPECT_THROW(c.model(), Error);
    ModelBuilder d(11);
    d.input("x").output("y");
    d.node("Unsqueeze", {"x"}, {"y"}, {}, "uq");
    EXPECT_NE(run_error(d, {{"x", scalar_i64(1)}}).find("attribute 'axes' is required"),
              std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Cast

rt::Tensor cast(const rt::Tensor &x, DataType to) {
    ModelBuilder b;
    b.input("x").output("y");
    b.node("Cast", {"x"}, {"y"}, {attr_int("to", int64_t(to))}, "cast");
    return run1(b, {{"x", x}});
}

template <class T>
std::vector<T> cast_values(const rt::Tensor &x, DataType to) {
    return cast(x, to).to_vector<T>();
}

TEST(Cast, FloatToHalfRoundsOnceToNearestEven) {
    const std::vector<float> in = {1.0f / 3, 65504.0f,     65519.99f,       65520.0f,
                                   0x1p-24f, 0x1p-25f,     3 * 0x1p-25f,    -0.0f,
                                   INFINITY, 1 + 0x1p-11f, 1 + 3 * 0x1p-11f};
    EXPECT_EQ(cast_values<uint16_t>(tensor(DataType::float32, {11}, in), DataType::float16),
              (std::vector<uint16_t>{0x3555, 0x7bff, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0002, 0x8000,
                                     0x7c00, 0x3c00, 0x3c02}));
    // From double the rounding is direct: 1 + 2^-11 + 2^-40 is above the tie (via float it
    // would become the tie and round down).
    EXPECT_EQ(cast_values<uint16_t>(
                  tensor(DataType::float64, {1}, std::vector<double>{1 + 0x1p-11 + 0x1p-40}),
                  DataType::float16),
              (std::vector<uint16_t>{0x3c01}));
    const std::vector<uint16_t> nan = cast_values<uint16_t>(
        tensor(DataType::float32, {1}, std::vector<float>{NAN}), DataType::float16);
    EXPECT_EQ(nan[0] & 0x7c00, 0x7c00);
    EXPECT_NE(nan[0] & 0x03ff, 0);
    // bfloat16.
    EXPECT_EQ(
        cast_values<uint16_t>(tensor(DataType::float32, {3},
                                     std::vector<float>{1.0f, 1 + 0x1p-8f, 1 + 0x1p-8f + 0x1p-20f}),
                              DataType::bfloat16),
        (std::vector<uint16_t>{0x3f80, 0x3f80, 0x3f81}));
    // int64 -> bfloat16: 2^60 + 2^52 + 1 is above the tie (a plain int->double->bf16 rounds twice
    // and gets 0x5d80).
    EXPECT_EQ(cast_values<uint16_t>(
                  tensor(DataType::int64, {1},
                         std::vector<int64_t>{(int64_t(1) << 60) + (int64_t(1) << 52) + 1}),
                  DataType::bfloat16),
              (std::vector<uint16_t>{0x5d81}));
}

TEST(Cast, IntegersBoolsAndBack) {
    const rt::Tensor f = tensor(DataType::float32, {7},
                                std::vector<float>{3.7f, -3.7f, NAN, 1e10f, -1e10f, 300.5f, -0.5f});
    EXPECT_EQ(cast_values<int32_t>(f, DataType::int32),
              (std::vector<int32_t>{3, -3, 0, INT32_MAX, INT32_MIN, 300, 0}));
    EXPECT_EQ(cast_values<uint8_t>(f, DataType::uint8),
              (std::vector<uint8_t>{3, 0, 0, 255, 0, 255, 0}));
    EXPECT_EQ(cast_values<uint8_t>(f, DataType::bool_),
              (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1}));
    const rt::Tensor i = tensor(DataType::int32, {4}, std::vector<int32_t>{300, -1, 0, 65537});
    EXPECT_EQ(cast_values<uint8_t>(i, DataType::uint8), (std::vector<uint8_t>{44, 255, 0, 1}));
    EXPECT_EQ(cast_values<uint16_t>(i, DataType::uint16),
              (std::vector<uint16_t>{300, 65535, 0, 1}));
    EXPECT_EQ(cast_values<uint8_t>(i, DataType::bool_), (std::vector<uint8_t>{1, 1, 0, 1}));
    EXPECT_EQ(cast_values<double>(i, DataType::float64), (std::vector<double>{300, -1, 0, 65537}));
    const rt::Tensor b = tensor(DataType::bool_, {2}, std::vector<uint8_t>{1, 0});
    EXPECT_EQ(cast_values<float>(b, DataType::float32), (std::vector<float>{1, 0}));
    EXPECT_EQ(cast_values<int64_t>(b, DataType::int64), (std::vector<int64_t>{1, 0}));
    // uint8 codes to float, as the unpack-mode graphs do.
    std::vector<uint8_t> codes(256);
    for (int k = 0; k < 256; ++k) codes[size_t(k)] = uint8_t(k);
    const std::vector<float> fl =
        cast_values<float>(tensor(DataType::uint8, {256}, codes), DataType::float32);
    for (int k = 0; k < 256; ++k) EXPECT_EQ(fl[size_t(k)], float(k));
    // Half to float is exact: every finite half survives a round trip.
    std::vector<uint16_t> halves;
    for (uint32_t h = 0; h < 0x10000; ++h)
        if ((h & 0x7c00) != 0x7c00) halves.push_back(uint16_t(h));
    const rt::Tensor hx = tensor(DataType::float16, {int64_t(halves.size())}, halves);
    EXPECT_EQ(cast(cast(hx, DataType::float32), DataType::float16).to_vector<uint16_t>(), halves);
    EXPECT_EQ(cast(cast(hx, DataType::float64), DataType::float16).to_vector<uint16_t>(), halves);
    // Errors: unsupported target type.
    ModelBuilder s;
    s.input("x").output("y");
    s.node("Cast", {"x"}, {"y"}, {attr_int("to", 8)}, "cast");
    EXPECT_NE(run_error(s, {{"x", f}}).find("unsupported target type 8"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Add, Sub, Mul

template <class T>
void check_binary(DataType dt, const rt::Shape &sa, const rt::Shape &sb, uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto fill = [&](const rt::Shape &s) {
        size_t n = 1;
        for (int64_t d : s) n *= size_t(d);
        std::vector<T> v(n);
        for (T &x : v) {
            if constexpr (std::is_floating_point_v<T>)
                x = T(int(rng() % 2001) - 1000) / T(8);
            else
                x = T(rng());
        }
        return v;
    };
    const std::vector<T> a = fill(sa), b = fill(sb);
    // Integers wrap: computed in uint64_t (modular), then truncated.
    using W = std::conditional_t<std::is_floating_point_v<T>, T, uint64_t>;
    const std::pair<const char *, T (*)(T, T)> ops[] = {
        {"Add", [](T u, T v) { return T(W(u) + W(v)); }},
        {"Sub", [](T u, T v) { return T(W(u) - W(v)); }},
        {"Mul", [](T u, T v) { return T(W(u) * W(v)); }}};
    for (const auto &[op, fn] : ops) {
        SCOPED_TRACE(fmt::format("{} {} {} {}", op, dtype_name(dt), rt::shape_string(sa),
                                 rt::shape_string(sb)));
        ModelBuilder m;
        m.input("a").input("b").output("y");
        m.node(op, {"a", "b"}, {"y"}, {}, "bin");
        const rt::Tensor y = run1(m, {{"a", tensor(dt, sa, a)}, {"b", tensor(dt, sb, b)}});
        rt::Shape shape;
        const std::vector<T> expected = broadcast_ref(a, sa, b, sb, &shape, fn);
        EXPECT_EQ(y.shape(), shape);
        EXPECT_EQ(y.to_vector<T>(), expected);
    }
}

TEST(Binary, BroadcastingAgainstReference) {
    const std::pair<rt::Shape, rt::Shape> shapes[] = {
        {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}},    {{1}, {5}},
        {{}, {2, 2}},           {{4, 1, 3}, {1, 5, 1}}, {{7, 1}, {1, 9}},
        {{0, 3}, {1, 3}},       {{3, 70000}, {3, 1}},   {{2, 1, 4, 1}, {3, 1, 5}}};
    uint64_t seed = 1;
    for (const auto &[sa, sb] : shapes) {
        check_binary<float>(DataType::float32, sa, sb, seed++);
        check_binary<double>(DataType::float64, sa, sb, seed++);
        check_binary<int32_t>(DataType::int32, sa, sb, seed++);
        check_binary<uint16_t>(DataType::uint16, sa, sb, seed++);  // products wrap mod 2^16
        check_binary<int8_t>(DataType::int8, sb, sa, seed++);
        check_binary<uint64_t>(DataType::uint64, sa, sb, seed++);
    }
}

TEST(Binary, HalfRoundsOnceAndErrors) {
    ModelBuilder m;
    m.input("a").input("b").output("y");
    m.node("Add", {"a", "b"}, {"y"}, {}, "add");
    // 1 + 2^-11 is a tie -> 1; (1 + 2^-10) + 2^-11 is a tie -> 1 + 2^-9.
    const rt::Tensor y =
        run1(m, {{"a", tensor(DataType::float16, {2}, std::vector<uint16_t>{0x3c00, 0x3c01})},
                 {"b", tensor(DataType::float16, {1}, std::vector<uint16_t>{0x1000})}});
    EXPECT_EQ(y.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0x3c02}));
    const rt::Tensor z =
        run1(m, {{"a", tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0x3f80})},
                 {"b", tensor(DataType::bfloat16, {1}, std::vector<uint16_t>{0x3f80})}});
    EXPECT_EQ(z.to_vector<uint16_t>(), (std::vector<uint16_t>{0x4000}));
    EXPECT_NE(run_error(m, {{"a", tensor(DataType::float32, {2}, std::vector<float>(2))},
                            {"b", tensor(DataType::float32, {3}, std::vector<float>(3))}})
                  .find("node \"add\" (Add-14): shapes [2] and [3] cannot be broadcast together"),
              std::string::npos);
    EXPECT_NE(run_error(m, {{"a", tensor(DataType::float32, {2}, std::vector<float>(2))},
                            {"b", tensor(DataType::float64, {2}, std::vector<double>(2))}})
                  .find("must have the same type"),
              std::string::npos);
    EXPECT_NE(run_error(m, {{"a", tensor(DataType::bool_, {2}, std::vector<uint8_t>(2))},
                            {"b", tensor(DataType::bool_, {2}, std::vector<uint8_t>(2))}})
                  .find("must be numeric"),
              std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Gather, Reshape, Identity, Concat, Constant

TEST(Gather, AxesNegativeIndicesAndErrors) {
    const std::vector<float> data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // [3, 4]
    const auto gather = [&](int64_t axis, const rt::Tensor &idx, int64_t opset = 13) {
        ModelBuilder m(opset);
        m.input("d").input("i").output("y");
        m.node("Gather", {"d", "i"}, {"y"}, {attr_int("axis", axis)}, "g");
        rt::Session s(m.model());
        return s.run({{"d", tensor(DataType::float32, {3, 4}, data)}, {"i", idx}}).at(0).second;
    };
    rt::Tensor y = gather(0, tensor(DataType::int64, {2}, std::vector<int64_t>{2, -3}));
    EXPECT_EQ(y.shape(), (rt::Shape{2, 4}));
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3}));
    y = gather(-1, tensor(DataType::int32, {2, 2}, std::vector<int32_t>{3, 0, -1, 1}));
    EXPECT_EQ(y.shape(), (rt::Shape{3, 2, 2}));
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 0, 3, 1, 7, 4, 7, 5, 11, 8, 11, 9}));
    y = gather(1, scalar_i64(2));
    EXPECT_EQ(y.shape(), (rt::Shape{3}));
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 6, 10}));
    EXPECT_THROW(gather(0, tensor(DataType::int64, {1}, std::vector<int64_t>{3})), Error);
    EXPECT_THROW(gather(0, tensor(DataType::int64, {1}, std::vector<int64_t>{-4})), Error);
    EXPECT_THROW(gather(0, tensor(DataType::int64, {1}, std::vector<int64_t>{-1}), 1), Error);
    EXPECT_THROW(gather(2, scalar_i64(0)), Error);
    EXPECT_THROW(gather(0, tensor(DataType::uint8, {1}, std::vector<uint8_t>{0})), Error);
    try {
        gather(0, tensor(DataType::int64, {1}, std::vector<int64_t>{3}));
    } catch (const Error &e) {
        EXPECT_NE(
            std::string(e.what()).find("node \"g\" (Gather-13): index 3 (element 0 of indices) "
                                       "is out of range for axis 0 of size 3"),
            std::string::npos)
            << e.what();
    }
}

TEST(Reshape, ZerosMinusOneAndAllowzero) {
    const auto reshape = [](const rt::Shape &in, const std::vector<int64_t> &target,
                            int64_t allowzero = -1) {
        ModelBuilder m(allowzero >= 0 ? 14 : 13);
        m.input("x").input("s").output("y");
        onnx::NodeProto &n = m.node("Reshape", {"x", "s"}, {"y"}, {}, "r");
        if (allowzero >= 0) *n.add_attribute() = attr_int("allowzero", allowzero);
        rt::Session s(m.model());
        return s
            .run({{"x", rt::Tensor::zeros(DataType::int32, in)},
                  {"s", tensor(DataType::int64, {int64_t(target.size())}, target)}})
            .at(0)
            .second.shape();
    };
    EXPECT_EQ(reshape({2, 3, 4}, {0, -1}), (rt::Shape{2, 12}));
    EXPECT_EQ(reshape({2, 3, 4}, {-1}), (rt::Shape{24}));
    EXPECT_EQ(reshape({2, 3, 4}, {4, 0, 2}), (rt::Shape{4, 3, 2}));
    EXPECT_EQ(reshape({0, 4}, {0, 2, 2}, 1), (rt::Shape{0, 2, 2}));
    EXPECT_EQ(reshape({2, 0}, {0, 7}, 1), (rt::Shape{0, 7}));
    EXPECT_THROW(reshape({2, 3}, {4, -1}), Error);
    EXPECT_THROW(reshape({2, 3}, {-1, -1}), Error);
    EXPECT_THROW(reshape({2, 3}, {7}), Error);
    EXPECT_THROW(reshape({2, 3}, {-2, 3}), Error);
    EXPECT_THROW(reshape({0, 3}, {0, -1}, 1), Error);
}

TEST(Concat, AxesAndErrors) {
    const auto concat = [](int64_t axis, const std::vector<rt::Tensor> &ins) {
        ModelBuilder m;
        std::vector<std::string> names;
        rt::Inputs inputs;
        for (size_t k = 0; k < ins.size(); ++k) {
            names.push_back(fmt::format("x{}", k));
            m.input(names.back());
            inputs[names.back()] = ins[k];
        }
        m.output("y");
        m.node("Concat", names, {"y"}, {attr_int("axis", axis)}, "cat");
        return run1(m, inputs);
    };
    const rt::Tensor a = tensor(DataType::int64, {2, 1}, std::vector<int64_t>{1, 2});
    const rt::Tensor b = tensor(DataType::int64, {2, 3}, std::vector<int64_t>{3, 4, 5, 6, 7, 8});
    const rt::Tensor e = tensor(DataType::int64, {2, 0}, std::vector<int64_t>{});
    rt::Tensor y = concat(-1, {a, e, b});
    EXPECT_EQ(y.shape(), (rt::Shape{2, 4}));
    EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 4, 5, 2, 6, 7, 8}));
    y = concat(0, {b, b});
    EXPECT_EQ(y.shape(), (rt::Shape{4, 3}));
    EXPECT_THROW(concat(0, {a, b}), Error);
    EXPECT_THROW(concat(2, {a, a}), Error);
    EXPECT_THROW(concat(1, {a, tensor(DataType::int32, {2, 1}, std::vector<int32_t>{1, 2})}),
                 Error);
}

TEST(Constant, ValueAttributes) {
    const auto constant = [](const onnx::AttributeProto &a) {
        ModelBuilder m;
        m.output("y");
        m.node("Constant", {}, {"y"}, {a}, "c");
        return run1(m);
    };
    rt::Tensor y = constant(attr_tensor(
        "value", tensor(DataType::float16, {2}, std::vector<uint16_t>{0x3c00, 0x4000})));
    EXPECT_EQ(y.dtype(), DataType::float16);
    EXPECT_EQ(y.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0x4000}));
    y = constant(attr_float("value_float", 2.5f));
    EXPECT_EQ(y.shape(), rt::Shape{});
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2.5f}));
    y = constant(attr_ints("value_ints", {1, -2, 3}));
    EXPECT_EQ(y.dtype(), DataType::int64);
    EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
    y = constant(attr_int("value_int", 9));
    EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{9}));
    ModelBuilder none;
    none.output("y");
    none.node("Constant", {}, {"y"}, {}, "c");
    EXPECT_NE(run_error(none).find("needs exactly one value attribute"), std::string::npos);
    ModelBuilder v11(11);
    v11.output("y");
    v11.node("Constant", {}, {"y"}, {attr_float("value_float", 1)}, "c");
    EXPECT_THROW(v11.model(), Error);  // value_float needs opset 12
}

// The chain the unpack-mode converter emits for q4_0, bit-identical to DequantizePacked:
// codes = Unpack(qs, bits=4) ; y = (Cast(codes) - 8) * Unsqueeze(Cast(d))
TEST(Chains, Q4_0ThroughUnpackMatchesDequantizePacked) {
    constexpr int64_t kBlocks = 64;
    std::mt19937_64 rng(3);
    std::vector<uint8_t> blocks(size_t(kBlocks) * 18);
    std::vector<uint16_t> scales(kBlocks);
    std::vector<uint8_t> nibbles(size_t(kBlocks) * 16);  // element order: j and j+16 share a byte
    for (int64_t k = 0; k < kBlocks; ++k) {
        const uint16_t d = uint16_t(0x2000 + rng() % 0x3000);
        scales[size_t(k)] = d;
        blocks[size_t(k * 18)] = uint8_t(d);
        blocks[size_t(k * 18 + 1)] = uint8_t(d >> 8);
        for (int j = 0; j < 16; ++j) blocks[size_t(k * 18 + 2 + j)] = uint8_t(rng());
        // Repack so that Unpack(bits=4) yields codes in element order.
        for (int j = 0; j < 32; ++j) {
            const uint8_t q = j < 16 ? blocks[size_t(k * 18 + 2 + j)] & 15
                                     : blocks[size_t(k * 18 + 2 + j - 16)] >> 4;
            nibbles[size_t(k * 16 + j / 2)] |= uint8_t(q << ((j & 1) * 4));
        }
    }
    ModelBuilder m;
    m.output("direct").output("chain");
    m.initializer("blocks", bytes_u8(blocks));
    m.initializer("qs", tensor(DataType::uint8, {kBlocks, 16}, nibbles));
    m.initializer("d", tensor(DataType::float16, {kBlocks}, scales));
    m.initializer("count", scalar_i64(32));
    m.initializer("eight", tensor(DataType::float32, {}, std::vector<float>{8}));
    m.initializer("axes", tensor(DataType::int64, {1}, std::vector<int64_t>{1}));
    m.initializer("shape", tensor(DataType::int64, {1}, std::vector<int64_t>{kBlocks * 32}));
    m.node("DequantizePacked", {"blocks"}, {"direct"},
           {attr_string("format", "gguf:q4_0"), attr_ints("shape", {kBlocks * 32})}, "dq");
    m.node("Unpack", {"qs", "count"}, {"codes"}, {attr_int("bits", 4)}, "unpack");
    m.node("Cast", {"codes"}, {"codes_f"}, {attr_int("to", 1)}, "cast_codes");
    m.node("Sub", {"codes_f", "eight"}, {"centered"}, {}, "sub");
    m.node("Cast", {"d"}, {"d_f"}, {attr_int("to", 1)}, "cast_d");
    m.node("Unsqueeze", {"d_f", "axes"}, {"d_col"}, {}, "unsqueeze");
    m.node("Mul", {"centered", "d_col"}, {"blocks_f"}, {}, "mul");
    m.node("Reshape", {"blocks_f", "shape"}, {"chain"}, {}, "reshape");
    rt::Session s(m.model());
    const rt::NamedTensors out = s.run();
    const rt::AllcloseResult c = rt::allclose(out[1].second, out[0].second, true);
    EXPECT_TRUE(c.equal) << c.message;
}

}  // namespace
}  // namespace gguftool::rttest
