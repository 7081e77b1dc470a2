// `gguftool lower`: what it keeps, what it refuses (with the file, the node and the reason), the
// usage errors, atomic output and external data carried to another directory.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "../cli/cli_support.hpp"
#include "gguftool/runtime/session.hpp"
#include "onnx_builder.hpp"

namespace gguftool::lowertest {
namespace {

namespace fs = std::filesystem;
using test::run_gguftool;
using test::RunResult;
using testkit::TempDir;

using testkit::load_model;
using testkit::save_model;

const std::string kQ4_0 =
    std::string(GGUFTOOL_SOURCE_DIR) + "/testdata/node-tests/test_dequantizepacked_q4_0/model.onnx";

TEST(LowerCli, KeepsInputsOutputsMetadataAndOtherNodes) {
    TempDir dir;
    onnx::ModelProto m = load_model(kQ4_0);
    auto *p = m.add_metadata_props();
    p->set_key("source");
    p->set_value("test");
    // Another node after the lowered one: an Identity of its output.
    onnx::NodeProto &id = *m.mutable_graph()->add_node();
    id.set_op_type("Identity");
    id.set_name("copy");
    id.add_input(m.graph().output(0).name());
    id.add_output("copied");
    m.mutable_graph()->add_output()->set_name("copied");
    save_model(m, dir.file("in.onnx"));
    const RunResult r = run_gguftool({"lower", dir.file("in.onnx"), dir.file("out.onnx")});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("opset 21, 1 DequantizePacked and 0 Unpack node lowered to"),
              std::string::npos)
        << r.out;
    const onnx::ModelProto l = load_model(dir.file("out.onnx"));
    EXPECT_EQ(l.opset_import(0).version(), 21);
    EXPECT_EQ(l.ir_version(), 10);
    ASSERT_EQ(l.graph().input_size(), m.graph().input_size());
    EXPECT_EQ(l.graph().input(0).name(), m.graph().input(0).name());
    ASSERT_EQ(l.graph().output_size(), 2);
    EXPECT_EQ(l.graph().output(1).name(), "copied");
    EXPECT_EQ(l.metadata_props(0).key(), "source");
    bool kept = false, packed = false;
    for (const auto &n : l.graph().node()) {
        kept |= n.name() == "copy" && n.op_type() == "Identity";
        packed |= n.op_type() == "DequantizePacked";
    }
    EXPECT_TRUE(kept);
    EXPECT_FALSE(packed);
}

TEST(LowerCli, RefusesWhatItCannotLowerNamingTheNode) {
    TempDir dir;
    onnx::ModelProto m = load_model(kQ4_0);
    for (auto &a : *m.mutable_graph()->mutable_node(0)->mutable_attribute())
        if (a.name() == "format") a.set_s("gguf:q9_9");
    m.mutable_graph()->mutable_node(0)->set_name("dq");
    save_model(m, dir.file("bad.onnx"));
    const RunResult r = run_gguftool({"lower", dir.file("bad.onnx"), dir.file("out.onnx")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(dir.file("bad.onnx") + ": node 'dq' (DequantizePacked): "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("gguf:q9_9"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out.onnx")));
}

TEST(LowerCli, RefusesANodeWhoseMeaningChangesAtTheTargetOpset) {
    TempDir dir;
    onnx::ModelProto m = load_model(kQ4_0);
    onnx::NodeProto &pad = *m.mutable_graph()->add_node();
    pad.set_op_type("Pad");
    pad.set_name("pad");
    pad.add_input(m.graph().output(0).name());
    pad.add_output("padded");
    save_model(m, dir.file("pad.onnx"));
    const RunResult r =
        run_gguftool({"lower", "--opset", "17", dir.file("pad.onnx"), dir.file("out.onnx")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("node 'pad' (Pad): Pad changed meaning at opset 18, between the target "
                         "opset 17 and the model's 29; lower to opset 18 or higher"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir.file("out.onnx")));
}

TEST(LowerCli, ListedByHelpAndHandedToTheOnnxProgram) {
    const RunResult help = run_gguftool({"--help"});
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("lower"), std::string::npos) << help.out;
    const RunResult sub = run_gguftool({"lower", "--help"});
    EXPECT_EQ(sub.status, 0);
    EXPECT_NE(sub.out.find("--opset"), std::string::npos) << sub.out;
}

TEST(LowerCli, BadFilesAndUsage) {
    TempDir dir;
    { std::ofstream(dir.file("junk.onnx")) << "not a model"; }
    RunResult r = run_gguftool({"lower", dir.file("junk.onnx"), dir.file("out.onnx")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(dir.file("junk.onnx") + ": not a valid ONNX model"), std::string::npos)
        << r.err;
    r = run_gguftool({"lower", dir.file("absent.onnx"), dir.file("out.onnx")});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("absent.onnx"), std::string::npos) << r.err;
    for (const char *opset : {"16", "27", "x"}) {
        r = run_gguftool({"lower", "--opset", opset, kQ4_0, dir.file("out.onnx")});
        EXPECT_EQ(r.status, 2) << opset;
    }
    EXPECT_FALSE(fs::exists(dir.file("out.onnx")));
}

// A model whose tensors are external data, lowered into another directory: the data file is
// copied beside the output, which then runs.
TEST(LowerCli, ExternalDataFollowsTheModel) {
    TempDir dir;
    fs::create_directories(dir.file("a"));
    fs::create_directories(dir.file("b"));
    const RunResult c =
        run_gguftool({"to-onnx", "-q", "--external-data", "--tensor", "blk.0.attn_q.weight",
                      testkit::kSample, dir.file("a/m.onnx")});
    ASSERT_EQ(c.status, 0) << c.err;
    const RunResult r = run_gguftool({"lower", dir.file("a/m.onnx"), dir.file("b/l.onnx")});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(dir.file("b/m.onnx.data") + ": external data copied"), std::string::npos)
        << r.out;
    EXPECT_EQ(fs::file_size(dir.file("b/m.onnx.data")), fs::file_size(dir.file("a/m.onnx.data")));
    const runtime::NamedTensors lowered = runtime::run_model(dir.file("b/l.onnx"));
    const runtime::NamedTensors packed = runtime::run_model(dir.file("a/m.onnx"));
    ASSERT_EQ(lowered.size(), 1u);
    EXPECT_TRUE(std::equal(lowered[0].second.bytes().begin(), lowered[0].second.bytes().end(),
                           packed[0].second.bytes().begin(), packed[0].second.bytes().end()));
    // In its own directory nothing is copied.
    const RunResult same = run_gguftool({"lower", dir.file("a/m.onnx"), dir.file("a/l.onnx")});
    ASSERT_EQ(same.status, 0) << same.err;
    EXPECT_EQ(same.out.find("copied"), std::string::npos) << same.out;
}

}  // namespace
}  // namespace gguftool::lowertest
