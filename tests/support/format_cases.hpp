// DequantizePacked test cases for every quantized format: llama.cpp-quantized values (imatrix
// where the type requires one), random bytes (NaN, Inf and subnormal scales, every code) and an
// empty tensor, each with llama.cpp's decode; and the opset-29 model that decodes them.
// Header-only; used by the onnxruntime and the Ascend backend tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ggml_data.hpp"
#include "gguftool/data_type.hpp"
#include "gguftool/opset29.hpp"
#include "gguftool/reference.hpp"

namespace gguftool::testdata {

constexpr int64_t kRows = 2, kRowElements = 1024;

struct Case {
    std::string name;  // output name
    GgmlType type;
    std::vector<int64_t> shape;  // ONNX order
    std::vector<uint8_t> bytes;
    std::vector<float> want;  // llama.cpp's decode
};

inline std::vector<float> llama_decode(GgmlType type, const std::vector<uint8_t> &bytes, size_t n) {
    const reference::Ggml &g = *reference::ggml();
    std::vector<float> out(n);
    if (n) g.dequantize_row[uint32_t(type)](bytes.data(), out.data(), int64_t(n));
    return out;
}

// ggml has no q8_1 decoder; its definition is q8_0's values with `s` dropped (formats/SPEC.md).
inline std::vector<float> reference_decode(GgmlType type, const std::vector<uint8_t> &bytes,
                                           size_t n) {
    if (type != GgmlType::q8_1) return llama_decode(type, bytes, n);
    std::vector<uint8_t> q8_0;
    for (size_t k = 0; k < bytes.size(); k += 36) {
        q8_0.insert(q8_0.end(), bytes.begin() + k, bytes.begin() + k + 2);
        q8_0.insert(q8_0.end(), bytes.begin() + k + 4, bytes.begin() + k + 36);
    }
    return llama_decode(GgmlType::q8_0, q8_0, n);
}

inline const std::vector<Case> &cases() {
    static const std::vector<Case> all = [] {
        std::vector<Case> out;
        const reference::Ggml &g = *reference::ggml();
        const size_t n = size_t(kRows * kRowElements);
        for (GgmlType t : quantized_types()) {
            const std::string name = type_name(t);
            const std::vector<float> values = make_values(Distribution::normal, n, 7);
            Quantized q = quantize_with_llama(g, t, values, size_t(kRowElements),
                                              make_imatrix(kRowElements, 3));
            if (!q.bytes.empty())
                out.push_back({name + "_llama",
                               t,
                               {kRows, kRowElements},
                               q.bytes,
                               reference_decode(t, q.bytes, n)});
            std::vector<uint8_t> random = random_bytes(*row_bytes(t, n), 11 + uint32_t(t));
            out.push_back({name + "_random",
                           t,
                           {kRows, kRowElements},
                           random,
                           reference_decode(t, random, n)});
            out.push_back({name + "_empty", t, {0, int64_t(traits(t).block_size)}, {}, {}});
        }
        return out;
    }();
    return all;
}

// A model of one DequantizePacked node per case (x an initializer), at opset 29. With
// `widen_bfloat16`, a bfloat16 output goes through one Cast to FLOAT (onnxruntime-node cannot hand
// bfloat16 tensors back; the widening is exact) and the graph output is "<name>_as_float".
inline onnx::ModelProto packed_model(DataType dtype, const std::vector<const Case *> &chosen,
                                     bool widen_bfloat16 = true) {
    onnx::ModelProto m;
    m.set_ir_version(10);
    auto *o = m.add_opset_import();
    o->set_domain("");
    o->set_version(29);
    onnx::GraphProto &g = *m.mutable_graph();
    g.set_name("formats");
    for (const Case *cp : chosen) {
        const Case &c = *cp;
        onnx::TensorProto &x = *g.add_initializer();
        x.set_name(c.name + "_x");
        x.set_data_type(onnx_number(DataType::uint8));
        x.add_dims(int64_t(c.bytes.size()));
        x.set_raw_data(std::string(c.bytes.begin(), c.bytes.end()));
        onnx::NodeProto &n = *g.add_node();
        n.set_op_type("DequantizePacked");
        n.set_name(c.name);
        n.add_input(c.name + "_x");
        n.add_output(c.name);
        auto *f = n.add_attribute();
        f->set_name("format");
        f->set_type(onnx::AttributeProto::STRING);
        f->set_s(opset29::format_name(c.type));
        auto *s = n.add_attribute();
        s->set_name("shape");
        s->set_type(onnx::AttributeProto::INTS);
        for (int64_t d : c.shape) s->add_ints(d);
        auto *dt = n.add_attribute();
        dt->set_name("output_dtype");
        dt->set_type(onnx::AttributeProto::INT);
        dt->set_i(onnx_number(dtype));
        std::string out = c.name;
        DataType out_type = dtype;
        if (widen_bfloat16 && dtype == DataType::bfloat16) {  // exactly, for onnxruntime-node
            onnx::NodeProto &cast = *g.add_node();
            cast.set_op_type("Cast");
            cast.add_input(c.name);
            cast.add_output(out = c.name + "_as_float");
            auto *to = cast.add_attribute();
            to->set_name("to");
            to->set_type(onnx::AttributeProto::INT);
            to->set_i(onnx_number(out_type = DataType::float32));
        }
        onnx::ValueInfoProto &v = *g.add_output();
        v.set_name(out);
        auto *tt = v.mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx_number(out_type));
        for (int64_t d : c.shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    return m;
}

// Whether the element at p, of floating type t (little-endian), is a NaN.
inline bool is_nan(const uint8_t *p, DataType t) {
    if (t == DataType::float16) {
        const uint16_t h = uint16_t(p[0] | p[1] << 8);
        return (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    }
    if (t == DataType::bfloat16) {
        const uint16_t h = uint16_t(p[0] | p[1] << 8);
        return (h & 0x7F80) == 0x7F80 && (h & 0x7F);
    }
    if (t == DataType::float64) {
        double d;
        std::memcpy(&d, p, 8);
        return std::isnan(d);
    }
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
}

}  // namespace gguftool::testdata
