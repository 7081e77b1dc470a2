// Internal to lib/onnx: serializing a Plan's model, streaming the payloads.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguftool/onnx_export.hpp"
#include "gguftool/output_file.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export::detail {

using Progress = std::function<void(uint64_t done, uint64_t total)>;

// `model` serialized as one message with every payload inline as raw_data, but for the payload
// bytes themselves. `model`'s graph holds everything but the payload initializers.
struct InlineLayout {
    std::string model_head;  // ModelProto fields before the graph (1-6)
    std::string model_tail;  // ModelProto fields after the graph (8+)
    std::string graph_head;  // GraphProto fields up to the initializers (nodes, name, constants)
    std::string graph_tail;  // GraphProto fields after the initializers (outputs)
    std::vector<std::string> tensor_heads;  // per payload: TensorProto fields and raw_data frame
    uint64_t graph_size = 0;
    uint64_t total_size = 0;  // the whole file
};
InlineLayout layout_inline(const onnx::ModelProto &model, const std::vector<Payload> &payloads);

// Writes that message to `out`, streaming each payload into its raw_data field.
void write_inline(const InlineLayout &layout, const std::vector<Payload> &payloads, OutputFile &out,
                  const Progress &progress);

// Streams the payloads into `data` (each at an offset aligned to kExternalAlignment), then writes
// `model` to `out` with one initializer per payload that refers to it by `location` (the data
// file's name, relative to the model), offset and length.
void write_external(onnx::ModelProto model, const std::vector<Payload> &payloads, OutputFile &out,
                    OutputFile &data, const std::string &location, const Progress &progress);

}  // namespace gguftool::onnx_export::detail
