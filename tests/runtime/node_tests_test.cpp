// The ONNX backend node tests, the repository's (testdata/node-tests) and the optional ones of
// GGUFTOOL_SHARED_DIR/onnx-node-tests (skipped when absent): through the library and the CLI, with
// the tolerance of ONNX's runner and bit for bit.
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

class NodeTests : public NodeTestRootTest {
protected:
    size_t test_count() const { return testkit::node_test_dirs(GetParam()).size(); }
};

TEST_P(NodeTests, ArePresent) {
    EXPECT_GE(test_count(), GetParam().min_tests);
}

TEST_P(NodeTests, AllPassThroughTheLibrary) {
    for (const bool exact : {false, true}) {
        const std::vector<rt::NodeTestResult> results =
            rt::run_node_tests(root_dir().string(), exact);
        EXPECT_EQ(results.size(), test_count());
        for (const rt::NodeTestResult &r : results)
            EXPECT_TRUE(r.passed) << r.name << (exact ? " (exact): " : ": ") << r.message;
    }
}

TEST_P(NodeTests, AllPassThroughTheCli) {
    const std::string expected = fmt::format("{} passed, 0 failed", test_count());
    for (const bool exact : {false, true}) {
        std::vector<std::string> args = {"run", "--test-dir", root_dir().string()};
        if (exact) args.push_back("--exact");
        const CliResult r = run_cli(args);
        EXPECT_EQ(r.status, 0) << r.out;
        EXPECT_EQ(last_line(r.out), expected) << r.out;
        EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
    }
}

INSTANTIATE_TEST_SUITE_P(Roots, NodeTests, ::testing::ValuesIn(kNodeTestRoots), root_name);

TEST(NodeTestDir, OneTestDirectory) {
    const auto results = rt::run_node_tests(kNodeTests + "/test_unpack_ternary", true);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].name, "test_unpack_ternary");
    EXPECT_TRUE(results[0].passed) << results[0].message;
}

// A wrong expected output must fail, with a line naming the test and a non-zero exit.
TEST(NodeTestDir, WrongExpectedOutputFails) {
    TempDir tmp;
    const fs::path src = fs::path(kNodeTests) / "test_unpack_3bit";
    const fs::path dst = fs::path(tmp.path()) / "test_unpack_3bit";
    writable_copy(src, dst);
    onnx::TensorProto out;
    ASSERT_TRUE(out.ParseFromString(read_text((dst / "test_data_set_0/output_0.pb").string())));
    std::string raw = out.raw_data();
    ASSERT_FALSE(raw.empty());
    raw[0] ^= 1;
    out.set_raw_data(raw);
    write_file((dst / "test_data_set_0/output_0.pb").string(), out.SerializeAsString());

    const auto results = rt::run_node_tests(tmp.path(), false);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].passed);
    EXPECT_NE(results[0].message.find("1 of 8 elements differ"), std::string::npos)
        << results[0].message;

    const CliResult r = run_cli({"run", "--test-dir", tmp.path()});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(last_line(r.out), "0 passed, 1 failed") << r.out;
    EXPECT_NE(r.out.find("FAIL test_unpack_3bit"), std::string::npos) << r.out;
}

// Float tolerance: within rtol 1e-3 passes without --exact and fails with it.
TEST(NodeTestDir, ToleranceAndExact) {
    TempDir tmp;
    const fs::path dst = fs::path(tmp.path()) / "test_dequantizepacked_q4_0";
    writable_copy(fs::path(kNodeTests) / "test_dequantizepacked_q4_0", dst);
    const std::string path = (dst / "test_data_set_0/output_0.pb").string();
    rt::Tensor expected = rt::read_tensor_pb(path);
    std::vector<float> v = expected.to_vector<float>();
    v[1] = std::nextafter(v[1], 100.0f);  // one ulp away
    onnx::TensorProto out;
    rt::tensor_to_proto(tensor(DataType::float32, expected.shape(), v), "y", out);
    write_file(path, out.SerializeAsString());
    EXPECT_TRUE(rt::run_node_tests(dst.string(), false).at(0).passed);
    EXPECT_FALSE(rt::run_node_tests(dst.string(), true).at(0).passed);
}

TEST(NodeTestDir, EmptyDirectoryIsAnError) {
    TempDir tmp;
    EXPECT_THROW(rt::run_node_tests(tmp.path(), false), Error);
    const CliResult r = run_cli({"run", "--test-dir", tmp.path()});
    EXPECT_EQ(r.status, 1) << r.out;
}

}  // namespace
}  // namespace gguftool::rttest
