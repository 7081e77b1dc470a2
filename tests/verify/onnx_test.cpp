// `verify --onnx`: models made by `gguftool to-onnx`, run by the executor, against llama.cpp's
// decoding of the GGUF (or reference files); a flipped byte in the GGUF is caught.
#include <gtest/gtest.h>

#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

using test::run_gguftool;
using test::RunResult;

class VerifyOnnx : public testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir;
        write_every_format(file());
        const RunResult r = run_gguftool({"to-onnx", "-q", file(), packed()});
        ASSERT_EQ(r.status, 0) << r.err;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string file() { return dir_->file("every.gguf"); }
    static std::string packed() { return dir_->file("packed.onnx"); }
    static TempDir *dir_;
};
TempDir *VerifyOnnx::dir_ = nullptr;

TEST_F(VerifyOnnx, PackedModelMatchesLlama) {
    const RunResult r = run_gguftool({"verify", "--json", "--onnx", packed(), file()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    // Every output compared, except q8_1 (llama.cpp cannot decode the GGUF tensor). Plain
    // floating tensors (f64 included) come out as float, compared with their values rounded
    // once; integers with their own bytes.
    EXPECT_EQ(j["mismatched"], 0);
    EXPECT_EQ(j["not_compared"], 1);
    EXPECT_EQ(j["matched"], 35);
    for (const nlohmann::json &t : j["tensors"]) {
        if (t["name"] == "t.q8_1")
            EXPECT_EQ(t["status"], "not_compared");
        else
            EXPECT_EQ(t["status"], "match") << t.dump();
    }
}

TEST_F(VerifyOnnx, Float16UnpackModelMatchesLlama) {
    const std::string model = dir_->file("unpack16.onnx");
    ASSERT_EQ(run_gguftool(
                  {"to-onnx", "-q", "--mode", "unpack", "--output-dtype", "float16", file(), model})
                  .status,
              0);
    const RunResult r = run_gguftool({"verify", "--onnx", model, file()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(line_of(r.out, "t.q4_0").find("match (compared as float16)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("0 mismatch, 1 not compared"), std::string::npos) << r.out;
}

TEST_F(VerifyOnnx, WithReferenceFilesEveryOutputIsCompared) {
    write_references(file(), dir_->file("refs"));
    const RunResult r =
        run_gguftool({"verify", "--onnx", packed(), "--reference", dir_->file("refs"), file()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("36 match, 0 mismatch, 0 not compared"), std::string::npos) << r.out;
}

TEST_F(VerifyOnnx, AFlippedByteInTheGgufIsCaught) {
    // The graph keeps the original bytes; the GGUF copy has one byte inverted.
    const std::string flipped = dir_->file("flipped.gguf");
    copy_with_flipped_byte(file(), flipped, "t.iq4_xs", 77);
    ASSERT_GT(
        count_differences(llama_decoding(file(), "t.iq4_xs"), llama_decoding(flipped, "t.iq4_xs")),
        0u);
    const RunResult r = run_gguftool({"verify", "--onnx", packed(), flipped});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(line_of(r.out, "t.iq4_xs").find("MISMATCH"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("34 match, 1 mismatch, 1 not compared"), std::string::npos) << r.out;
}

TEST_F(VerifyOnnx, TensorsLeftOutOfTheGraphAreNotCompared) {
    const std::string model = dir_->file("some.onnx");
    ASSERT_EQ(run_gguftool({"to-onnx", "-q", "--tensor", "t.q4_*", file(), model}).status, 0);
    const RunResult r = run_gguftool({"verify", "--onnx", model, file()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(line_of(r.out, "t.q4_K").find(" match"), std::string::npos) << r.out;
    EXPECT_NE(line_of(r.out, "t.q6_K").find("not compared: not an output of the ONNX graph"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("36 tensors: 3 match, 0 mismatch, 33 not compared"), std::string::npos)
        << r.out;
    // --tensor narrows both sides.
    const RunResult only = run_gguftool({"verify", "--onnx", model, "--tensor", "t.q4_1", file()});
    EXPECT_EQ(only.status, 0);
    EXPECT_NE(only.out.find("1 tensor: 1 match, 0 mismatch, 0 not compared"), std::string::npos)
        << only.out;
}

// --backend and --device choose what runs the graph (with --onnx only); the CPU is device 0.
TEST_F(VerifyOnnx, BackendAndDevice) {
    RunResult r = run_gguftool({"verify", "--onnx", packed(), "--backend", "cpu", "--device", "0",
                                "--tensor", "t.q4_0", file()});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(line_of(r.out, "t.q4_0").find("match"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("backend:"), std::string::npos) << r.err;  // said for other backends
    r = run_gguftool({"verify", "--onnx", packed(), "--device", "1", file()});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("the cpu backend has only device 0, not device 1"), std::string::npos)
        << r.err;
    EXPECT_EQ(run_gguftool({"verify", "--backend", "cpu", file()}).status, 2);
    EXPECT_EQ(run_gguftool({"verify", "--device", "0", file()}).status, 2);
    EXPECT_EQ(run_gguftool({"verify", "--onnx", packed(), "--backend", "tpu", file()}).status, 2);
}

TEST_F(VerifyOnnx, ModelErrorsExitWithTwo) {
    EXPECT_EQ(run_gguftool({"verify", "--onnx", dir_->file("absent.onnx"), file()}).status, 2);
    const std::string junk = dir_->file("junk.onnx");
    testkit::write_file(junk, {0xff, 0xff, 0xff});
    EXPECT_EQ(run_gguftool({"verify", "--onnx", junk, file()}).status, 2);
}

}  // namespace
}  // namespace gguftool::verifytest
