// Helpers for the to-onnx tests: GGUF files with llama.cpp-quantized tensors, loading and checking
// exported models with ONNX's checker and shape inference, running them with the runtime, and
// llama.cpp's own decode as the expected values.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../quant/quant_test_util.hpp"
#include "ggml_data.hpp"
#include "gguf_test_support.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/runtime.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

namespace gguftool::onnxtest {

using testkit::TempDir;
namespace fs = std::filesystem;

// The ten formats with an Unpack form.
inline const std::vector<GgmlType> kUnpackFormats = {
    GgmlType::q4_0, GgmlType::q4_1, GgmlType::q5_0,  GgmlType::q5_1,   GgmlType::q8_0,
    GgmlType::q1_0, GgmlType::q2_0, GgmlType::tq2_0, GgmlType::iq4_nl, GgmlType::mxfp4};

inline std::string param_name(const testing::TestParamInfo<GgmlType> &info) {
    return type_name(info.param);
}

using testkit::llama;  // llama.cpp, or a failed test

// `rows` rows of `n_per_row` values of `dist`, quantized to `type` by llama.cpp (with an importance
// matrix where the type needs one).
inline std::vector<uint8_t> llama_quantized(GgmlType type, size_t rows, size_t n_per_row,
                                            testkit::Distribution dist, uint64_t seed) {
    const reference::Ggml &g = llama();
    const std::vector<float> values = testkit::make_values(dist, rows * n_per_row, seed);
    const std::vector<float> imatrix = testkit::requires_imatrix(g, type)
                                           ? testkit::make_imatrix(n_per_row, seed + 1)
                                           : std::vector<float>{};
    testkit::Quantized q = testkit::quantize_with_llama(g, type, values, n_per_row, imatrix);
    if (q.bytes.empty()) throw std::runtime_error(q.failure);
    return q.bytes;
}

// llama.cpp's FLOAT decode (the kit's, gguf_test_support.hpp).
using testkit::llama_decode;

struct TensorSpec {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> dims;  // ggml order
    std::vector<uint8_t> bytes;
};

inline void write_gguf(const std::string &path, const std::vector<TensorSpec> &tensors,
                       gguf::Writer w = gguf::Writer()) {
    for (const TensorSpec &t : tensors) w.add_tensor(t.name, t.type, t.dims, t.bytes);
    w.write(path);
}

inline uint64_t elements_of(const std::vector<uint64_t> &dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    return n;
}

using testkit::load_model;

// ONNX's checker (external data located beside the model) and strict shape inference, with the
// opset-29 schemas registered. Returns the model with inferred shapes.
inline onnx::ModelProto check_model(const std::string &path) {
    opset29::register_schemas();
    onnx::checker::check_model(path);
    onnx::ModelProto m = load_model(path);
    onnx::ShapeInferenceOptions strict{true, 1, false};
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), strict);
    return m;
}

inline const onnx::TensorProto *find_initializer(const onnx::ModelProto &m,
                                                 const std::string &name) {
    for (const onnx::TensorProto &t : m.graph().initializer())
        if (t.name() == name) return &t;
    return nullptr;
}

inline const onnx::NodeProto *producer(const onnx::ModelProto &m, const std::string &output) {
    for (const onnx::NodeProto &n : m.graph().node())
        for (const std::string &o : n.output())
            if (o == output) return &n;
    return nullptr;
}

inline size_t count_ops(const onnx::ModelProto &m, const std::string &op) {
    size_t n = 0;
    for (const onnx::NodeProto &node : m.graph().node()) n += node.op_type() == op;
    return n;
}

inline const onnx::AttributeProto *attribute(const onnx::NodeProto &n, const std::string &name) {
    for (const onnx::AttributeProto &a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

// Runs the exported model with the runtime: every graph output by name.
inline std::map<std::string, runtime::Tensor> run(const std::string &path) {
    std::map<std::string, runtime::Tensor> out;
    for (auto &[name, t] : runtime::run_model(path)) out[name] = t;
    return out;
}

// The kit's bit-for-bit comparison (gguf_test_support.hpp).
using testkit::Nans;
using testkit::same_bits;

inline std::vector<float> floats(const runtime::Tensor &t) {
    EXPECT_EQ(t.dtype(), DataType::float32);
    return t.to_vector<float>();
}

using testkit::read_file;

using testkit::dir_entries;
using CliResult = testkit::ProcessResult;

// Runs the built gguftool with `args` in a child process, optionally under a file size limit.
inline CliResult run_cli(const std::vector<std::string> &args,
                         std::optional<rlim_t> file_size_limit = std::nullopt) {
    std::vector<std::string> argv = {GGUFTOOL_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    testkit::ProcessOptions o;
    o.file_size_limit = file_size_limit;
    return testkit::run(argv, o);
}

}  // namespace gguftool::onnxtest
