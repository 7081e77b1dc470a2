// Reading and writing host tensors: NumPy .npy and serialized onnx.TensorProto (.pb).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gguftool/runtime/tensor.hpp"

namespace onnx {
class TensorProto;  // onnx_pb.h: only code that uses it includes protobuf
}  // namespace onnx

namespace gguftool::runtime {

// NumPy .npy (format 1.0 to 3.0 read, 1.0 written; C order; little-endian written, either read).
// float16 is '<f2'. bfloat16, which NumPy lacks, is written as raw 16-bit words '<u2' with the
// header comment "# gguftool: bfloat16 stored as raw uint16 words" (NumPy ignores it); reading
// such a file gives a bfloat16 tensor again. bool is '|b1'.
Tensor read_npy(const std::string &path);
void write_npy(const std::string &path, const Tensor &t);
std::vector<uint8_t> encode_npy(const Tensor &t);
Tensor decode_npy(std::span<const uint8_t> bytes, const std::string &where);

// Serialized onnx.TensorProto (.pb); external data is resolved relative to the file's directory.
Tensor read_tensor_pb(const std::string &path);
// .npy or .pb, told apart by content (the NumPy magic).
Tensor read_tensor_file(const std::string &path);
// A TensorProto's value: raw_data or the typed fields, or external data (location relative to
// base_dir, which it may not leave). `where` names it in errors.
Tensor tensor_from_proto(const onnx::TensorProto &proto, const std::string &base_dir,
                         const std::string &where);
void tensor_to_proto(const Tensor &t, const std::string &name, onnx::TensorProto &out);

}  // namespace gguftool::runtime
