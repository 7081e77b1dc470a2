// The loaded model as the session sees it (internal to lib/runtime).
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>
#include <vector>

#include "gguftool/runtime.hpp"
#include "op.hpp"
#include "tensor_proto.hpp"

namespace gguftool::runtime {

struct Model::Impl {
    struct Node {
        const onnx::NodeProto *proto = nullptr;
        const detail::OpDef *op = nullptr;
        int version = 0;    // the ONNX operator version the opset selects (OpDef::onnx_version)
        std::string label;  // node "name" (Op-V) -- for errors and profiles
        std::string name;   // node name, or "#index"
    };

    std::string name;      // file path or given name: the `where` of errors
    std::string base_dir;  // for external data
    std::shared_ptr<const onnx::ModelProto> proto;  // owns the nodes and the raw_data viewed
    int64_t opset = 0;
    int64_t contrib_opset = 0;           // com.microsoft's imported version (0: not imported)
    std::vector<ValueInfo> inputs;       // to feed
    std::vector<ValueInfo> overridable;  // graph inputs that also have an initializer
    std::vector<ValueInfo> outputs;
    std::vector<std::pair<std::string, Tensor>> initializers;
    std::vector<Node> order;  // execution order
};

}  // namespace gguftool::runtime
