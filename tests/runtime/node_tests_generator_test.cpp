// testdata/node-tests is byte for byte what tests/support/node_tests.hpp writes, and where
// GGUFTOOL_SHARED_DIR/onnx-node-tests holds a test of the same name, both say the same: the same
// model (but for the producer's name) and, for the same inputs, the same expected outputs.
#include "node_tests.hpp"
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

// Every file under `dir`, as paths relative to it, sorted.
std::vector<std::string> files_under(const fs::path &dir) {
    std::vector<std::string> names;
    for (const auto &e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) names.push_back(fs::relative(e.path(), dir).string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string names_only_in(const std::vector<std::string> &a, const std::vector<std::string> &b) {
    std::string out;
    for (const std::string &n : a)
        if (!std::binary_search(b.begin(), b.end(), n)) out += " " + n;
    return out;
}

TEST(NodeTestGenerator, ReproducesTheCommittedFilesByteForByte) {
    const TempDir tmp;
    EXPECT_EQ(testkit::write_node_tests(tmp.path()), testkit::node_test_cases().size());
    const fs::path committed = kRepositoryNodeTests.dir;
    ASSERT_TRUE(fs::is_directory(committed)) << committed;
    const std::vector<std::string> fresh = files_under(tmp.path()), have = files_under(committed);
    ASSERT_TRUE(fresh == have) << "missing:" << names_only_in(fresh, have)
                               << "\nnot written by the generator:" << names_only_in(have, fresh)
                               << "\nregenerate with: make_node_tests " << committed.string();
    for (const std::string &name : fresh)
        EXPECT_TRUE(read_text(tmp.file(name)) == read_text((committed / name).string()))
            << name << " differs from what tests/support/node_tests.hpp builds";
}

TEST(NodeTestGenerator, WritesTheSameBytesEachRun) {
    const TempDir a, b;
    testkit::write_node_tests(a.path());
    testkit::write_node_tests(b.path());
    const std::vector<std::string> names = files_under(a.path());
    ASSERT_EQ(names, files_under(b.path()));
    for (const std::string &name : names)
        EXPECT_TRUE(read_text(a.file(name)) == read_text(b.file(name))) << name;
}

TEST(NodeTestGenerator, HasEverySpecExample) {
    std::vector<std::string> names;
    for (const testkit::NodeTestCase &c : testkit::node_test_cases()) names.push_back(c.name);
    for (const char *name : {"test_dequantizepacked_q4_0",
                             "test_dequantizepacked_q5_1",
                             "test_dequantizepacked_iq4_nl_float16",
                             "test_dequantizepacked_mxfp4",
                             "test_dequantizepacked_empty",
                             "test_unpack_uint32_axis",
                             "test_unpack_ternary",
                             "test_unpack_3bit",
                             "test_unpack_rows_5bit",
                             "test_unpack_empty",
                             "test_unpack_empty_rows",
                             "test_unsqueeze_axis_0",
                             "test_unsqueeze_axis_1",
                             "test_unsqueeze_axis_2",
                             "test_unsqueeze_axis_3",
                             "test_unsqueeze_two_axes",
                             "test_unsqueeze_three_axes",
                             "test_unsqueeze_unsorted_axes",
                             "test_unsqueeze_negative_axes",
                             "test_unsqueeze_v1_attr_axes",
                             "test_onehot_with_axis",
                             "test_onehot_without_axis",
                             "test_matmul_2d",
                             "test_matmul_3d",
                             "test_matmul_4d",
                             "test_gemm_all_attributes",
                             "test_gemm_default_no_bias",
                             "test_gemm_transposeB",
                             "test_softmax_example",
                             "test_softmax_axis_0",
                             "test_softmax_negative_axis",
                             "test_reduce_mean_keepdims_example",
                             "test_reduce_mean_do_not_keepdims_example",
                             "test_reduce_mean_negative_axes_keepdims_example",
                             "test_reduce_mean_default_axes_keepdims_example",
                             "test_reduce_mean_v13_negative_axes_keepdims_example",
                             "test_sqrt_example",
                             "test_tanh_example",
                             "test_sigmoid_example",
                             "test_exp_example",
                             "test_reciprocal_example",
                             "test_greater_bcast",
                             "test_less_equal",
                             "test_and_bcast4v4d",
                             "test_or3d",
                             "test_not_2d",
                             "test_expand_dim_changed",
                             "test_squeeze_negative_axes"})
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(NodeTestGenerator, AgreesWithTheSharedTestsOfTheSameName) {
    if (!testkit::is_present(testkit::kSharedNodeTests))
        GTEST_SKIP() << testkit::not_found(testkit::kSharedNodeTests);
    size_t compared = 0, same_inputs = 0;
    for (const fs::path &ours : testkit::node_test_dirs(kRepositoryNodeTests)) {
        const fs::path theirs = testkit::kSharedNodeTests.dir / ours.filename();
        if (!fs::exists(theirs / "model.onnx")) continue;
        SCOPED_TRACE(ours.filename().string());
        ++compared;
        const onnx::ModelProto a = testkit::load_model(ours / "model.onnx");
        onnx::ModelProto b = testkit::load_model(theirs / "model.onnx");
        b.clear_producer_name();  // ONNX's generator signs its own tests "backend-test"
        EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString()) << "ours:\n"
                                                                << a.DebugString() << "shared:\n"
                                                                << b.DebugString();
        // Unsqueeze's shared inputs are random numbers; ours are fixed. Compare outputs only
        // where the inputs are the same.
        const fs::path da = ours / "test_data_set_0", db = theirs / "test_data_set_0";
        ASSERT_EQ(files_under(da), files_under(db));
        bool inputs_equal = true;
        for (int k = 0; k < a.graph().input_size(); ++k) {
            const std::string f = "input_" + std::to_string(k) + ".pb";
            inputs_equal &= read_text((da / f).string()) == read_text((db / f).string());
        }
        if (!inputs_equal) continue;
        ++same_inputs;
        EXPECT_EQ(read_text((da / "output_0.pb").string()),
                  read_text((db / "output_0.pb").string()));
    }
    EXPECT_GE(compared, 18u);
    EXPECT_GE(same_inputs, 14u);  // all but the four random-input Unsqueeze tests
}

}  // namespace
}  // namespace gguftool::rttest
