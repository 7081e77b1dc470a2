// Comparing two host tensors as ONNX's test runner does (NumPy's assert_allclose), or bit for bit.
// (verify::compare_bits is the other comparison: bits and ULPs of decoded weights.)
#pragma once

#include <cstdint>
#include <string>

#include "gguftool/runtime/tensor.hpp"

namespace gguftool::runtime {

struct AllcloseResult {
    bool equal = false;
    uint64_t mismatches = 0;
    double max_abs_diff = 0;  // floats only
    std::string message;      // why not equal: dtype, shape, or the first differing element
};

// Integers and bool: exact. Floats: |got - expected| <= atol + rtol * |expected| (NumPy's
// assert_allclose, ONNX's runner defaults), infinities must match; with `exact`, identical bits.
// NaN equals NaN in both modes.
AllcloseResult allclose(const Tensor &got, const Tensor &expected, bool exact, double rtol = 1e-3,
                        double atol = 1e-7);

}  // namespace gguftool::runtime
