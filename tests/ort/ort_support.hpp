// Running onnxruntime from the tests: node with onnxruntime-node (pinned in package.json,
// installed by npm ci) driving tests/ort/run_ort.mjs. Tests skip, saying why, when node or
// onnxruntime-node cannot be loaded.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../cli/cli_support.hpp"

namespace gguftool::orttest {

inline const std::string kNode = GGUFTOOL_NODE;  // empty when CMake found no node
inline const std::string kDriver = GGUFTOOL_ORT_DRIVER;
inline const std::string kOrtPackage =
    std::string(GGUFTOOL_SOURCE_DIR) + "/node_modules/onnxruntime-node";

// Why onnxruntime cannot run here, or "" when it can.
inline const std::string &ort_unavailable() {
    static const std::string why = [] {
        if (kNode.empty()) return std::string("no node binary found at configure time");
        const test::RunResult r =
            test::run_program({kNode, "-e", "require(process.argv[1])", kOrtPackage});
        return r.status == 0 ? std::string()
                             : "node cannot load " + kOrtPackage + " (npm ci): " + r.err;
    }();
    return why;
}

#define SKIP_WITHOUT_ORT() \
    if (!ort_unavailable().empty()) GTEST_SKIP() << ort_unavailable()

}  // namespace gguftool::orttest
