// Tensor files: serialized TensorProto (.pb) and NumPy (.npy), told apart by content.
#include <fmt/format.h>

#include <climits>
#include <cstring>
#include <filesystem>

#include "gguftool/mapped_file.hpp"
#include "tensor_proto.hpp"

namespace gguftool::runtime {

Tensor read_tensor_pb(const std::string &path) {
    const auto file = MappedFile::open(path);
    const std::span<const uint8_t> bytes = file->bytes();
    if (bytes.size() > size_t(INT_MAX))
        throw Error(path, std::nullopt, "a serialized TensorProto cannot exceed 2 GiB");
    onnx::TensorProto proto;
    if (!proto.ParseFromArray(bytes.data(), int(bytes.size())))
        throw Error(path, std::nullopt, "not a valid serialized TensorProto");
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    detail::ExternalData external(dir.empty() ? std::string(".") : dir.string());
    return detail::tensor_from_proto(proto, external, path, nullptr);
}

Tensor read_tensor_file(const std::string &path) {
    const auto file = MappedFile::open(path);
    const std::span<const uint8_t> bytes = file->bytes();
    if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0)
        return decode_npy(bytes, path);
    return read_tensor_pb(path);
}

}  // namespace gguftool::runtime
