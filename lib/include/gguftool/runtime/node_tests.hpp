// Running ONNX backend node tests (model.onnx + test_data_set_N/) on a backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguftool/runtime/session.hpp"
#include "gguftool/runtime/tensor.hpp"

namespace gguftool::runtime {

struct NodeTestResult {
    std::string name;  // the test directory's name
    bool passed = false;
    std::string message;  // why it failed
};

// True when `dir` holds model.onnx (one node test).
bool is_node_test_dir(const std::string &dir);
// Runs one test directory (model.onnx + test_data_set_N/{input,output}_K.pb) or every test
// directory inside `dir` (sorted by name). input_K is bound to the K-th graph input that is not
// an initializer, output_K to the K-th graph output. Throws Error when `dir` holds no test.
std::vector<NodeTestResult> run_node_tests(const std::string &dir, bool exact,
                                           const RunOptions &options = {});

}  // namespace gguftool::runtime
