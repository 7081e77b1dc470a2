#include "onnx_builder.hpp"

#include <fstream>
#include <stdexcept>

#include "gguftool/opset29.hpp"
#include "gguftool/runtime/tensor_io.hpp"

namespace gguftool::testkit {

namespace {

onnx::AttributeProto attribute(const std::string &name, onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(type);
    return a;
}

}  // namespace

onnx::AttributeProto attr_int(const std::string &name, int64_t v) {
    onnx::AttributeProto a = attribute(name, onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
}

onnx::AttributeProto attr_ints(const std::string &name, const std::vector<int64_t> &v) {
    onnx::AttributeProto a = attribute(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return a;
}

onnx::AttributeProto attr_string(const std::string &name, const std::string &v) {
    onnx::AttributeProto a = attribute(name, onnx::AttributeProto::STRING);
    a.set_s(v);
    return a;
}

onnx::AttributeProto attr_float(const std::string &name, float v) {
    onnx::AttributeProto a = attribute(name, onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
}

onnx::AttributeProto attr_tensor(const std::string &name, const runtime::Tensor &t) {
    onnx::AttributeProto a = attribute(name, onnx::AttributeProto::TENSOR);
    runtime::tensor_to_proto(t, "", *a.mutable_t());
    return a;
}

ModelBuilder::ModelBuilder(int64_t opset, const std::string &graph_name, int64_t ir_version) {
    proto_.set_ir_version(ir_version);
    auto *o = proto_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    proto_.mutable_graph()->set_name(graph_name);
}

onnx::NodeProto &ModelBuilder::node(const std::string &op, const std::vector<std::string> &inputs,
                                    const std::vector<std::string> &outputs,
                                    std::initializer_list<onnx::AttributeProto> attrs,
                                    const std::string &name) {
    onnx::NodeProto *n = proto_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_node" : name);
    for (const std::string &i : inputs) n->add_input(i);
    for (const std::string &o : outputs) n->add_output(o);
    for (const onnx::AttributeProto &a : attrs) *n->add_attribute() = a;
    return *n;
}

onnx::NodeProto &ModelBuilder::dequantize_packed(const std::string &name, const std::string &input,
                                                 const std::string &output, GgmlType type,
                                                 const std::vector<int64_t> &shape,
                                                 DataType dtype) {
    return node("DequantizePacked", {input}, {output},
                {attr_string("format", opset29::format_name(type)), attr_ints("shape", shape),
                 attr_int("output_dtype", onnx_number(dtype))},
                name);
}

ModelBuilder &ModelBuilder::input(const std::string &name, DataType dtype) {
    auto *v = proto_.mutable_graph()->add_input();
    v->set_name(name);
    if (dtype != DataType::undefined)
        v->mutable_type()->mutable_tensor_type()->set_elem_type(int32_t(dtype));
    return *this;
}

ModelBuilder &ModelBuilder::input(const std::string &name, DataType dtype,
                                  const std::vector<int64_t> &dims) {
    input(name, dtype);
    auto *shape = proto_.mutable_graph()
                      ->mutable_input()
                      ->rbegin()
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape();
    for (int64_t d : dims) {
        auto *dim = shape->add_dim();
        if (d >= 0)
            dim->set_dim_value(d);
        else
            dim->set_dim_param("N");
    }
    return *this;
}

ModelBuilder &ModelBuilder::output(const std::string &name) {
    proto_.mutable_graph()->add_output()->set_name(name);
    return *this;
}

ModelBuilder &ModelBuilder::output(const std::string &name, DataType dtype,
                                   const std::vector<int64_t> &dims) {
    onnx::ValueInfoProto &v = *proto_.mutable_graph()->add_output();
    v.set_name(name);
    auto *tt = v.mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_number(dtype));
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
}

ModelBuilder &ModelBuilder::initializer(const std::string &name, const runtime::Tensor &t) {
    runtime::tensor_to_proto(t, name, *proto_.mutable_graph()->add_initializer());
    return *this;
}

ModelBuilder &ModelBuilder::bytes_initializer(const std::string &name,
                                              const std::vector<uint8_t> &bytes) {
    onnx::TensorProto &x = *proto_.mutable_graph()->add_initializer();
    x.set_name(name);
    x.set_data_type(onnx_number(DataType::uint8));
    x.add_dims(int64_t(bytes.size()));
    x.set_raw_data(bytes.data(), bytes.size());
    return *this;
}

onnx::TensorProto &ModelBuilder::initializer_proto(const std::string &name) {
    for (auto &t : *proto_.mutable_graph()->mutable_initializer())
        if (t.name() == name) return t;
    throw std::runtime_error("no initializer " + name);
}

runtime::Model ModelBuilder::model(const std::string &base_dir) const {
    return runtime::Model::from_proto(proto_, base_dir, "test.onnx");
}

void ModelBuilder::save(const std::string &path) const {
    save_model(proto_, path);
}

void save_model(const onnx::ModelProto &m, const std::filesystem::path &path) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!m.SerializeToOstream(&f) || !f.flush())
        throw std::runtime_error("cannot write " + path.string());
}

onnx::ModelProto load_model(const std::filesystem::path &path) {
    onnx::ModelProto m;
    std::ifstream in(path, std::ios::binary);
    if (!m.ParseFromIstream(&in)) throw std::runtime_error("cannot parse " + path.string());
    return m;
}

}  // namespace gguftool::testkit
