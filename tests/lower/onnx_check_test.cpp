// Lowered models pass ONNX 1.12's checker and strict shape inference for every operator it knows;
// what it cannot check is exactly the operators newer than opset 17 that the lowering emits.
#include <gtest/gtest.h>

#include <fstream>

#include "../support/node_test_dirs.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/onnx_schemas.hpp"

namespace gguftool::lowertest {
namespace {

onnx::ModelProto load(const std::filesystem::path &p) {
    std::ifstream f(p, std::ios::binary);
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromIstream(&f)) << p;
    return m;
}

std::set<std::string> keys(const std::map<std::string, size_t> &m) {
    std::set<std::string> out;
    for (const auto &[k, v] : m) out.insert(k);
    return out;
}

TEST(OnnxCheck, LoweredNodeTestsPassWhatOnnx112Checks) {
    opset29::register_schemas();
    size_t lowered = 0;
    for (const auto &dir : test::all_node_test_dirs()) {
        const std::string name = dir.filename().string();
        if (!name.starts_with("test_dequantizepacked") && !name.starts_with("test_unpack"))
            continue;
        for (int opset : {17, 18, 21, 26}) {
            SCOPED_TRACE(dir.string() + " at opset " + std::to_string(opset));
            onnx::ModelProto m = load(dir / "model.onnx");
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
            if (opset == 17) EXPECT_TRUE(r.unchecked.empty());
        }
    }
    EXPECT_GT(lowered, 0u);
}

// The check can fail: a lowered graph whose Cast feeds Gather a FLOAT index is refused.
TEST(OnnxCheck, ABrokenLoweringIsRefused) {
    opset29::register_schemas();
    onnx::ModelProto m =
        load(test::kRepositoryNodeTests.dir / "test_dequantizepacked_q4_0" / "model.onnx");
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
