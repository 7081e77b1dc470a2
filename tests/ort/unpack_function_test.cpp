// Unpack-29's function body (the schema's context-dependent function, built from the lowering):
// ONNX's own function expansion (FunctionExpandHelper) inlines it into each Unpack node test, and
// the expanded model, run in onnxruntime, must give the test's expected output bit for bit.
#include <gtest/gtest.h>
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>

#include "../support/node_test_dirs.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "gguftool/runtime/tensor_io.hpp"
#include "onnx_builder.hpp"
#include "ort_support.hpp"

namespace gguftool::orttest {
namespace {

namespace fs = std::filesystem;

class UnpackFunction : public testing::TestWithParam<fs::path> {};

// The model with every Unpack node replaced by ONNX's expansion of the schema's function body,
// re-stamped with opset 17, the oldest whose operators the body uses (onnxruntime stops at 26).
onnx::ModelProto expanded(const fs::path &model_path) {
    onnx::ModelProto m = testkit::load_model(model_path);
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema("Unpack", 29, "");
    EXPECT_NE(schema, nullptr);
    EXPECT_TRUE(schema->HasContextDependentFunction());
    onnx::GraphProto &g = *m.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(g.mutable_node());
    for (const onnx::NodeProto &node : nodes) {
        if (node.op_type() != "Unpack") {
            *g.add_node() = node;
            continue;
        }
        std::vector<onnx::TypeProto> types;
        for (const std::string &in : node.input())
            for (const auto &v : g.input())
                if (v.name() == in) types.push_back(v.type());
        onnx::FunctionBodyBuildContextImpl ctx(node, types);
        onnx::FunctionProto body;
        EXPECT_TRUE(schema->BuildContextDependentFunction(ctx, body));
        EXPECT_EQ(body.opset_import(0).version(), 29);
        onnx::FunctionExpandHelper(node, body, g, node.name() + "/");
    }
    for (auto &o : *m.mutable_opset_import())
        if (o.domain().empty()) o.set_version(17);
    m.set_ir_version(8);
    return m;
}

TEST_P(UnpackFunction, ExpansionMatchesTheOperator) {
    SKIP_WITHOUT_ORT();
    opset29::register_schemas();
    const fs::path &dir = GetParam();
    TempDir tmp;
    const onnx::ModelProto m = expanded(dir / "model.onnx");
    const std::string path = tmp.file("expanded.onnx");
    testkit::save_model(m, path);
    std::vector<std::string> inputs;
    for (int i = 0; i < m.graph().input_size(); ++i) {
        const std::string npy = tmp.file("in" + std::to_string(i) + ".npy");
        runtime::write_npy(
            npy, runtime::read_tensor_pb(
                     (dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string()));
        inputs.push_back(m.graph().input(i).name() + "=" + npy);
    }
    const RunResult r = run_ort(path, tmp.file("out"), inputs);
    ASSERT_EQ(r.status, 0) << r.err;
    for (int i = 0; i < m.graph().output_size(); ++i) {
        const runtime::Tensor want = runtime::read_tensor_pb(
            (dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")).string());
        const runtime::Tensor got =
            runtime::read_npy(tmp.file("out") + "/" + m.graph().output(i).name() + ".npy");
        EXPECT_EQ(got.shape(), want.shape());
        EXPECT_TRUE(std::equal(got.bytes().begin(), got.bytes().end(), want.bytes().begin(),
                               want.bytes().end()));
    }
}

std::vector<fs::path> unpack_tests() {
    std::vector<fs::path> out;
    for (const fs::path &d : testkit::all_node_test_dirs())
        if (d.filename().string().starts_with("test_unpack")) out.push_back(d);
    return out;
}

INSTANTIATE_TEST_SUITE_P(NodeTests, UnpackFunction, testing::ValuesIn(unpack_tests()),
                         [](const auto &info) {
                             const bool repo =
                                 info.param.parent_path().parent_path().filename() == "testdata";
                             return std::string(repo ? "repository_" : "shared_") +
                                    info.param.filename().string();
                         });

}  // namespace
}  // namespace gguftool::orttest
