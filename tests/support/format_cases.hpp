// DequantizePacked test cases for every quantized format: llama.cpp-quantized values (imatrix
// where the type requires one), random bytes (NaN, Inf and subnormal scales, every code) and an
// empty tensor, each with llama.cpp's decode; and the opset-29 model that decodes them. Used by
// the onnxruntime and the Ascend backend tests.
//
// llama.cpp's quantizers are slow (the IQ grids), so the cases are made once per build: the first
// test process to want them writes them, under a lock, to a file in the build tree named by a key
// of the llama.cpp library's bytes and the generator's version; every later one reads that file.
// The file holds llama.cpp's output only (its quantized bytes and its decode).
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ggml_data.hpp"
#include "gguftool/data_type.hpp"
#include "gguftool/types.hpp"

namespace gguftool::testkit {

constexpr int64_t kFormatRows = 2, kFormatRowElements = 1024;

struct FormatCase {
    std::string name;  // output name
    GgmlType type;
    std::vector<int64_t> shape;  // ONNX order
    std::vector<uint8_t> bytes;
    std::vector<float> want;  // llama.cpp's decode
};

// The cases, from the build's cache (made on first use). Throws std::runtime_error without
// llama.cpp.
const std::vector<FormatCase> &format_cases();

// The cases made afresh with llama.cpp (what the cache holds).
std::vector<FormatCase> make_format_cases();

// A model of one DequantizePacked node per case (x an initializer), at opset 29. With
// `widen_bfloat16`, a bfloat16 output goes through one Cast to FLOAT (onnxruntime-node cannot hand
// bfloat16 tensors back; the widening is exact) and the graph output is "<name>_as_float".
onnx::ModelProto packed_model(DataType dtype, const std::vector<const FormatCase *> &chosen,
                              bool widen_bfloat16 = true);

// Whether the element at p, of floating type t (little-endian), is a NaN.
inline bool is_nan(const uint8_t *p, DataType t) {
    if (t == DataType::float16) {
        const uint16_t h = uint16_t(p[0] | p[1] << 8);
        return (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    }
    if (t == DataType::bfloat16) {
        const uint16_t h = uint16_t(p[0] | p[1] << 8);
        return (h & 0x7F80) == 0x7F80 && (h & 0x7F);
    }
    if (t == DataType::float64) {
        double d;
        std::memcpy(&d, p, 8);
        return std::isnan(d);
    }
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
}

}  // namespace gguftool::testkit
