// Lowered models pass ONNX 1.12's checker and strict shape inference for every operator it knows;
// what it cannot check is exactly the operators newer than opset 17 that the lowering emits.
#include <gtest/gtest.h>

#include "../support/gguf_test_support.hpp"
#include "../support/node_test_dirs.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "onnx_builder.hpp"

namespace gguftool::lowertest {
namespace {

std::set<std::string> keys(const std::map<std::string, size_t> &m) {
    std::set<std::string> out;
    for (const auto &[k, v] : m) out.insert(k);
    return out;
}

TEST(OnnxCheck, LoweredNodeTestsPassWhatOnnx112Checks) {
    opset29::register_schemas();
    size_t lowered = 0;
    for (const auto &dir : testkit::all_node_test_dirs()) {
        const std::string name = dir.filename().string();
        if (!name.starts_with("test_dequantizepacked") && !name.starts_with("test_unpack"))
            continue;
        for (int opset : {17, 18, 21, 26}) {
            SCOPED_TRACE(dir.string() + " at opset " + std::to_string(opset));
            onnx::ModelProto m = testkit::load_model(dir / "model.onnx");
            try {
                lower::lower_model(m, {opset});
            } catch (const Error &e) {
                if (std::string(e.what()).find("not lowered yet") != std::string::npos) continue;
                throw;
            }
            ++lowered;
            const lower::CheckResult r = lower::check_with_onnx(m);
            std::set<std::string> allowed;
            if (opset >= 18) allowed.insert("BitwiseAnd");
            if (opset >= 26) allowed.insert("BitCast");
            for (const std::string &op : keys(r.unchecked)) EXPECT_TRUE(allowed.count(op)) << op;
            if (opset == 17) {
                EXPECT_TRUE(r.unchecked.empty());
            }
        }
    }
    EXPECT_GT(lowered, 0u);
}

// testdata/sample.gguf exported by to-onnx --opset N in packed and unpack modes.
TEST(OnnxCheck, LoweredSampleExportsPassWhatOnnx112Checks) {
    opset29::register_schemas();
    testkit::TempDir dir;
    for (auto mode : {onnx_export::Mode::packed, onnx_export::Mode::unpack})
        for (int opset : {17, 21, 26}) {
            SCOPED_TRACE(std::string(onnx_export::mode_name(mode)) + " at opset " +
                         std::to_string(opset));
            onnx_export::Options o;
            o.mode = mode;
            o.opset = opset;
            const std::string path = dir.file("m.onnx");
            onnx_export::export_model(gguf::Model::open(testkit::kSample), path, o);
            const onnx::ModelProto m = testkit::load_model(path);
            EXPECT_EQ(m.opset_import(0).version(), opset);
            const lower::CheckResult r = lower::check_with_onnx(m);
            std::set<std::string> allowed;
            if (opset >= 18) allowed.insert("BitwiseAnd");
            if (opset >= 26) allowed.insert("BitCast");
            for (const std::string &op : keys(r.unchecked)) EXPECT_TRUE(allowed.count(op)) << op;
            EXPECT_EQ(keys(r.unchecked), allowed);
        }
}

// The check can fail: a lowered graph whose Cast feeds Gather a FLOAT index is refused.
TEST(OnnxCheck, ABrokenLoweringIsRefused) {
    opset29::register_schemas();
    onnx::ModelProto m = testkit::load_model(testkit::kRepositoryNodeTests.dir /
                                             "test_dequantizepacked_q4_0" / "model.onnx");
    lower::lower_model(m, {17});
    bool broken = false;
    for (onnx::NodeProto &n : *m.mutable_graph()->mutable_node())
        if (n.op_type() == "Cast" && !broken)
            for (onnx::AttributeProto &a : *n.mutable_attribute())
                if (a.name() == "to" && a.i() == onnx_number(DataType::int32)) {
                    a.set_i(onnx_number(DataType::float32));
                    broken = true;
                }
    ASSERT_TRUE(broken);
    EXPECT_THROW(lower::check_with_onnx(m), Error);
}

}  // namespace
}  // namespace gguftool::lowertest
