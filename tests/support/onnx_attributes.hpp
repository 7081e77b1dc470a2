// ONNX node attributes by name and value, for building models with the protobuf API (the tests'
// models and tools/node_tests.hpp's).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gguftool::test {

inline onnx::AttributeProto attr_int(const std::string &name, int64_t v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
}
inline onnx::AttributeProto attr_ints(const std::string &name, const std::vector<int64_t> &v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return a;
}
inline onnx::AttributeProto attr_string(const std::string &name, const std::string &v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(v);
    return a;
}
inline onnx::AttributeProto attr_float(const std::string &name, float v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
}

}  // namespace gguftool::test
