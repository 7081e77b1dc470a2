// Every ONNX node test of the repository (testdata/node-tests) and of ../shared, lowered with
// `gguftool lower` at opsets 17, 21 and 26, run in onnxruntime with the test's inputs; every
// output must equal the test's expected output bit for bit; our executor runs the lowered model
// too and must give the same.
#include <gtest/gtest.h>

#include <map>

#include "../support/node_test_dirs.hpp"
#include "gguftool/runtime/session.hpp"
#include "gguftool/runtime/tensor_io.hpp"
#include "ort_support.hpp"

namespace gguftool::orttest {
namespace {

namespace fs = std::filesystem;

struct Param {
    fs::path dir;
    int opset;
};

void PrintTo(const Param &p, std::ostream *os) {
    *os << p.dir.string() << " at opset " << p.opset;
}

class LowerNodeTestsOrt : public testing::TestWithParam<Param> {};

TEST_P(LowerNodeTestsOrt, LoweredTestPassesInOnnxruntime) {
    SKIP_WITHOUT_ORT();
    const auto &[dir, opset] = GetParam();
    TempDir tmp;
    const std::string lowered = tmp.file("lowered.onnx");
    const RunResult l = run_gguftool(
        {"lower", "-q", "--opset", std::to_string(opset), (dir / "model.onnx").string(), lowered});
    ASSERT_EQ(l.status, 0) << l.err;
    const runtime::Model model = runtime::Model::load((dir / "model.onnx").string());
    std::vector<std::string> inputs;
    runtime::Inputs feeds;
    for (size_t i = 0; i < model.inputs().size(); ++i) {
        const std::string npy = tmp.file("in" + std::to_string(i) + ".npy");
        runtime::Tensor t = runtime::read_tensor_pb(
            (dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
        runtime::write_npy(npy, t);
        inputs.push_back(model.inputs()[i].name + "=" + npy);
        feeds.emplace(model.inputs()[i].name, std::move(t));
    }
    const RunResult r = run_ort(lowered, tmp.file("out"), inputs);
    ASSERT_EQ(r.status, 0) << r.err;
    // Our executor on the same lowered model.
    std::map<std::string, runtime::Tensor> ours;
    for (auto &[name, t] : runtime::run_model(lowered, feeds)) ours.emplace(name, std::move(t));
    for (size_t i = 0; i < model.outputs().size(); ++i) {
        SCOPED_TRACE(model.outputs()[i].name);
        const runtime::Tensor want = runtime::read_tensor_pb(
            (dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")).string());
        const runtime::Tensor ort =
            runtime::read_npy(tmp.file("out") + "/" + model.outputs()[i].name + ".npy");
        for (const runtime::Tensor *got : std::initializer_list<const runtime::Tensor *>{
                 &ort, &ours.at(model.outputs()[i].name)}) {
            SCOPED_TRACE(got == &ort ? "onnxruntime" : "gguftool run");
            EXPECT_EQ(got->dtype(), want.dtype());
            EXPECT_EQ(got->shape(), want.shape());
            EXPECT_TRUE(std::equal(got->bytes().begin(), got->bytes().end(), want.bytes().begin(),
                                   want.bytes().end()));
        }
    }
}

std::vector<Param> params() {
    std::vector<Param> out;
    for (const fs::path &d : testkit::all_node_test_dirs()) {
        // The decoder operators' tests have nothing to lower (and ReduceMean-18 cannot be
        // re-stamped as 17), and their double-precision expected values are not onnxruntime's
        // float results bit for bit.
        if (testkit::is_decoder_operator_test(d.filename().string())) continue;
        for (int opset : {17, 21, 26}) out.push_back({d, opset});
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(NodeTests, LowerNodeTestsOrt, testing::ValuesIn(params()),
                         [](const auto &info) {
                             const std::string root =
                                 info.param.dir.parent_path().parent_path().filename() == "testdata"
                                     ? "repository"
                                     : "shared";
                             return root + "_" + info.param.dir.filename().string() + "_opset" +
                                    std::to_string(info.param.opset);
                         });

}  // namespace
}  // namespace gguftool::orttest
