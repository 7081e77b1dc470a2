// Converted models in onnxruntime (onnxruntime-node, pinned in package.json, installed by npm ci):
// testdata/sample.gguf through `to-onnx --mode dequantized`, run by tests/ort/run_ort.mjs, every
// output compared bit for bit with llama.cpp's decoding. Skipped, saying why, when node or
// onnxruntime-node cannot be loaded.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gguftool/dims.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/runtime/session.hpp"
#include "gguftool/runtime/tensor_io.hpp"
#include "ort_support.hpp"

namespace gguftool::orttest {
namespace {

// An --output-dtype, the type it gives, and onnxruntime's name of that type; the mode and the
// --opset (0: none) of the conversion.
struct OutputType {
    const char *flag;
    DataType dtype;
    const char *ort_name;
    const char *mode = "dequantized";
    int opset = 0;
};

void PrintTo(const OutputType &t, std::ostream *os) {
    *os << t.mode << "_" << t.opset << "_" << t.flag;
}

class OrtSample : public testing::TestWithParam<OutputType> {};

TEST_P(OrtSample, SampleRunsAndMatchesLlamaBitForBit) {
    SKIP_WITHOUT_ORT();
    const auto [dtype_flag, dtype, ort_name, mode, opset] = GetParam();
    TempDir dir;
    const std::string model = dir.file("m.onnx"), outdir = dir.file("out");
    std::vector<std::string> args = {"to-onnx",        "-q",       "--mode",         mode,
                                     "--output-dtype", dtype_flag, testkit::kSample, model};
    if (opset) args.insert(args.end(), {"--opset", std::to_string(opset)});
    const RunResult c = run_gguftool(args);
    ASSERT_EQ(c.status, 0) << c.err;
    const RunResult r = run_ort(model, outdir);
    ASSERT_EQ(r.status, 0) << r.err;

    const gguf::Model gguf = gguf::Model::open(testkit::kSample);
    const std::vector<test::LlamaTensorView> llama = test::llama_tensors(testkit::kSample);
    ASSERT_EQ(llama.size(), gguf.tensors().size());
    size_t lines = 0;
    for (char ch : r.out) lines += ch == '\n';
    EXPECT_EQ(lines, llama.size()) << r.out;  // one line per output
    for (const test::LlamaTensorView &t : llama) {
        SCOPED_TRACE(t.name);
        const gguf::TensorInfo *info = gguf.find_tensor(t.name);
        ASSERT_NE(info, nullptr);
        EXPECT_NE(r.out.find(t.name + " " + ort_name + " ["), std::string::npos) << r.out;
        const runtime::Tensor got = runtime::read_npy(outdir + "/" + t.name + ".npy");
        ASSERT_EQ(got.dtype(), dtype);
        EXPECT_EQ(got.shape(), onnx_shape(std::span(info->ne).first(info->n_dims)));
        std::vector<uint8_t> want;
        for (float f : testkit::llama_decode(testkit::llama(), GgmlType(t.type), t.bytes))
            append_expected(want, f, dtype);
        ASSERT_EQ(got.bytes().size(), want.size());
        size_t differing = 0, first = 0;
        for (size_t i = 0; i < want.size(); ++i)
            if (got.bytes()[i] != want[i] && differing++ == 0) first = i;
        EXPECT_EQ(differing, 0u) << "first differing byte " << first;
    }
}

INSTANTIATE_TEST_SUITE_P(Dequantized, OrtSample,
                         testing::Values(OutputType{"float", DataType::float32, "float32"},
                                         OutputType{"float16", DataType::float16, "float16"},
                                         OutputType{"double", DataType::float64, "float64"}),
                         [](const auto &info) { return std::string(info.param.flag); });

// Packed and unpack modes lowered by to-onnx --opset (17: Mod for masks, 21: BitwiseAnd, 26:
// BitCast for the f16 scales).
INSTANTIATE_TEST_SUITE_P(
    Lowered, OrtSample,
    testing::Values(OutputType{"float", DataType::float32, "float32", "packed", 21},
                    OutputType{"float", DataType::float32, "float32", "packed", 17},
                    OutputType{"float", DataType::float32, "float32", "packed", 26},
                    OutputType{"float16", DataType::float16, "float16", "packed", 21},
                    OutputType{"double", DataType::float64, "float64", "packed", 21},
                    OutputType{"float", DataType::float32, "float32", "unpack", 21},
                    OutputType{"float", DataType::float32, "float32", "unpack", 17},
                    OutputType{"float16", DataType::float16, "float16", "unpack", 26}),
    [](const auto &info) {
        return std::string(info.param.mode) + "_opset" + std::to_string(info.param.opset) + "_" +
               info.param.flag;
    });

// onnxruntime-node has no bfloat16 tensors: it loads the model (opset 13, bfloat16 Identity
// nodes) natively, then its JS layer refuses the output list. The driver says so and fails.
TEST(Ort, Bfloat16OutputsAreRefusedWithAClearMessage) {
    SKIP_WITHOUT_ORT();
    TempDir dir;
    const std::string model = dir.file("m.onnx");
    ASSERT_EQ(run_gguftool({"to-onnx", "-q", "--mode", "dequantized", "--output-dtype", "bfloat16",
                            "--tensor", "blk.0.attn_v.weight", testkit::kSample, model})
                  .status,
              0);
    const RunResult r = run_ort(model, dir.file("out"));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("run_ort: Unsupported data type: 16 (bfloat16: onnxruntime-node cannot "
                         "hand back bfloat16 tensors"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

// Today's limit: packed (and unpack) models import opset 29, which onnxruntime refuses to load.
TEST(Ort, PackedModelsAreRefusedForTheirOpset) {
    SKIP_WITHOUT_ORT();
    TempDir dir;
    const std::string model = dir.file("m.onnx");
    ASSERT_EQ(run_gguftool({"to-onnx", "-q", testkit::kSample, model}).status, 0);
    const RunResult r = run_ort(model, dir.file("out"));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("Opset 29 is under development"), std::string::npos) << r.err;
}

// NAME=INPUT.npy feeds a graph input: an Unsqueeze-13 node test of testdata/node-tests (float data,
// int64 axes), its .pb inputs written as .npy, the output checked against the test's own.
TEST(Ort, InputsAreFedFromNpyFiles) {
    SKIP_WITHOUT_ORT();
    TempDir dir;
    const std::string test_dir =
        std::string(GGUFTOOL_SOURCE_DIR) + "/testdata/node-tests/test_unsqueeze_two_axes";
    const runtime::Model model = runtime::Model::load(test_dir + "/model.onnx");
    std::vector<std::string> argv = {kNode, kDriver, test_dir + "/model.onnx", dir.file("out")};
    for (size_t i = 0; i < model.inputs().size(); ++i) {
        const std::string npy = dir.file("in" + std::to_string(i) + ".npy");
        runtime::write_npy(npy, runtime::read_tensor_pb(test_dir + "/test_data_set_0/input_" +
                                                        std::to_string(i) + ".pb"));
        argv.push_back(model.inputs()[i].name + "=" + npy);
    }
    const RunResult r = testkit::run(argv);
    ASSERT_EQ(r.status, 0) << r.err;
    const runtime::Tensor want = runtime::read_tensor_pb(test_dir + "/test_data_set_0/output_0.pb");
    const runtime::Tensor got =
        runtime::read_npy(dir.file("out") + "/" + model.outputs()[0].name + ".npy");
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_TRUE(std::equal(got.bytes().begin(), got.bytes().end(), want.bytes().begin(),
                           want.bytes().end()));
}

TEST(Ort, DriverErrorsNameTheProblem) {
    SKIP_WITHOUT_ORT();
    TempDir dir;
    const RunResult none = run_ort(dir.file("absent.onnx"), dir.file("out"));
    EXPECT_EQ(none.status, 1);
    EXPECT_NE(none.err.find("absent.onnx"), std::string::npos) << none.err;
    const RunResult bad_input = testkit::run(
        {kNode, kDriver, dir.file("absent.onnx"), dir.file("out"), "x=" + dir.file("x.npy")});
    EXPECT_EQ(bad_input.status, 1);
    EXPECT_NE(bad_input.err.find("x.npy"), std::string::npos) << bad_input.err;
    const RunResult usage = testkit::run({kNode, kDriver});
    EXPECT_EQ(usage.status, 1);
    EXPECT_NE(usage.err.find("usage: node run_ort.mjs MODEL.onnx OUTDIR"), std::string::npos)
        << usage.err;
}

}  // namespace
}  // namespace gguftool::orttest
