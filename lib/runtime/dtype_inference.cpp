// Element-type inference: the graph is walked in execution order, each node's output type taken
// from its operator's row (OpDef::output_dtype, the rule the operator itself allocates with). The
// rules only name the type an operator produces; the operators check that their inputs' types are
// valid when they run.
#include "dtype_inference.hpp"

#include <unordered_map>

namespace gguftool::runtime::detail {

std::vector<NodeDtypes> infer_dtypes(const Model::Impl &m) {
    std::unordered_map<std::string, DataType> known;
    // An initializer's own type (a graph input of the same name may override it at run time, but
    // only with the type it declares, and the initializer is what runs unless it is fed).
    for (const auto &[name, tensor] : m.initializers) known[name] = tensor.dtype();
    for (const ValueInfo &v : m.inputs) known[v.name] = v.dtype;

    std::vector<NodeDtypes> types;
    types.reserve(m.order.size());
    for (const Model::Impl::Node &node : m.order) {
        const onnx::NodeProto &n = *node.proto;
        NodeDtypes t;
        for (const std::string &in : n.input()) {
            const auto it = in.empty() ? known.end() : known.find(in);
            t.inputs.push_back(it == known.end() ? DataType::undefined : it->second);
        }
        for (int k = 0; k < n.output_size(); ++k)
            t.outputs.push_back(node.op->output_dtype(n, t.inputs, size_t(k)));
        for (int k = 0; k < n.output_size(); ++k) known[n.output(k)] = t.outputs[size_t(k)];
        types.push_back(std::move(t));
    }
    return types;
}

}  // namespace gguftool::runtime::detail
