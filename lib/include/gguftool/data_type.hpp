// Element types, numbered as ONNX TensorProto.DataType: the one enum for the decode API's output
// types, the runtime's tensors and the opset-29 attributes (DequantizePacked's output_dtype).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace gguftool {

enum class DataType : int32_t {
    undefined = 0,
    float32 = 1,
    uint8 = 2,
    int8 = 3,
    uint16 = 4,
    int16 = 5,
    int32 = 6,
    int64 = 7,
    bool_ = 9,
    float16 = 10,
    float64 = 11,
    uint32 = 12,
    uint64 = 13,
    bfloat16 = 16,
};

// The TensorProto.DataType number, for protobuf fields and attributes (Cast's `to`).
constexpr int32_t onnx_number(DataType t) {
    return static_cast<int32_t>(t);
}
// The listed type with ONNX number `onnx_type`, or nullopt (string, complex, float8, ...).
std::optional<DataType> dtype_from_onnx(int64_t onnx_type);
size_t dtype_size(DataType t);       // bytes per element; 0 for undefined
const char *dtype_name(DataType t);  // ONNX spelling: "float", "float16", "double", "bool", ...
bool is_floating(DataType t);        // float32, float16, bfloat16, float64
bool is_integer(DataType t);         // the eight integer types (not bool)
bool is_unsigned(DataType t);        // uint8, uint16, uint32, uint64

}  // namespace gguftool
