// The `gguftool to-onnx` command line: options reach the exporter, exit codes, quiet output.
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using testkit::kSample;

TEST(Cli, ConvertsTheSampleInEveryModeAndMatchesLlama) {
    TempDir dir;
    const gguf::Model sample = gguf::Model::open(kSample);
    for (const char *mode : {"packed", "unpack", "dequantized"}) {
        SCOPED_TRACE(mode);
        const std::string out = dir.file(std::string(mode) + ".onnx");
        const CliResult r = run_cli({"to-onnx", kSample, out, "--mode", mode});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_NE(
            r.out.find(fmt::format("{}: {} tensors ({} mode", out, sample.tensors().size(), mode)),
            std::string::npos)
            << r.out;
        const onnx::ModelProto m = check_model(out);
        const auto outputs = run(out);
        ASSERT_EQ(outputs.size(), sample.tensors().size());
        for (const gguf::TensorInfo &t : sample.tensors()) {
            if (!traits(t.type).quantized) continue;
            const std::vector<uint8_t> bytes(t.data.begin(), t.data.end());
            EXPECT_TRUE(same_bits(llama_decode(llama(), t.type, bytes),
                                  floats(outputs.at(std::string(t.name))), Nans::exact))
                << t.name;
        }
    }
}

TEST(Cli, OptionsReachTheModel) {
    TempDir dir;
    const CliResult r = run_cli({"to-onnx", kSample, dir.file("m.onnx"), "--output-dtype",
                                 "bfloat16", "--tensor", "blk.0.*", "--tensor", "output.weight",
                                 "--max-array", "5", "--external-data", "--mode", "unpack"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("gguftool: note: metadata array 'tokenizer.ggml.tokens'"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("in m.onnx.data"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(dir.file("m.onnx.data")));
    const onnx::ModelProto m = check_model(dir.file("m.onnx"));
    for (const auto &o : m.graph().output()) {
        EXPECT_TRUE(o.name().starts_with("blk.0.") || o.name() == "output.weight") << o.name();
        // Plain tensors (norms f32, attn_k f16, attn_v bf16) take the output type too.
        EXPECT_EQ(o.type().tensor_type().elem_type(), onnx_number(DataType::bfloat16)) << o.name();
    }
    EXPECT_GT(count_ops(m, "Unpack"), 0u);
}

TEST(Cli, KeepPlainTypesKeepsStoredTypes) {
    TempDir dir;
    for (const bool keep : {false, true}) {
        std::vector<std::string> args = {"to-onnx",  "-q",
                                         "--mode",   "dequantized",
                                         "--tensor", "blk.0.attn_[kv].weight",
                                         kSample,    dir.file("m.onnx")};
        if (keep) args.push_back("--keep-plain-types");
        const CliResult r = run_cli(args);
        ASSERT_EQ(r.status, 0) << r.err;
        const onnx::ModelProto m = check_model(dir.file("m.onnx"));
        ASSERT_EQ(m.graph().output_size(), 2);
        const auto type = [&](int i) {
            return m.graph().output(i).type().tensor_type().elem_type();
        };
        EXPECT_EQ(m.graph().output(0).name(), "blk.0.attn_k.weight");  // f16
        EXPECT_EQ(type(0), onnx_number(keep ? DataType::float16 : DataType::float32));
        EXPECT_EQ(type(1), onnx_number(keep ? DataType::bfloat16 : DataType::float32));  // bf16
        EXPECT_EQ(m.opset_import(0).version(), keep ? 13 : 7);
    }
}

TEST(Cli, QuietPrintsNothing) {
    TempDir dir;
    const CliResult r =
        run_cli({"to-onnx", "--quiet", "--max-array", "2", kSample, dir.file("m.onnx")});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
}

TEST(Cli, ExitCodes) {
    TempDir dir;
    const auto run_args = [&](std::vector<std::string> args) { return run_cli(args); };
    EXPECT_EQ(run_args({"to-onnx", kSample}).status, 2);  // OUTPUT missing
    EXPECT_EQ(run_args({"to-onnx", kSample, dir.file("m.onnx"), "--mode", "fast"}).status, 2);
    EXPECT_EQ(run_args({"to-onnx", kSample, dir.file("m.onnx"), "--output-dtype", "int8"}).status,
              2);
    EXPECT_EQ(run_args({"to-onnx", kSample, dir.file("m.onnx"), "--max-array", "x"}).status, 2);

    CliResult r = run_args({"to-onnx", dir.file("missing.gguf"), dir.file("m.onnx")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("missing.gguf"), std::string::npos) << r.err;
    r = run_args({"to-onnx", kSample, dir.file("m.onnx"), "--tensor", "nothing*"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("no tensor matches nothing*"), std::string::npos) << r.err;
    r = run_args({"to-onnx", kSample, kSample});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("refusing to write over the input file"), std::string::npos) << r.err;
    EXPECT_TRUE(dir_entries(dir.path()).empty());
    EXPECT_EQ(run_args({"to-onnx", "--help"}).status, 0);
}

}  // namespace
}  // namespace gguftool::onnxtest
