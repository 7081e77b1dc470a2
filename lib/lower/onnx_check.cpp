// check_with_onnx: ONNX 1.12's node checker and strict shape inference on a lowered model, for
// every operator it knows.
#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "gguftool/error.hpp"
#include "gguftool/lower.hpp"

namespace gguftool::lower {

CheckResult check_with_onnx(const onnx::ModelProto &model) {
    std::unordered_map<std::string, int> imports;
    for (const auto &o : model.opset_import())
        imports[o.domain() == "ai.onnx" ? "" : o.domain()] = int(o.version());
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(int(model.ir_version()));
    ctx.set_opset_imports(imports);
    onnx::checker::LexicalScopeContext lex;
    CheckResult r;
    for (const onnx::NodeProto &node : model.graph().node()) {
        const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
        const auto it = imports.find(domain);
        const int version = it == imports.end() ? 0 : it->second;
        const onnx::OpSchema *schema =
            onnx::OpSchemaRegistry::Schema(node.op_type(), version, domain);
        if (!schema) {
            ++r.unchecked[node.op_type()];
            continue;
        }
        try {
            onnx::checker::check_node(node, ctx, lex);
        } catch (const std::exception &e) {
            throw Error(fmt::format("node '{}' ({}) fails ONNX's checker: {}", node.name(),
                                    node.op_type(), e.what()));
        }
    }
    onnx::GraphProto g = model.graph();
    try {
        onnx::shape_inference::InferShapes(&g, imports, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions{true, 1, false});
    } catch (const std::exception &e) {
        throw Error(fmt::format("the lowered graph fails ONNX's shape inference: {}", e.what()));
    }
    return r;
}

}  // namespace gguftool::lower
