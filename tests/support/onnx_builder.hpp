// The test kit's one ONNX model builder: node attributes by name and value, and a model under
// construction (one graph, the default domain at an opset) with nodes, inputs, outputs and
// initializers; DequantizePacked nodes. For the tests' models, the benchmarks', the fuzz seeds'
// and tests/support/node_tests.hpp's.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/runtime/session.hpp"
#include "gguftool/types.hpp"

namespace gguftool::testkit {

onnx::AttributeProto attr_int(const std::string &name, int64_t v);
onnx::AttributeProto attr_ints(const std::string &name, const std::vector<int64_t> &v);
onnx::AttributeProto attr_string(const std::string &name, const std::string &v);
onnx::AttributeProto attr_float(const std::string &name, float v);
onnx::AttributeProto attr_tensor(const std::string &name, const runtime::Tensor &t);

// A model under construction: one graph named `graph_name`, the default domain at `opset`.
class ModelBuilder {
public:
    explicit ModelBuilder(int64_t opset = 29, const std::string &graph_name = "test",
                          int64_t ir_version = 8);

    // A node; unnamed, it is called "<op>_node".
    onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs,
                          std::initializer_list<onnx::AttributeProto> attrs = {},
                          const std::string &name = "");
    // A DequantizePacked node decoding `input` (bytes of `type`) to `output` of `shape` (ONNX
    // order) and `dtype`.
    onnx::NodeProto &dequantize_packed(const std::string &name, const std::string &input,
                                       const std::string &output, GgmlType type,
                                       const std::vector<int64_t> &shape, DataType dtype);
    // A graph input (dtype undefined: undeclared, no shape).
    ModelBuilder &input(const std::string &name, DataType dtype = DataType::undefined);
    // ... with dims (a negative one is the symbolic "N").
    ModelBuilder &input(const std::string &name, DataType dtype, const std::vector<int64_t> &dims);
    // A graph output by name only, or typed with its dims.
    ModelBuilder &output(const std::string &name);
    ModelBuilder &output(const std::string &name, DataType dtype, const std::vector<int64_t> &dims);
    ModelBuilder &initializer(const std::string &name, const runtime::Tensor &t);
    // A UINT8 initializer [bytes.size()] holding `bytes` as raw data.
    ModelBuilder &bytes_initializer(const std::string &name, const std::vector<uint8_t> &bytes);
    onnx::TensorProto &initializer_proto(const std::string &name);

    onnx::ModelProto &proto() { return proto_; }
    const onnx::ModelProto &proto() const { return proto_; }
    runtime::Model model(const std::string &base_dir = ".") const;
    // Writes the serialized model; throws std::runtime_error when it cannot.
    void save(const std::string &path) const;

private:
    onnx::ModelProto proto_;
};

// Writes `m` serialized to `path`; throws std::runtime_error when it cannot.
void save_model(const onnx::ModelProto &m, const std::filesystem::path &path);

// The model serialized in `path`; throws std::runtime_error naming it when it cannot be read or
// parsed.
onnx::ModelProto load_model(const std::filesystem::path &path);

}  // namespace gguftool::testkit
