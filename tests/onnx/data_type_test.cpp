// The plain GGUF types map to the ONNX element types with the same values (onnx.proto's numbers,
// taken from the onnx library here, not from our table).
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

TEST(OnnxDataType, PlainTypesMatchOnnxProto) {
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::f32)), onnx::TensorProto::FLOAT);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::f16)), onnx::TensorProto::FLOAT16);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::bf16)), onnx::TensorProto::BFLOAT16);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::f64)), onnx::TensorProto::DOUBLE);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::i8)), onnx::TensorProto::INT8);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::i16)), onnx::TensorProto::INT16);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::i32)), onnx::TensorProto::INT32);
    EXPECT_EQ(onnx_number(onnx_data_type(GgmlType::i64)), onnx::TensorProto::INT64);
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        if (type_traits(id)->quantized || type_traits(id)->removed) {
            EXPECT_EQ(onnx_number(onnx_data_type(GgmlType(id))), onnx::TensorProto::UNDEFINED)
                << id;
        }
    }
}

// The one element-type enum is numbered as onnx.proto's TensorProto.DataType, so protobuf fields
// take onnx_number() unchanged.
TEST(OnnxDataType, EnumIsOnnxProtosNumbering) {
    EXPECT_EQ(onnx_number(DataType::undefined), onnx::TensorProto::UNDEFINED);
    EXPECT_EQ(onnx_number(DataType::float32), onnx::TensorProto::FLOAT);
    EXPECT_EQ(onnx_number(DataType::uint8), onnx::TensorProto::UINT8);
    EXPECT_EQ(onnx_number(DataType::int8), onnx::TensorProto::INT8);
    EXPECT_EQ(onnx_number(DataType::uint16), onnx::TensorProto::UINT16);
    EXPECT_EQ(onnx_number(DataType::int16), onnx::TensorProto::INT16);
    EXPECT_EQ(onnx_number(DataType::int32), onnx::TensorProto::INT32);
    EXPECT_EQ(onnx_number(DataType::int64), onnx::TensorProto::INT64);
    EXPECT_EQ(onnx_number(DataType::bool_), onnx::TensorProto::BOOL);
    EXPECT_EQ(onnx_number(DataType::float16), onnx::TensorProto::FLOAT16);
    EXPECT_EQ(onnx_number(DataType::float64), onnx::TensorProto::DOUBLE);
    EXPECT_EQ(onnx_number(DataType::uint32), onnx::TensorProto::UINT32);
    EXPECT_EQ(onnx_number(DataType::uint64), onnx::TensorProto::UINT64);
    EXPECT_EQ(onnx_number(DataType::bfloat16), onnx::TensorProto::BFLOAT16);
    EXPECT_EQ(dtype_from_onnx(onnx::TensorProto::STRING), std::nullopt);
    EXPECT_EQ(dtype_from_onnx(onnx::TensorProto::FLOAT16), DataType::float16);
}

}  // namespace
}  // namespace gguftool::onnxtest
