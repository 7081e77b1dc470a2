// TensorProto -> Tensor, with external data (internal to lib/runtime).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>

#include "gguftool/mapped_file.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::runtime::detail {

// Resolves TensorProto external data against one directory, mapping each data file once.
class ExternalData {
public:
    explicit ExternalData(std::string base_dir) : base_dir_(std::move(base_dir)) {}

    // The `nbytes` bytes a tensor's external_data entries point at. `owner` receives what keeps
    // them alive. Rejects absolute locations and any ".." component, offsets and lengths outside
    // the file, and a length that differs from nbytes.
    std::span<const uint8_t> bytes(const onnx::TensorProto &proto, uint64_t nbytes,
                                   const std::string &where, std::shared_ptr<const void> *owner);

private:
    std::string base_dir_;
    std::map<std::string, std::shared_ptr<const MappedFile>> files_;
};

// A TensorProto's value. With `proto_owner` set (it must keep `proto` alive) raw_data is viewed,
// not copied.
Tensor tensor_from_proto(const onnx::TensorProto &proto, ExternalData &external,
                         const std::string &where, std::shared_ptr<const void> proto_owner);

}  // namespace gguftool::runtime::detail
