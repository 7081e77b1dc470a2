// The repository's ONNX backend node tests (testdata/node-tests), in ONNX's layout:
// test_<name>/model.onnx (one node) and test_<name>/test_data_set_0/{input,output}_K.pb.
//
//   - every example printed in the DequantizePacked-29 and Unpack-29 specs;
//   - the Unsqueeze-13 examples (one axis 0..3, two, three, unsorted and negative axes) with
//     fixed data in place of the spec's random inputs, and Unsqueeze-1 with attribute axes;
//   - OneHot-11 as in ONNX's own node tests (with and without axis, negative axis and indices);
//   - ONNX's own node tests of the decoder operators (MatMul, Gemm, Softmax, ReduceMean-18 and,
//     named _v13_, ReduceMean-13, ReduceSum-13, Sqrt, Tanh, Sigmoid, Exp, Reciprocal, Greater,
//     Less, GreaterOrEqual, LessOrEqual, And, Or, Not, Expand, Squeeze) with fixed data in place of
//     random inputs, expected outputs from double-precision loops.
//
// Each expected output is written from the spec's own values or formula (the DequantizePacked
// and Unpack values as the examples print them, Unsqueeze's shapes by hand, OneHot by a plain
// loop): nothing here runs gguftool's runtime or decoders. The files carry the same ir_version
// and opset as ONNX's generator gives each operator's tests.
//
// Used by tools/make_node_tests.cpp, which writes the files, and by
// tests/runtime/node_tests_generator_test.cpp, which checks the committed files are what this
// builds.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "files.hpp"
#include "gguftool/data_type.hpp"
#include "onnx_builder.hpp"

namespace gguftool::testkit {

// One tensor of a test: name, ONNX element type, dimensions and little-endian bytes.
struct NodeTestTensor {
    std::string name;
    DataType type;
    std::vector<int64_t> dims;
    std::string raw;
};

struct NodeTestCase {
    std::string name;  // directory name, test_<...>
    int64_t ir_version;
    int64_t opset;  // of the default domain
    std::string op;
    std::vector<onnx::AttributeProto> attributes;
    std::vector<NodeTestTensor> inputs;
    std::vector<NodeTestTensor> outputs;
};

namespace detail {

// Little-endian bytes of integers or IEEE floats, independent of the host's byte order.
template <class T>
std::string le_bytes(const std::vector<T> &values) {
    std::string out;
    for (const T v : values) {
        uint64_t bits;
        if constexpr (std::is_same_v<T, float>)
            bits = std::bit_cast<uint32_t>(v);
        else
            bits = uint64_t(v);
        for (size_t b = 0; b < sizeof(T); ++b) out.push_back(char((bits >> (8 * b)) & 0xFF));
    }
    return out;
}

// IEEE half bits of `v`, which must be zero or a normal half exactly (every value here is a
// small multiple of a power of two). Worked out from frexp so no float16 converter is trusted.
inline uint16_t half_bits(float v) {
    const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    if (v == 0) return sign;
    int e;
    const double m = std::frexp(std::fabs(double(v)), &e);  // |v| = m * 2^e, m in [0.5, 1)
    const int exponent = e - 1 + 15;
    const double fraction = (2 * m - 1) * 1024;
    if (exponent < 1 || exponent > 30 || fraction != std::floor(fraction))
        throw std::logic_error("half_bits: not an exact normal half");
    return uint16_t(sign | (exponent << 10) | uint16_t(fraction));
}

template <class T>
NodeTestTensor tensor(const std::string &name, DataType type, std::vector<int64_t> dims,
                      const std::vector<T> &values) {
    return {name, type, std::move(dims), le_bytes(values)};
}
inline NodeTestTensor f32(const std::string &name, std::vector<int64_t> dims,
                          const std::vector<float> &v) {
    return tensor(name, DataType::float32, std::move(dims), v);
}
inline NodeTestTensor u8(const std::string &name, std::vector<int64_t> dims,
                         const std::vector<uint8_t> &v) {
    return tensor(name, DataType::uint8, std::move(dims), v);
}
inline NodeTestTensor i64_scalar(const std::string &name, int64_t v) {
    return tensor(name, DataType::int64, {}, std::vector<int64_t>{v});
}
// Bytes of a DequantizePacked payload: raw bytes and little-endian fields.
inline void append_half(std::vector<uint8_t> &out, float v) {
    const uint16_t h = half_bits(v);
    out.push_back(uint8_t(h & 0xFF));
    out.push_back(uint8_t(h >> 8));
}
inline void append_u32(std::vector<uint8_t> &out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(uint8_t(v >> (8 * b)));
}
inline std::vector<uint8_t> byte_range(int n) {
    std::vector<uint8_t> v;
    for (int i = 0; i < n; ++i) v.push_back(uint8_t(i));
    return v;
}
template <class T>
void append(std::vector<T> &out, size_t n, T value) {
    out.insert(out.end(), n, value);
}

using testkit::attr_int;
using testkit::attr_ints;
using testkit::attr_string;

// --- DequantizePacked-29: the spec's five examples ---

inline NodeTestCase dequantize(const std::string &name,
                               std::vector<onnx::AttributeProto> attributes,
                               const std::vector<uint8_t> &x, NodeTestTensor y) {
    return {"test_dequantizepacked_" + name,
            8,
            29,
            "DequantizePacked",
            std::move(attributes),
            {u8("x", {int64_t(x.size())}, x)},
            {std::move(y)}};
}

inline std::vector<NodeTestCase> dequantize_packed_cases() {
    std::vector<NodeTestCase> cases;

    // Q4_0: y[j] = d * ((q[j] & 15) - 8), y[j + 16] = d * ((q[j] >> 4) - 8). Block 1: d = 0.5,
    // q = 0..15 (high nibbles 0); block 2: d = -2, every q = 0xF0.
    std::vector<uint8_t> x;
    append_half(x, 0.5f);
    const std::vector<uint8_t> counting = byte_range(16);
    x.insert(x.end(), counting.begin(), counting.end());
    append_half(x, -2.0f);
    append<uint8_t>(x, 16, 0xF0);
    std::vector<float> y;
    for (int i = -8; i < 8; ++i) y.push_back(float(i) * 0.5f);
    append(y, 16, -4.0f);
    append(y, 16, 16.0f);
    append(y, 16, -14.0f);
    cases.push_back(dequantize("q4_0",
                               {attr_string("format", "gguf:q4_0"), attr_ints("shape", {2, 32})}, x,
                               f32("y", {2, 32}, y)));

    // Q5_1: d = 0.5, m = -1, high bits 0xFFFF0000 (set for codes 16..31), q = 0..15.
    x.clear();
    append_half(x, 0.5f);
    append_half(x, -1.0f);
    append_u32(x, 0xFFFF0000u);
    x.insert(x.end(), counting.begin(), counting.end());
    y.clear();
    for (int i = 0; i < 16; ++i) y.push_back(float(i) * 0.5f - 1);
    append(y, 16, 7.0f);
    cases.push_back(dequantize("q5_1",
                               {attr_string("format", "gguf:q5_1"), attr_ints("shape", {32})}, x,
                               f32("y", {32}, y)));

    // IQ4_NL to FLOAT16: d = 0.5 times the codebook entry of each nibble (q = 0..15).
    x.clear();
    append_half(x, 0.5f);
    x.insert(x.end(), counting.begin(), counting.end());
    const int codebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                              1,    13,   25,  38,  53,  69,  89,  113};
    std::vector<uint16_t> halves;
    for (const int k : codebook) halves.push_back(half_bits(float(k) * 0.5f));
    append<uint16_t>(halves, 16, half_bits(-127 * 0.5f));
    cases.push_back(
        dequantize("iq4_nl_float16",
                   {attr_string("format", "gguf:iq4_nl"),
                    attr_int("output_dtype", int64_t(DataType::float16)), attr_ints("shape", {32})},
                   x, tensor("y", DataType::float16, {32}, halves)));

    // MXFP4: shared exponent 127 (scale 1), q = 0..15: the FP4 (E2M1) value of each low nibble,
    // then 16 zeros from the high nibbles.
    x = {127};
    x.insert(x.end(), counting.begin(), counting.end());
    y = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
    append(y, 16, 0.0f);
    cases.push_back(dequantize("mxfp4",
                               {attr_string("format", "gguf:mxfp4"), attr_ints("shape", {32})}, x,
                               f32("y", {32}, y)));

    // An empty Q2_K tensor: no bytes, shape [0, 256].
    cases.push_back(dequantize("empty",
                               {attr_string("format", "gguf:q2_k"), attr_ints("shape", {0, 256})},
                               {}, f32("y", {0, 256}, {})));
    return cases;
}

// --- Unpack-29: the spec's six examples ---

inline NodeTestCase unpack(const std::string &name, std::vector<onnx::AttributeProto> attributes,
                           NodeTestTensor x, int64_t count, NodeTestTensor y) {
    x.name = "X";
    y.name = "Y";
    return {"test_unpack_" + name,
            8,
            29,
            "Unpack",
            std::move(attributes),
            {std::move(x), i64_scalar("count", count)},
            {std::move(y)}};
}

inline std::vector<NodeTestCase> unpack_cases() {
    std::vector<NodeTestCase> cases;
    // UINT32 words, all bits set, unpacked along axis 0: seven 5-bit codes of 31 per column.
    cases.push_back(
        unpack("uint32_axis", {attr_int("axis", 0), attr_int("bits", 5)},
               tensor("", DataType::uint32, {2, 2}, std::vector<uint32_t>(4, 0xFFFFFFFF)), 7,
               u8("", {7, 2}, std::vector<uint8_t>(14, 31))));
    // Five ternary digits per byte, least significant first: 102 = 0 + 1*3 + 2*9 + 0*27 + 1*81,
    // 242 = 3^5 - 1 (all digits 2).
    cases.push_back(unpack("ternary", {attr_int("group_size", 5), attr_int("radix", 3)},
                           u8("", {2, 1}, {102, 242}), 5,
                           u8("", {2, 5}, {0, 1, 2, 0, 1, 2, 2, 2, 2, 2})));
    // 0..7 as 3-bit codes, least significant bit first, across byte boundaries.
    cases.push_back(unpack("3bit", {attr_int("bits", 3)}, u8("", {3}, {0x88, 0xC6, 0xFA}), 8,
                           u8("", {8}, {0, 1, 2, 3, 4, 5, 6, 7})));
    // Two rows, each starting at a new word: 1, 2, 3 and 31, 0, 16.
    cases.push_back(unpack("rows_5bit", {attr_int("bits", 5)},
                           u8("", {2, 2}, {0x41, 0x0C, 0x1F, 0x40}), 3,
                           u8("", {2, 3}, {1, 2, 3, 31, 0, 16})));
    // count 0: an empty axis in and out.
    cases.push_back(
        unpack("empty", {attr_int("bits", 3)}, u8("", {2, 0}, {}), 0, u8("", {2, 0}, {})));
    // A zero non-axis dimension: no rows, the axis still becomes count.
    cases.push_back(unpack("empty_rows", {attr_int("bits", 5)}, u8("", {2, 0, 6}, {}), 9,
                           u8("", {2, 0, 9}, {})));
    return cases;
}

// --- Unsqueeze-13 and Unsqueeze-1 ---

// Fixed stand-ins for the spec's random normal inputs: multiples of 1/64 in [-2, 2).
inline std::vector<float> fixed_data(size_t n) {
    std::vector<float> v;
    for (size_t i = 0; i < n; ++i) v.push_back(float(int((i * 37 + 11) % 256) - 128) / 64.0f);
    return v;
}

inline size_t element_count(const std::vector<int64_t> &dims) {
    size_t n = 1;
    for (const int64_t d : dims) n *= size_t(d);
    return n;
}

// Unsqueeze only inserts 1s into the shape: the data is the input's, in the same order.
inline NodeTestCase unsqueeze(const std::string &name, const std::vector<int64_t> &x_dims,
                              const std::vector<int64_t> &axes, std::vector<int64_t> y_dims) {
    const std::vector<float> data = fixed_data(element_count(x_dims));
    return {"test_unsqueeze_" + name,
            7,
            13,
            "Unsqueeze",
            {},
            {f32("x", x_dims, data), tensor("axes", DataType::int64, {int64_t(axes.size())}, axes)},
            {f32("y", std::move(y_dims), data)}};
}

inline std::vector<NodeTestCase> unsqueeze_cases() {
    // The output shapes are written out from the rule: a 1 at each axis of the output.
    std::vector<NodeTestCase> cases = {
        unsqueeze("axis_0", {3, 4, 5}, {0}, {1, 3, 4, 5}),
        unsqueeze("axis_1", {3, 4, 5}, {1}, {3, 1, 4, 5}),
        unsqueeze("axis_2", {3, 4, 5}, {2}, {3, 4, 1, 5}),
        unsqueeze("axis_3", {3, 4, 5}, {3}, {3, 4, 5, 1}),
        unsqueeze("two_axes", {3, 4, 5}, {1, 4}, {3, 1, 4, 5, 1}),
        unsqueeze("three_axes", {3, 4, 5}, {2, 4, 5}, {3, 4, 1, 5, 1, 1}),
        unsqueeze("unsorted_axes", {3, 4, 5}, {5, 4, 2}, {3, 4, 1, 5, 1, 1}),
        unsqueeze("negative_axes", {1, 3, 1, 5}, {-2}, {1, 3, 1, 1, 5}),
    };
    // Unsqueeze-1 takes axes as an attribute; the spec's own example: [3, 4, 5] with axes
    // [0, 4] is [1, 3, 4, 5, 1]. Data 0..59.
    std::vector<float> counting;
    for (int i = 0; i < 60; ++i) counting.push_back(float(i));
    cases.push_back({"test_unsqueeze_v1_attr_axes",
                     8,
                     1,
                     "Unsqueeze",
                     {attr_ints("axes", {0, 4})},
                     {f32("x", {3, 4, 5}, counting)},
                     {f32("y", {1, 3, 4, 5, 1}, counting)}});
    return cases;
}

// --- OneHot-11 ---

// Which output elements are "on": output dims are the indices' with `depth` inserted at `axis`
// (negative counts from the back of the output); a negative index counts from depth.
inline std::vector<bool> one_hot_mask(const std::vector<int64_t> &indices,
                                      const std::vector<int64_t> &dims, int64_t depth,
                                      int64_t axis) {
    if (axis < 0) axis += int64_t(dims.size()) + 1;
    size_t outer = 1, inner = 1;
    for (size_t i = 0; i < dims.size(); ++i) (int64_t(i) < axis ? outer : inner) *= size_t(dims[i]);
    std::vector<bool> on;
    for (size_t o = 0; o < outer; ++o)
        for (int64_t d = 0; d < depth; ++d)
            for (size_t i = 0; i < inner; ++i) {
                int64_t k = indices[o * inner + i];
                if (k < 0) k += depth;
                on.push_back(k == d);
            }
    return on;
}

template <class T>
std::vector<T> pick(const std::vector<bool> &on, T off_value, T on_value) {
    std::vector<T> v;
    for (const bool b : on) v.push_back(b ? on_value : off_value);
    return v;
}

inline std::vector<int64_t> with_depth(std::vector<int64_t> dims, int64_t depth, int64_t axis) {
    if (axis < 0) axis += int64_t(dims.size()) + 1;
    dims.insert(dims.begin() + axis, depth);
    return dims;
}

// Float indices, depth 10 and values (off 1, on 3) as in ONNX's test_onehot_with_axis.
inline NodeTestCase one_hot_float(const std::string &name, std::optional<int64_t> axis) {
    const std::vector<float> indices = {1, 9, 2, 4};
    const std::vector<int64_t> dims = {2, 2};
    const int64_t depth = 10, a = axis.value_or(-1);
    const std::vector<bool> on =
        one_hot_mask(std::vector<int64_t>(indices.begin(), indices.end()), dims, depth, a);
    std::vector<onnx::AttributeProto> attributes;
    if (axis) attributes.push_back(attr_int("axis", *axis));
    return {"test_onehot_" + name,
            6,
            11,
            "OneHot",
            std::move(attributes),
            {f32("indices", dims, indices), f32("depth", {}, {float(depth)}),
             f32("values", {2}, {1, 3})},
            {f32("y", with_depth(dims, depth, a), pick(on, 1.0f, 3.0f))}};
}

// INT64 indices [0, 7, 8] or [0, -7, -8] along the default last axis.
template <class T>
NodeTestCase one_hot_int64(const std::string &name, const std::vector<int64_t> &indices,
                           int64_t depth, DataType value_type, T off_value, T on_value) {
    const std::vector<int64_t> dims = {int64_t(indices.size())};
    const std::vector<bool> on = one_hot_mask(indices, dims, depth, -1);
    return {"test_onehot_" + name,
            6,
            11,
            "OneHot",
            {},
            {tensor("indices", DataType::int64, dims, indices), f32("depth", {}, {float(depth)}),
             tensor("values", value_type, {2}, std::vector<T>{off_value, on_value})},
            {tensor("y", value_type, with_depth(dims, depth, -1), pick(on, off_value, on_value))}};
}

inline std::vector<NodeTestCase> one_hot_cases() {
    return {one_hot_float("with_axis", 1), one_hot_float("with_negative_axis", -2),
            one_hot_int64<int32_t>("without_axis", {0, 7, 8}, 12, DataType::int32, 2, 5),
            one_hot_int64<float>("negative_indices", {0, -7, -8}, 10, DataType::float32, 1, 3)};
}

// --- The standard operators of an LLM decoder: ONNX's own node tests of MatMul, Gemm, Softmax,
// ReduceMean, Sqrt, Tanh, Sigmoid, Exp, Reciprocal, Greater, Less, GreaterOrEqual, LessOrEqual,
// And, Or, Not, Expand and Squeeze: their names, attributes, shapes and opsets, with the spec
// examples' values where ONNX prints them and fixed data in place of its random inputs. Expected
// outputs come from the plain double-precision loops below, each rounded once to float.

// A second fixed sequence, which meets fixed_data's values now and then (for the _equal tests).
inline std::vector<float> fixed_data_b(size_t n) {
    std::vector<float> v;
    for (size_t i = 0; i < n; ++i) v.push_back(float(int((i * 53 + 7) % 256) - 128) / 64.0f);
    return v;
}
inline std::vector<uint8_t> fixed_bools(size_t n, size_t salt) {
    std::vector<uint8_t> v;
    for (size_t i = 0; i < n; ++i) v.push_back(uint8_t(((i * 13 + salt * 5 + 1) % 7) < 3));
    return v;
}
inline std::vector<float> rounded(const std::vector<double> &v) {
    return std::vector<float>(v.begin(), v.end());
}
inline NodeTestTensor boolean(const std::string &name, std::vector<int64_t> dims,
                              const std::vector<uint8_t> &v) {
    return tensor(name, DataType::bool_, std::move(dims), v);
}
inline NodeTestTensor i64s(const std::string &name, const std::vector<int64_t> &v) {
    return tensor(name, DataType::int64, {int64_t(v.size())}, v);
}

// Batched matmul with equal batch dims: a [..., m, k], b [..., k, n].
inline std::vector<double> matmul_loop(const std::vector<float> &a, const std::vector<float> &b,
                                       size_t batches, size_t m, size_t k, size_t n) {
    std::vector<double> y;
    for (size_t t = 0; t < batches; ++t)
        for (size_t i = 0; i < m; ++i)
            for (size_t j = 0; j < n; ++j) {
                double s = 0;
                for (size_t q = 0; q < k; ++q)
                    s += double(a[(t * m + i) * k + q]) * double(b[(t * k + q) * n + j]);
                y.push_back(s);
            }
    return y;
}

inline NodeTestCase matmul(const std::string &name, std::vector<int64_t> batch, int64_t m,
                           int64_t k, int64_t n) {
    std::vector<int64_t> da = batch, db = batch, dc = batch;
    da.insert(da.end(), {m, k});
    db.insert(db.end(), {k, n});
    dc.insert(dc.end(), {m, n});
    const size_t batches = element_count(batch);
    const std::vector<float> a = fixed_data(element_count(da)), b = fixed_data_b(element_count(db));
    return {"test_matmul_" + name,
            7,
            13,
            "MatMul",
            {},
            {f32("a", da, a), f32("b", db, b)},
            {f32("c", dc, rounded(matmul_loop(a, b, batches, size_t(m), size_t(k), size_t(n))))}};
}

// Gemm: Y = alpha * A' B' + beta * C, in double and rounded once (the products and sums of fixed
// data are exact in float anyway).
inline NodeTestCase gemm(const std::string &name, std::vector<int64_t> da, std::vector<int64_t> db,
                         std::optional<std::vector<int64_t>> dc, bool trans_a, bool trans_b,
                         std::optional<float> alpha, std::optional<float> beta, bool zero_c = false,
                         std::optional<float> c_value = std::nullopt) {
    const size_t m = size_t(trans_a ? da[1] : da[0]), k = size_t(trans_a ? da[0] : da[1]);
    const size_t n = size_t(trans_b ? db[0] : db[1]);
    const std::vector<float> a = fixed_data(element_count(da)), b = fixed_data_b(element_count(db));
    std::vector<float> c;
    if (dc) {
        c = zero_c ? std::vector<float>(element_count(*dc), 0.0f)
                   : fixed_data_b(element_count(*dc));
        if (c_value) c = {*c_value};
    }
    const float al = alpha.value_or(1.0f), be = beta.value_or(1.0f);
    std::vector<float> y;
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            double s = 0;
            for (size_t q = 0; q < k; ++q)
                s += double(trans_a ? a[q * m + i] : a[i * k + q]) *
                     double(trans_b ? b[j * k + q] : b[q * n + j]);
            double bias = 0;
            if (dc) {
                // C [m, n], [1, n], [n], [1] or []: unidirectional broadcasting.
                const std::vector<int64_t> &d = *dc;
                size_t idx = 0;
                if (d.size() == 2) idx = (d[0] == 1 ? 0 : i) * size_t(d[1]) + (d[1] == 1 ? 0 : j);
                if (d.size() == 1) idx = d[0] == 1 ? 0 : j;
                bias = double(be) * double(c[idx]);
            }
            y.push_back(float(double(al) * s + bias));
        }
    std::vector<onnx::AttributeProto> attributes;
    if (alpha) attributes.push_back(testkit::attr_float("alpha", *alpha));
    if (beta) attributes.push_back(testkit::attr_float("beta", *beta));
    if (trans_a) attributes.push_back(attr_int("transA", 1));
    if (trans_b) attributes.push_back(attr_int("transB", 1));
    std::vector<NodeTestTensor> inputs = {f32("a", da, a), f32("b", db, b)};
    if (dc) inputs.push_back(f32("c", *dc, c));
    return {"test_gemm_" + name,
            7,
            13,
            "Gemm",
            std::move(attributes),
            std::move(inputs),
            {f32("y", {int64_t(m), int64_t(n)}, y)}};
}

inline std::vector<double> softmax_loop(const std::vector<float> &x,
                                        const std::vector<int64_t> &dims, size_t axis) {
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= size_t(dims[d]);
    for (size_t d = axis + 1; d < dims.size(); ++d) inner *= size_t(dims[d]);
    const size_t len = size_t(dims[axis]);
    std::vector<double> y(x.size());
    for (size_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < inner; ++i) {
            double max = -INFINITY, sum = 0;
            for (size_t j = 0; j < len; ++j)
                max = std::max(max, double(x[(o * len + j) * inner + i]));
            for (size_t j = 0; j < len; ++j)
                sum += std::exp(double(x[(o * len + j) * inner + i]) - max);
            for (size_t j = 0; j < len; ++j)
                y[(o * len + j) * inner + i] =
                    std::exp(double(x[(o * len + j) * inner + i]) - max) / sum;
        }
    return y;
}

inline NodeTestCase softmax(const std::string &name, std::vector<int64_t> dims,
                            std::vector<float> x, std::optional<int64_t> axis) {
    const int64_t a = axis.value_or(-1);
    const size_t norm = size_t(a < 0 ? a + int64_t(dims.size()) : a);
    std::vector<onnx::AttributeProto> attributes;
    if (axis) attributes.push_back(attr_int("axis", *axis));
    const std::vector<float> y = rounded(softmax_loop(x, dims, norm));
    return {"test_softmax_" + name,
            7,
            13,
            "Softmax",
            std::move(attributes),
            {f32("x", dims, std::move(x))},
            {f32("y", std::move(dims), y)}};
}

// The mean (or the sum) over `axes` (empty: every axis), sums in double.
inline std::pair<std::vector<int64_t>, std::vector<float>> mean_loop(
    const std::vector<float> &x, const std::vector<int64_t> &dims, std::vector<int64_t> axes,
    bool keepdims, bool mean = true) {
    const size_t r = dims.size();
    std::vector<bool> reduced(r, axes.empty());
    for (int64_t a : axes) reduced[size_t(a < 0 ? a + int64_t(r) : a)] = true;
    std::vector<int64_t> kept;
    for (size_t d = 0; d < r; ++d) kept.push_back(reduced[d] ? 1 : dims[d]);
    std::vector<double> sum(element_count(kept), 0);
    const double per = mean ? double(x.size()) / double(sum.size()) : 1.0;
    for (size_t flat = 0; flat < x.size(); ++flat) {
        size_t rest = flat, out = 0, stride = 1;
        for (size_t d = r; d-- > 0;) {
            const size_t i = rest % size_t(dims[d]);
            rest /= size_t(dims[d]);
            if (!reduced[d]) out += i * stride;
            stride *= size_t(kept[d]);
        }
        sum[out] += double(x[flat]);
    }
    std::vector<float> y;
    for (const double s : sum) y.push_back(float(s / per));
    std::vector<int64_t> shape;
    for (size_t d = 0; d < r; ++d)
        if (!reduced[d] || keepdims) shape.push_back(kept[d]);
    return {shape, y};
}

// ReduceMean-18 (axes an input; none: every axis) or, named _v13_, ReduceMean-13 (an attribute).
inline NodeTestCase reduce_mean(const std::string &name, int64_t opset, const std::vector<float> &x,
                                const std::vector<int64_t> &axes, int64_t keepdims) {
    const std::vector<int64_t> dims = {3, 2, 2};
    const auto [shape, y] = mean_loop(x, dims, axes, keepdims != 0);
    std::vector<onnx::AttributeProto> attributes = {attr_int("keepdims", keepdims)};
    std::vector<NodeTestTensor> inputs = {f32("data", dims, x)};
    if (opset >= 18 && !axes.empty()) inputs.push_back(i64s("axes", axes));
    if (opset < 18 && !axes.empty()) attributes.push_back(attr_ints("axes", axes));
    return {"test_reduce_mean_" + name,
            opset >= 18 ? 8 : 7,
            opset,
            "ReduceMean",
            std::move(attributes),
            std::move(inputs),
            {f32("reduced", shape, y)}};
}

// ReduceSum-13 (axes an input; none: every axis, or with noop_with_empty_axes the input).
inline NodeTestCase reduce_sum(const std::string &name, const std::vector<float> &x,
                               const std::vector<int64_t> &axes, int64_t keepdims,
                               bool noop = false) {
    const std::vector<int64_t> dims = {3, 2, 2};
    auto [shape, y] = mean_loop(x, dims, axes, keepdims != 0, false);
    if (noop) shape = dims, y = x;
    std::vector<onnx::AttributeProto> attributes = {attr_int("keepdims", keepdims)};
    if (noop) attributes.push_back(attr_int("noop_with_empty_axes", 1));
    std::vector<NodeTestTensor> inputs = {f32("data", dims, x)};
    if (!axes.empty() || noop) inputs.push_back(i64s("axes", axes));
    return {"test_reduce_sum_" + name, 7, 13, "ReduceSum", std::move(attributes), std::move(inputs),
            {f32("reduced", shape, y)}};
}

template <class F>
NodeTestCase unary(const std::string &op, const std::string &name, std::vector<int64_t> dims,
                   const std::vector<float> &x, F f) {
    std::vector<float> y;
    for (const float v : x) y.push_back(float(f(double(v))));
    return {"test_" + name, 7, 13, op, {}, {f32("x", dims, x)}, {f32("y", dims, y)}};
}

inline std::vector<float> map_floats(std::vector<float> v, float (*f)(float)) {
    for (float &x : v) x = f(x);
    return v;
}

// x [3, 4, 5] against y of the same shape or, for _bcast, [5].
inline NodeTestCase comparison(const std::string &op, const std::string &name, int64_t opset,
                               bool bcast, bool (*f)(double, double)) {
    const std::vector<int64_t> dx = {3, 4, 5}, dy = bcast ? std::vector<int64_t>{5} : dx;
    const std::vector<float> x = fixed_data(60), y = fixed_data_b(element_count(dy));
    std::vector<uint8_t> z;
    for (size_t i = 0; i < x.size(); ++i) z.push_back(f(double(x[i]), double(y[i % y.size()])));
    return {"test_" + name + (bcast ? "_bcast" : ""),
            opset >= 16 ? 8 : 7,
            opset,
            op,
            {},
            {f32("x", dx, x), f32("y", dy, fixed_data_b(element_count(dy)))},
            {boolean(name, dx, z)}};
}

// NumPy broadcasting of two shapes, and the element of an input of shape `in` that element
// `flat` of the broadcast shape `out` reads.
inline std::vector<int64_t> broadcast_dims(const std::vector<int64_t> &a,
                                           const std::vector<int64_t> &b) {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r, 1);
    for (const auto *s : {&a, &b})
        for (size_t i = 0; i < s->size(); ++i)
            if ((*s)[i] != 1) out[r - s->size() + i] = (*s)[i];
    return out;
}
inline size_t source_index(size_t flat, const std::vector<int64_t> &out,
                           const std::vector<int64_t> &in) {
    size_t offset = 0, stride = 1;
    for (size_t back = 0; back < out.size(); ++back) {
        const size_t d = out.size() - 1 - back;
        const size_t k = flat % size_t(out[d]);
        flat /= size_t(out[d]);
        if (back >= in.size()) continue;
        const size_t dim = size_t(in[in.size() - 1 - back]);
        if (dim != 1) offset += k * stride;
        stride *= dim;
    }
    return offset;
}

// And, Or: x of dx and y of dy, broadcast.
inline NodeTestCase logical(const std::string &op, const std::string &name, std::vector<int64_t> dx,
                            std::vector<int64_t> dy, bool is_and) {
    const std::vector<uint8_t> x = fixed_bools(element_count(dx), 1);
    const std::vector<uint8_t> y = fixed_bools(element_count(dy), 2);
    const std::vector<int64_t> dz = broadcast_dims(dx, dy);
    std::vector<uint8_t> z;
    for (size_t i = 0; i < element_count(dz); ++i) {
        const bool u = x[source_index(i, dz, dx)], v = y[source_index(i, dz, dy)];
        z.push_back(is_and ? (u && v) : (u || v));
    }
    const std::string out = is_and ? "and" : "or";
    return {"test_" + name,       3, 7, op, {}, {boolean("x", dx, x), boolean("y", dy, y)},
            {boolean(out, dz, z)}};
}

inline NodeTestCase not_case(const std::string &name, std::vector<int64_t> dims) {
    const std::vector<uint8_t> x = fixed_bools(element_count(dims), 3);
    std::vector<uint8_t> y;
    for (const uint8_t v : x) y.push_back(!v);
    return {"test_not_" + name,       3, 1, "Not", {}, {boolean("x", dims, x)},
            {boolean("not", dims, y)}};
}

inline std::vector<NodeTestCase> decoder_op_cases() {
    std::vector<NodeTestCase> cases = {
        matmul("2d", {}, 3, 4, 3),
        matmul("3d", {2}, 3, 4, 3),
        matmul("4d", {1, 2}, 3, 4, 3),
        gemm("all_attributes", {4, 3}, {5, 4}, std::vector<int64_t>{1, 5}, true, true, 0.25f,
             0.35f),
        gemm("alpha", {3, 5}, {5, 4}, std::vector<int64_t>{1, 4}, false, false, 0.5f, std::nullopt,
             true),
        gemm("beta", {2, 7}, {7, 4}, std::vector<int64_t>{1, 4}, false, false, std::nullopt, 0.5f),
        gemm("default_matrix_bias", {3, 6}, {6, 4}, std::vector<int64_t>{3, 4}, false, false,
             std::nullopt, std::nullopt),
        gemm("default_no_bias", {2, 10}, {10, 3}, std::nullopt, false, false, std::nullopt,
             std::nullopt),
        gemm("default_scalar_bias", {2, 3}, {3, 4}, std::vector<int64_t>{}, false, false,
             std::nullopt, std::nullopt, false, 3.14f),
        gemm("default_single_elem_vector_bias", {3, 7}, {7, 3}, std::vector<int64_t>{1}, false,
             false, std::nullopt, std::nullopt),
        gemm("default_vector_bias", {2, 7}, {7, 4}, std::vector<int64_t>{1, 4}, false, false,
             std::nullopt, std::nullopt),
        gemm("default_zero_bias", {3, 5}, {5, 4}, std::vector<int64_t>{1, 4}, false, false,
             std::nullopt, std::nullopt, true),
        gemm("transposeA", {6, 3}, {6, 4}, std::vector<int64_t>{1, 4}, true, false, std::nullopt,
             std::nullopt, true),
        gemm("transposeB", {3, 6}, {4, 6}, std::vector<int64_t>{1, 4}, false, true, std::nullopt,
             std::nullopt, true),
        softmax("example", {1, 3}, {-1, 0, 1}, std::nullopt),
        softmax("large_number", {2, 4}, {0, 1, 2, 3, 10000, 10001, 10002, 10003}, std::nullopt),
        softmax("axis_0", {3, 4, 5}, fixed_data(60), 0),
        softmax("axis_1", {3, 4, 5}, fixed_data(60), 1),
        softmax("axis_2", {3, 4, 5}, fixed_data(60), 2),
        softmax("negative_axis", {3, 4, 5}, fixed_data(60), -1),
        softmax("default_axis", {3, 4, 5}, fixed_data(60), std::nullopt),
    };
    // ReduceMean: the spec's example data, and fixed data for the _random tests.
    const std::vector<float> example = {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2};
    for (const auto &[suffix, data] :
         {std::pair<std::string, std::vector<float>>{"example", example},
          {"random", fixed_data(12)}}) {
        cases.push_back(reduce_mean("do_not_keepdims_" + suffix, 18, data, {1}, 0));
        cases.push_back(reduce_mean("keepdims_" + suffix, 18, data, {1}, 1));
        cases.push_back(reduce_mean("negative_axes_keepdims_" + suffix, 18, data, {-2}, 1));
        cases.push_back(reduce_mean("default_axes_keepdims_" + suffix, 18, data, {}, 1));
        cases.push_back(reduce_mean("v13_do_not_keepdims_" + suffix, 13, data, {1}, 0));
        cases.push_back(reduce_mean("v13_negative_axes_keepdims_" + suffix, 13, data, {-2}, 1));
        cases.push_back(reduce_mean("v13_default_axes_keepdims_" + suffix, 13, data, {}, 1));
        cases.push_back(reduce_sum("do_not_keepdims_" + suffix, data, {1}, 0));
        cases.push_back(reduce_sum("keepdims_" + suffix, data, {1}, 1));
        cases.push_back(reduce_sum("negative_axes_keepdims_" + suffix, data, {-2}, 1));
        cases.push_back(reduce_sum("default_axes_keepdims_" + suffix, data, {}, 1));
        cases.push_back(reduce_sum("empty_axes_input_noop_" + suffix, data, {}, 1, true));
    }
    // Sqrt, Tanh, Sigmoid, Exp, Reciprocal: the examples, and [3, 4, 5] of fixed data.
    const std::vector<float> x = fixed_data(60);
    const auto sqrt_f = [](double v) { return std::sqrt(v); };
    const auto tanh_f = [](double v) { return std::tanh(v); };
    const auto sigmoid_f = [](double v) { return 1 / (1 + std::exp(-v)); };
    const auto exp_f = [](double v) { return std::exp(v); };
    const auto reciprocal_f = [](double v) { return 1 / v; };
    const std::vector<float> neg_zero_one = {-1, 0, 1};
    cases.push_back(unary("Sqrt", "sqrt_example", {3}, {1, 4, 9}, sqrt_f));
    cases.push_back(unary("Sqrt", "sqrt", {3, 4, 5},
                          map_floats(x, [](float v) { return std::fabs(v); }), sqrt_f));
    cases.push_back(unary("Tanh", "tanh_example", {3}, neg_zero_one, tanh_f));
    cases.push_back(unary("Tanh", "tanh", {3, 4, 5}, x, tanh_f));
    cases.push_back(unary("Sigmoid", "sigmoid_example", {3}, neg_zero_one, sigmoid_f));
    cases.push_back(unary("Sigmoid", "sigmoid", {3, 4, 5}, x, sigmoid_f));
    cases.push_back(unary("Exp", "exp_example", {3}, neg_zero_one, exp_f));
    cases.push_back(unary("Exp", "exp", {3, 4, 5}, x, exp_f));
    cases.push_back(unary("Reciprocal", "reciprocal_example", {2}, {-4, 2}, reciprocal_f));
    cases.push_back(unary("Reciprocal", "reciprocal", {3, 4, 5},
                          map_floats(x, [](float v) { return v + 2.5f; }), reciprocal_f));
    // Greater-13, Less-13, GreaterOrEqual-16, LessOrEqual-16.
    for (const bool bcast : {false, true}) {
        cases.push_back(
            comparison("Greater", "greater", 13, bcast, [](double a, double b) { return a > b; }));
        cases.push_back(
            comparison("Less", "less", 13, bcast, [](double a, double b) { return a < b; }));
        cases.push_back(comparison("GreaterOrEqual", "greater_equal", 16, bcast,
                                   [](double a, double b) { return a >= b; }));
        cases.push_back(comparison("LessOrEqual", "less_equal", 16, bcast,
                                   [](double a, double b) { return a <= b; }));
    }
    // And-7, Or-7, Not-1.
    for (const bool is_and : {true, false}) {
        const std::string op = is_and ? "And" : "Or", n = is_and ? "and" : "or";
        cases.push_back(logical(op, n + "2d", {3, 4}, {3, 4}, is_and));
        cases.push_back(logical(op, n + "3d", {3, 4, 5}, {3, 4, 5}, is_and));
        cases.push_back(logical(op, n + "4d", {3, 4, 5, 6}, {3, 4, 5, 6}, is_and));
        cases.push_back(logical(op, n + "_bcast3v1d", {3, 4, 5}, {5}, is_and));
        cases.push_back(logical(op, n + "_bcast3v2d", {3, 4, 5}, {4, 5}, is_and));
        cases.push_back(logical(op, n + "_bcast4v2d", {3, 4, 5, 6}, {5, 6}, is_and));
        cases.push_back(logical(op, n + "_bcast4v3d", {3, 4, 5, 6}, {4, 5, 6}, is_and));
        cases.push_back(logical(op, n + "_bcast4v4d", {1, 4, 1, 6}, {3, 1, 5, 6}, is_and));
    }
    cases.push_back(not_case("2d", {3, 4}));
    cases.push_back(not_case("3d", {3, 4, 5}));
    cases.push_back(not_case("4d", {3, 4, 5, 6}));
    // Expand-13: data 1..3 of shape [3, 1].
    const std::vector<float> one_to_three = {1, 2, 3};
    std::vector<float> changed, unchanged;
    for (int r = 0; r < 2; ++r)
        for (const float v : one_to_three) append(changed, 6, v);
    for (const float v : one_to_three) append(unchanged, 4, v);
    cases.push_back({"test_expand_dim_changed",
                     7,
                     13,
                     "Expand",
                     {},
                     {f32("data", {3, 1}, one_to_three), i64s("new_shape", {2, 1, 6})},
                     {f32("expanded", {2, 3, 6}, changed)}});
    cases.push_back({"test_expand_dim_unchanged",
                     7,
                     13,
                     "Expand",
                     {},
                     {f32("data", {3, 1}, one_to_three), i64s("new_shape", {3, 4})},
                     {f32("expanded", {3, 4}, unchanged)}});
    // Squeeze-13: the data is the input's, in the same order.
    const std::vector<float> sq = fixed_data(60), sq_neg = fixed_data(15);
    cases.push_back({"test_squeeze",
                     7,
                     13,
                     "Squeeze",
                     {},
                     {f32("x", {1, 3, 4, 5}, sq), i64s("axes", {0})},
                     {f32("y", {3, 4, 5}, sq)}});
    cases.push_back({"test_squeeze_negative_axes",
                     7,
                     13,
                     "Squeeze",
                     {},
                     {f32("x", {1, 3, 1, 5}, sq_neg), i64s("axes", {-2})},
                     {f32("y", {1, 3, 5}, sq_neg)}});
    return cases;
}

// --- writing ---

inline void set_type(onnx::ValueInfoProto &v, const NodeTestTensor &t) {
    v.set_name(t.name);
    auto &tensor_type = *v.mutable_type()->mutable_tensor_type();
    tensor_type.set_elem_type(int32_t(t.type));
    auto &shape = *tensor_type.mutable_shape();  // present, and empty for a scalar
    for (const int64_t d : t.dims) shape.add_dim()->set_dim_value(d);
}

inline onnx::TensorProto to_proto(const NodeTestTensor &t) {
    onnx::TensorProto p;
    for (const int64_t d : t.dims) p.add_dims(d);
    p.set_data_type(int32_t(t.type));
    p.set_name(t.name);
    p.set_raw_data(t.raw);
    return p;
}

// --- The selections a mixture of experts routes with: the ONNX backend tests of TopK-11
// (top_k.py), NonZero-9 (nonzero.py) and ScatterND-11/16/18 (scatternd.py), their expected
// outputs worked out here as numpy's reference does ---

inline std::vector<NodeTestCase> selection_cases() {
    std::vector<NodeTestCase> cases;
    auto i64 = [](const std::string &name, std::vector<int64_t> dims,
                  const std::vector<int64_t> &v) {
        return tensor(name, DataType::int64, std::move(dims), v);
    };
    // TopK: the 3 largest (or smallest) of each row, sorted, ties lowest index first.
    const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    for (const auto &[name, axis] :
         {std::pair<std::string, int64_t>{"test_top_k", 1}, {"test_top_k_negative_axis", -1}})
        cases.push_back({name,
                         6,
                         11,
                         "TopK",
                         {attr_int("axis", axis)},
                         {f32("x", {3, 4}, x), i64("k", {1}, {3})},
                         {f32("values", {3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9}),
                          i64("indices", {3, 3}, {3, 2, 1, 3, 2, 1, 3, 2, 1})}});
    cases.push_back({"test_top_k_smallest",
                     6,
                     11,
                     "TopK",
                     {attr_int("axis", 1), attr_int("largest", 0), attr_int("sorted", 1)},
                     {f32("x", {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8}), i64("k", {1}, {3})},
                     {f32("values", {3, 3}, {0, 1, 2, 4, 5, 6, 8, 9, 10}),
                      i64("indices", {3, 3}, {0, 1, 2, 0, 1, 2, 3, 2, 1})}});
    // NonZero: the indices of [[1, 0], [1, 1]]'s true elements, one row per axis.
    cases.push_back(
        {"test_nonzero_example",
         6,
         9,
         "NonZero",
         {},
         {tensor("condition", DataType::bool_, {2, 2}, std::vector<uint8_t>{1, 0, 1, 1})},
         {i64("result", {2, 3}, {0, 1, 1, 0, 0, 1})}});
    // ScatterND: slices of a [4, 4, 4] replaced, or combined, by two updates.
    const std::vector<float> block = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
    const std::vector<float> flipped = {8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> data;
    for (const auto *b : {&block, &block, &flipped, &flipped})
        data.insert(data.end(), b->begin(), b->end());
    std::vector<float> u0, u1;
    for (float v : {5.f, 6.f, 7.f, 8.f}) append(u0, 4, v);
    for (float v : {1.f, 2.f, 3.f, 4.f}) append(u1, 4, v);
    std::vector<float> updates = u0;
    updates.insert(updates.end(), u1.begin(), u1.end());
    // Replaced: slices 0 and 2.
    std::vector<float> replaced = data;
    std::copy(u0.begin(), u0.end(), replaced.begin());
    std::copy(u1.begin(), u1.end(), replaced.begin() + 32);
    cases.push_back({"test_scatternd",
                     6,
                     11,
                     "ScatterND",
                     {},
                     {f32("data", {4, 4, 4}, data), i64("indices", {2, 1}, {0, 2}),
                      f32("updates", {2, 4, 4}, updates)},
                     {f32("y", {4, 4, 4}, replaced)}});
    // Reduced: both updates into slice 0.
    const std::pair<const char *, float (*)(float, float)> reductions[] = {
        {"add", [](float a, float b) { return a + b; }},
        {"mul", [](float a, float b) { return a * b; }},
        {"max", [](float a, float b) { return std::max(a, b); }},
        {"min", [](float a, float b) { return std::min(a, b); }},
    };
    for (const auto &[reduction, f] : reductions) {
        std::vector<float> y = data;
        for (size_t j = 0; j < 16; ++j) y[j] = f(f(y[j], u0[j]), u1[j]);
        const std::string r = reduction;
        cases.push_back({"test_scatternd_" + (r == "mul" ? std::string("multiply") : r),
                         8,
                         r == "max" || r == "min" ? 18 : 16,
                         "ScatterND",
                         {attr_string("reduction", r)},
                         {f32("data", {4, 4, 4}, data), i64("indices", {2, 1}, {0, 0}),
                          f32("updates", {2, 4, 4}, updates)},
                         {f32("y", {4, 4, 4}, y)}});
    }
    return cases;
}

}  // namespace detail

inline std::vector<NodeTestCase> node_test_cases() {
    std::vector<NodeTestCase> cases;
    for (auto part :
         {detail::dequantize_packed_cases(), detail::unpack_cases(), detail::unsqueeze_cases(),
          detail::one_hot_cases(), detail::decoder_op_cases(), detail::selection_cases()})
        cases.insert(cases.end(), part.begin(), part.end());
    return cases;
}

// The one-node model of `c`: attributes in name order (as ONNX's make_node writes them), every
// input and output declared with its type and shape, no node name and no producer.
inline onnx::ModelProto model_of(const NodeTestCase &c) {
    onnx::ModelProto m;
    m.set_ir_version(c.ir_version);
    onnx::GraphProto &g = *m.mutable_graph();
    onnx::NodeProto &n = *g.add_node();
    for (const NodeTestTensor &t : c.inputs) n.add_input(t.name);
    for (const NodeTestTensor &t : c.outputs) n.add_output(t.name);
    n.set_op_type(c.op);
    std::vector<onnx::AttributeProto> attributes = c.attributes;
    std::sort(attributes.begin(), attributes.end(),
              [](const auto &a, const auto &b) { return a.name() < b.name(); });
    for (const auto &a : attributes) *n.add_attribute() = a;
    g.set_name(c.name);
    for (const NodeTestTensor &t : c.inputs) detail::set_type(*g.add_input(), t);
    for (const NodeTestTensor &t : c.outputs) detail::set_type(*g.add_output(), t);
    auto &opset = *m.add_opset_import();
    opset.set_domain("");
    opset.set_version(c.opset);
    return m;
}

// Writes every case under `dir` (created if needed); returns how many.
inline size_t write_node_tests(const std::filesystem::path &dir) {
    namespace fs = std::filesystem;
    const std::vector<NodeTestCase> cases = node_test_cases();
    for (const NodeTestCase &c : cases) {
        const fs::path data = dir / c.name / "test_data_set_0";
        fs::create_directories(data);
        write_file(dir / c.name / "model.onnx", model_of(c).SerializeAsString());
        for (size_t k = 0; k < c.inputs.size(); ++k)
            write_file(data / ("input_" + std::to_string(k) + ".pb"),
                       detail::to_proto(c.inputs[k]).SerializeAsString());
        for (size_t k = 0; k < c.outputs.size(); ++k)
            write_file(data / ("output_" + std::to_string(k) + ".pb"),
                       detail::to_proto(c.outputs[k]).SerializeAsString());
    }
    return cases.size();
}

}  // namespace gguftool::testkit
