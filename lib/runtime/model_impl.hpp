// The loaded model as the session sees it (internal to lib/runtime).
#pragma once

#include <onnx/onnx_pb.h>

#include <deque>
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
        // A control-flow node's graph attributes (Loop's body), each a model whose inputs are
        // the subgraph's own, then the outer values it reads. Those outer values are appended to
        // the node's inputs at load (proto is then a rewritten copy), after its
        // `declared_inputs`, so that they are ordered and kept alive as inputs are.
        std::vector<Model> subgraphs;
        size_t declared_inputs = 0;
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
    std::vector<Node> order;                // execution order
    std::deque<onnx::NodeProto> rewritten;  // the control-flow nodes with their outer inputs
    // A model rewritten from another (fuse.cpp) keeps it alive: its nodes point into it.
    std::shared_ptr<const Impl> source;

    // The Impl a Model shares.
    static std::shared_ptr<const Impl> shared(const Model &m) { return m.impl_; }
    // A Model around `impl` (a rewritten model's).
    static Model wrap(std::shared_ptr<const Impl> impl) {
        Model m;
        m.impl_ = std::move(impl);
        return m;
    }
};

}  // namespace gguftool::runtime
