// The shape rule between GGUF and ONNX as verify --onnx and run --compare apply it: what to-onnx
// writes (a GGUF tensor without dims is an ONNX scalar, shape []) is what both expect, so a
// scalar output for a [1] tensor, or a [1] output for a dimensionless one, is a mismatch.
#include <gtest/gtest.h>

#include "gguftool/gguf_writer.hpp"
#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

using test::run_gguftool;
using test::RunResult;

using testkit::f32_bytes;

// "scalar" and "one" hold one value each; `swapped` gives "scalar" the dims [1] and "one" none.
void write_model(const std::string &path, bool swapped) {
    const std::vector<uint64_t> none, one = {1};
    gguf::Writer w;
    w.add_tensor("scalar", GgmlType::f32, swapped ? one : none, f32_bytes({1.5f}));
    w.add_tensor("one", GgmlType::f32, swapped ? none : one, f32_bytes({2.5f}));
    w.add_tensor("four", GgmlType::f32, {3, 1, 2, 2},
                 f32_bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    w.write(path);
}

class OnnxShapes : public testing::Test {
protected:
    void SetUp() override {
        write_model(gguf_file(), false);
        write_model(swapped_file(), true);
        const RunResult r = run_gguftool({"to-onnx", "-q", gguf_file(), onnx_file()});
        ASSERT_EQ(r.status, 0) << r.err;
    }
    std::string gguf_file() const { return dir_.file("m.gguf"); }
    std::string swapped_file() const { return dir_.file("swapped.gguf"); }
    std::string onnx_file() const { return dir_.file("m.onnx"); }
    TempDir dir_;
};

TEST_F(OnnxShapes, VerifyExpectsWhatTheExporterWrites) {
    const RunResult r = run_gguftool({"verify", "--json", "--onnx", onnx_file(), gguf_file()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["matched"], 3);
    EXPECT_EQ(j["mismatched"], 0);
}

TEST_F(OnnxShapes, VerifyTellsAScalarFromRankOne) {
    const RunResult r = run_gguftool({"verify", "--json", "--onnx", onnx_file(), swapped_file()});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["matched"], 1);
    EXPECT_EQ(j["mismatched"], 2);
    for (const nlohmann::json &t : j["tensors"]) {
        if (t["name"] == "four") {
            EXPECT_EQ(t["status"], "match") << t.dump();
        } else {
            EXPECT_EQ(t["status"], "mismatch") << t.dump();
            EXPECT_NE(t["note"].get<std::string>().find("shape"), std::string::npos) << t.dump();
        }
    }
}

TEST_F(OnnxShapes, RunCompareAgrees) {
    RunResult r = run_gguftool({"run", onnx_file(), "--compare", gguf_file()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("compare: 3 match, 0 differ"), std::string::npos) << r.out;
    r = run_gguftool({"run", onnx_file(), "--compare", swapped_file()});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("compare: 1 match, 2 differ"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gguftool::verifytest
