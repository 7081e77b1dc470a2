// Where the ONNX backend node tests are: the repository's own (testdata/node-tests, written by
// tools/make_node_tests) always, and the shared ones beside the checkout
// (GGUFTOOL_SHARED_DIR/onnx-node-tests, a CMake cache variable defaulting to ../shared) when they
// are there: CI and developers have them, a bare clone does not.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace gguftool::testkit {

struct NodeTestRoot {
    std::string name;  // "repository" or "shared", the test parameter's name
    std::filesystem::path dir;
    size_t min_tests;  // how many test directories it holds at least
};

inline const NodeTestRoot kRepositoryNodeTests = {
    "repository", std::filesystem::path(GGUFTOOL_SOURCE_DIR) / "testdata" / "node-tests", 100};
inline const NodeTestRoot kSharedNodeTests = {
    "shared", std::filesystem::path(GGUFTOOL_SHARED_DIR) / "onnx-node-tests", 18};

// How gtest shows the parameter (instead of its bytes).
inline void PrintTo(const NodeTestRoot &root, std::ostream *os) {
    *os << root.name << " (" << root.dir.string() << ")";
}

inline bool is_present(const NodeTestRoot &root) {
    return std::filesystem::is_directory(root.dir);
}

// Why a test that needs `root` is skipped.
inline std::string not_found(const NodeTestRoot &root) {
    return "../shared/onnx-node-tests not found: " + root.dir.string() +
           " is missing (set GGUFTOOL_SHARED_DIR to where shared/ is)";
}

// The roots to run: the repository's, then the shared one when present.
inline std::vector<NodeTestRoot> present_node_test_roots() {
    std::vector<NodeTestRoot> roots = {kRepositoryNodeTests};
    if (is_present(kSharedNodeTests)) roots.push_back(kSharedNodeTests);
    return roots;
}

// The test directories (those holding model.onnx) of `root`, sorted by name.
inline std::vector<std::filesystem::path> node_test_dirs(const NodeTestRoot &root) {
    std::vector<std::filesystem::path> dirs;
    for (const auto &e : std::filesystem::directory_iterator(root.dir))
        if (e.is_directory() && std::filesystem::exists(e.path() / "model.onnx"))
            dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

// Whether a node test (its directory name) is one of the repository's tests of the LLM decoder
// operators (MatMul to Squeeze, tests/support/node_tests.hpp's decoder_op_cases, and the
// mixture-of-experts selections, its selection_cases): CPU-only operators (the Ascend backend
// reports them unsupported) with nothing to lower, whose expected values are double-precision
// references that other runtimes' float kernels need not match bit for bit (and ScatterND-18's
// reductions cannot be re-stamped as 17).
inline bool is_decoder_operator_test(const std::string &name) {
    for (const char *prefix :
         {"test_matmul_", "test_gemm_", "test_softmax_", "test_reduce_mean_", "test_sqrt",
          "test_tanh", "test_sigmoid", "test_exp", "test_reciprocal", "test_greater", "test_less",
          "test_and", "test_or", "test_not_", "test_expand_", "test_squeeze", "test_top_k",
          "test_nonzero", "test_scatternd"})
        if (name.starts_with(prefix)) return true;
    return false;
}

// Every test directory of every present root.
inline std::vector<std::filesystem::path> all_node_test_dirs() {
    std::vector<std::filesystem::path> dirs;
    for (const NodeTestRoot &root : present_node_test_roots()) {
        const auto some = node_test_dirs(root);
        dirs.insert(dirs.end(), some.begin(), some.end());
    }
    return dirs;
}

// A test run once per root:
//   INSTANTIATE_TEST_SUITE_P(Roots, F, ::testing::ValuesIn(kNodeTestRoots), root_name);
// For a missing ../shared it is skipped, saying so, instead of failing.
inline const std::vector<NodeTestRoot> kNodeTestRoots = {kRepositoryNodeTests, kSharedNodeTests};

inline std::string root_name(const ::testing::TestParamInfo<NodeTestRoot> &info) {
    return info.param.name;
}

class NodeTestRootTest : public ::testing::TestWithParam<NodeTestRoot> {
protected:
    void SetUp() override {
        if (!is_present(GetParam())) GTEST_SKIP() << not_found(GetParam());
    }
    const std::filesystem::path &root_dir() const { return GetParam().dir; }
};

}  // namespace gguftool::testkit
