// The repository's ONNX backend node tests (testdata/node-tests), in ONNX's layout:
// test_<name>/model.onnx (one node) and test_<name>/test_data_set_0/{input,output}_K.pb.
//
//   - every example printed in the DequantizePacked-29 and Unpack-29 specs;
//   - the Unsqueeze-13 examples (one axis 0..3, two, three, unsorted and negative axes) with
//     fixed data in place of the spec's random inputs, and Unsqueeze-1 with attribute axes;
//   - OneHot-11 as in ONNX's own node tests (with and without axis, negative axis and indices).
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
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gguftool/data_type.hpp"
#include "onnx_builder.hpp"

namespace gguftool::node_tests {

// One tensor of a test: name, ONNX element type, dimensions and little-endian bytes.
struct Tensor {
    std::string name;
    DataType type;
    std::vector<int64_t> dims;
    std::string raw;
};

struct Case {
    std::string name;  // directory name, test_<...>
    int64_t ir_version;
    int64_t opset;  // of the default domain
    std::string op;
    std::vector<onnx::AttributeProto> attributes;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
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
Tensor tensor(const std::string &name, DataType type, std::vector<int64_t> dims,
              const std::vector<T> &values) {
    return {name, type, std::move(dims), le_bytes(values)};
}
inline Tensor f32(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &v) {
    return tensor(name, DataType::float32, std::move(dims), v);
}
inline Tensor u8(const std::string &name, std::vector<int64_t> dims,
                 const std::vector<uint8_t> &v) {
    return tensor(name, DataType::uint8, std::move(dims), v);
}
inline Tensor i64_scalar(const std::string &name, int64_t v) {
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

inline Case dequantize(const std::string &name, std::vector<onnx::AttributeProto> attributes,
                       const std::vector<uint8_t> &x, Tensor y) {
    return {"test_dequantizepacked_" + name,
            8,
            29,
            "DequantizePacked",
            std::move(attributes),
            {u8("x", {int64_t(x.size())}, x)},
            {std::move(y)}};
}

inline std::vector<Case> dequantize_packed_cases() {
    std::vector<Case> cases;

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

inline Case unpack(const std::string &name, std::vector<onnx::AttributeProto> attributes, Tensor x,
                   int64_t count, Tensor y) {
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

inline std::vector<Case> unpack_cases() {
    std::vector<Case> cases;
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
inline Case unsqueeze(const std::string &name, const std::vector<int64_t> &x_dims,
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

inline std::vector<Case> unsqueeze_cases() {
    // The output shapes are written out from the rule: a 1 at each axis of the output.
    std::vector<Case> cases = {
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
inline Case one_hot_float(const std::string &name, std::optional<int64_t> axis) {
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
Case one_hot_int64(const std::string &name, const std::vector<int64_t> &indices, int64_t depth,
                   DataType value_type, T off_value, T on_value) {
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

inline std::vector<Case> one_hot_cases() {
    return {one_hot_float("with_axis", 1), one_hot_float("with_negative_axis", -2),
            one_hot_int64<int32_t>("without_axis", {0, 7, 8}, 12, DataType::int32, 2, 5),
            one_hot_int64<float>("negative_indices", {0, -7, -8}, 10, DataType::float32, 1, 3)};
}

// --- writing ---

inline void set_type(onnx::ValueInfoProto &v, const Tensor &t) {
    v.set_name(t.name);
    auto &tensor_type = *v.mutable_type()->mutable_tensor_type();
    tensor_type.set_elem_type(int32_t(t.type));
    auto &shape = *tensor_type.mutable_shape();  // present, and empty for a scalar
    for (const int64_t d : t.dims) shape.add_dim()->set_dim_value(d);
}

inline onnx::TensorProto to_proto(const Tensor &t) {
    onnx::TensorProto p;
    for (const int64_t d : t.dims) p.add_dims(d);
    p.set_data_type(int32_t(t.type));
    p.set_name(t.name);
    p.set_raw_data(t.raw);
    return p;
}

inline void write_bytes(const std::filesystem::path &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace detail

inline std::vector<Case> all_cases() {
    std::vector<Case> cases;
    for (auto part : {detail::dequantize_packed_cases(), detail::unpack_cases(),
                      detail::unsqueeze_cases(), detail::one_hot_cases()})
        cases.insert(cases.end(), part.begin(), part.end());
    return cases;
}

// The one-node model of `c`: attributes in name order (as ONNX's make_node writes them), every
// input and output declared with its type and shape, no node name and no producer.
inline onnx::ModelProto model_of(const Case &c) {
    onnx::ModelProto m;
    m.set_ir_version(c.ir_version);
    onnx::GraphProto &g = *m.mutable_graph();
    onnx::NodeProto &n = *g.add_node();
    for (const Tensor &t : c.inputs) n.add_input(t.name);
    for (const Tensor &t : c.outputs) n.add_output(t.name);
    n.set_op_type(c.op);
    std::vector<onnx::AttributeProto> attributes = c.attributes;
    std::sort(attributes.begin(), attributes.end(),
              [](const auto &a, const auto &b) { return a.name() < b.name(); });
    for (const auto &a : attributes) *n.add_attribute() = a;
    g.set_name(c.name);
    for (const Tensor &t : c.inputs) detail::set_type(*g.add_input(), t);
    for (const Tensor &t : c.outputs) detail::set_type(*g.add_output(), t);
    auto &opset = *m.add_opset_import();
    opset.set_domain("");
    opset.set_version(c.opset);
    return m;
}

// Writes every case under `dir` (created if needed); returns how many.
inline size_t write_all(const std::filesystem::path &dir) {
    namespace fs = std::filesystem;
    const std::vector<Case> cases = all_cases();
    for (const Case &c : cases) {
        const fs::path data = dir / c.name / "test_data_set_0";
        fs::create_directories(data);
        detail::write_bytes(dir / c.name / "model.onnx", model_of(c).SerializeAsString());
        for (size_t k = 0; k < c.inputs.size(); ++k)
            detail::write_bytes(data / ("input_" + std::to_string(k) + ".pb"),
                                detail::to_proto(c.inputs[k]).SerializeAsString());
        for (size_t k = 0; k < c.outputs.size(); ++k)
            detail::write_bytes(data / ("output_" + std::to_string(k) + ".pb"),
                                detail::to_proto(c.outputs[k]).SerializeAsString());
    }
    return cases.size();
}

}  // namespace gguftool::node_tests
