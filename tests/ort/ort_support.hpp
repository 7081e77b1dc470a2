// Shared by the onnxruntime tests: where node and the driver are, whether onnxruntime can run here,
// running a model, and the bytes llama.cpp's float decodes to in each output type.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"
#include "../quant/reference_rounding.hpp"
#include "gguftool/data_type.hpp"

namespace gguftool::orttest {

using test::run_gguftool;
using test::RunResult;
using testkit::TempDir;

inline const std::string kNode = GGUFTOOL_NODE;  // empty when CMake found no node
inline const std::string kDriver = GGUFTOOL_ORT_DRIVER;
inline const std::string kOrtPackage =
    std::string(GGUFTOOL_SOURCE_DIR) + "/node_modules/onnxruntime-node";

// Why onnxruntime cannot run here, or "" when it can.
inline const std::string &ort_unavailable() {
    static const std::string why = [] {
        if (kNode.empty()) return std::string("no node binary found at configure time");
        const RunResult r = testkit::run({kNode, "-e", "require(process.argv[1])", kOrtPackage});
        return r.status == 0 ? std::string()
                             : "node cannot load " + kOrtPackage + " (npm ci): " + r.err;
    }();
    return why;
}

#define SKIP_WITHOUT_ORT() \
    if (!ort_unavailable().empty()) GTEST_SKIP() << ort_unavailable()

inline RunResult run_ort(const std::string &model, const std::string &outdir,
                         const std::vector<std::string> &inputs = {}) {
    std::vector<std::string> argv = {kNode, kDriver, model, outdir};
    argv.insert(argv.end(), inputs.begin(), inputs.end());
    return testkit::run(argv);
}

// The bytes an output of `dtype` should hold for llama.cpp's float `f`: f itself, rounded once to
// nearest even (float16, by the tests' own rounding), or widened (double).
inline void append_expected(std::vector<uint8_t> &out, float f, DataType dtype) {
    uint8_t b[8];
    size_t n = 4;
    if (dtype == DataType::float64) {
        const double d = f;
        std::memcpy(b, &d, n = 8);
    } else if (dtype == DataType::float16) {
        const uint16_t h = testref::half_reference().from_float(f);
        std::memcpy(b, &h, n = 2);
    } else {
        std::memcpy(b, &f, 4);
    }
    out.insert(out.end(), b, b + n);
}

}  // namespace gguftool::orttest
