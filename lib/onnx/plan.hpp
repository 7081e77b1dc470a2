// Internal to lib/onnx: what the exporter builds before writing anything.
//
// A Plan is the graph without the tensor bytes (nodes, outputs, small constants) plus, for each
// initializer that holds tensor data, a Payload: its name, type, dims, size and a function that
// produces its bytes in order. The writers (model_writer.cpp) stream payloads into the .onnx or
// the external data file; nothing ever holds all of them.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::onnx_export::detail {

// Where payload bytes go. write() and copy() throw gguftool::Error on failure.
class Sink {
public:
    virtual void write(const uint8_t *data, size_t size) = 0;
    // Appends source.size bytes of the source file unchanged, copied in the kernel where it can
    // (OutputFile::copy_from): the payloads that are a tensor's bytes as they are.
    virtual void copy(const gguf::TensorData &source) = 0;

protected:
    ~Sink() = default;
};

struct Payload {
    std::string name;
    DataType data_type;
    std::vector<int64_t> dims;
    uint64_t bytes;
    std::function<void(Sink &)> write;  // writes exactly `bytes` bytes
};

struct Plan {
    onnx::GraphProto graph;  // nodes, outputs and small constant initializers (data inline)
    std::vector<Payload> payloads;
    size_t unpacked = 0;  // tensors in Unpack form
    size_t packed = 0;    // tensors decoded by DequantizePacked
};

// Bytes a payload producer handles at a time: bounds memory and paces the progress callback.
inline constexpr size_t kChunkBytes = size_t{8} << 20;

// Adds nodes, constants and outputs to a Plan under names that never collide: a wanted name
// already in use (a GGUF tensor name, another generated name) gets "_2", "_3"... appended.
class GraphBuilder {
public:
    GraphBuilder(Plan &plan, const std::vector<const gguf::TensorInfo *> &tensors);

    Plan &plan() { return plan_; }

    // A fresh value name based on `wanted`.
    std::string name(std::string wanted);

    // Where node() appends: the plan's graph, or, while set, a subgraph being built (a Loop's
    // body). Names stay unique across both; constants and payloads go to the plan's graph, which
    // a subgraph sees as outer-scope values.
    onnx::GraphProto *subgraph = nullptr;

    // Appends a node; returns it for attributes. Its name is `<owner>:<op>` made unique.
    onnx::NodeProto &node(std::string_view owner, const char *op,
                          std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs);

    // Shared constant initializers, created on first use (data inline in the graph) and named
    // after their value: gguftool:int64_32, gguftool:shape_2x512 (label "shape"),
    // gguftool:float_8, gguftool:<key>.
    std::string int64_scalar(int64_t v);
    std::string int64_vector(std::string_view label, const std::vector<int64_t> &v);
    std::string float_scalar(float v);
    std::string float_table(std::string_view key, const std::vector<float> &values);

    // A payload initializer named after `wanted`; returns its name.
    std::string payload(std::string wanted, DataType data_type, std::vector<int64_t> dims,
                        uint64_t bytes, std::function<void(Sink &)> write);

    // Declares graph output `name` (a GGUF tensor name) of the given type and dims; nothing when
    // declare_outputs is false (the decoder export, whose tensors feed its computation).
    bool declare_outputs = true;
    void output(std::string_view name, DataType data_type, const std::vector<int64_t> &dims);

private:
    Plan &plan_;
    std::unordered_set<std::string> values_;
    std::unordered_set<std::string> nodes_;
    std::map<std::string, std::string> constants_;  // key -> value name
};

// Node attributes.
void set_attribute(onnx::NodeProto &n, const char *name, int64_t v);
void set_attribute(onnx::NodeProto &n, const char *name, const std::string &v);
void set_attribute(onnx::NodeProto &n, const char *name, const std::vector<int64_t> &v);

// The GGUF dims in ONNX order (ne[n_dims-1], ..., ne[0]): gguftool::onnx_shape.
std::vector<int64_t> onnx_dims(const gguf::TensorInfo &t);

// Streaming from the read-only input mapping (input_stream.cpp), for payloads that transform the
// bytes (copies go through Sink::copy). After each chunk its pages are
// released from this process (madvise): the mapping stays valid, but resident memory does not
// grow with the model size. The pages stay in the page cache.

// Asks the kernel to map `mapping` (a whole shard) with small pages and to read ahead. Pages of
// the page cache held in large folios would otherwise be mapped 2 MiB at a time, mapping back in
// part of a chunk already released whenever the next chunk is touched.
void prepare_input(std::span<const uint8_t> mapping);

// Turns each `in_block`-byte block of `bytes` into `out_block` bytes:
// transform(in, nblocks, out) fills nblocks * out_block bytes at out.
using BlockTransform = std::function<void(const uint8_t *in, size_t nblocks, uint8_t *out)>;
void transform_blocks(Sink &sink, std::span<const uint8_t> bytes, size_t in_block, size_t out_block,
                      const BlockTransform &transform);

// Emitters, one per form (plain_tensor.cpp, packed_mode.cpp, unpack_mode.cpp,
// dequantized_mode.cpp). Each adds the initializers, nodes and graph output for one tensor.
// `swap_bytes`: the file is big-endian (plain values are byte-swapped; quantized data refused).
// emit_plain's `out`: the tensor's own type (bytes copied) or the floating type to convert to.
// `source`: the tensor's bytes in its file, for the payloads that copy them unchanged.
void emit_plain(GraphBuilder &g, const gguf::TensorInfo &t, const gguf::TensorData &source,
                bool swap_bytes, DataType out, unsigned threads);
void emit_packed(GraphBuilder &g, const gguf::TensorInfo &t, const gguf::TensorData &source,
                 DataType out);
// False when the format has no Unpack form (the caller falls back to emit_packed).
bool emit_unpack(GraphBuilder &g, const gguf::TensorInfo &t, DataType out);
void emit_dequantized(GraphBuilder &g, const gguf::TensorInfo &t, DataType out, unsigned threads);

// One GGUF tensor in the chosen form, into the value of its name: quantized tensors decoded to
// `quantized_out` (big-endian quantized data refused), plain ones converted to `plain_out`.
void emit_tensor(GraphBuilder &g, const gguf::Model &model, const gguf::TensorInfo &t, Mode mode,
                 DataType quantized_out, DataType plain_out, unsigned threads);

// The graph's name: general.name, else the file's stem.
std::string graph_name(const gguf::Model &model);

// The default-domain opset the model imports: 29 for packed and unpack modes (DequantizePacked,
// Unpack); for dequantized mode, which holds Identity nodes only, the lowest version whose
// Identity allows every output type, so runtimes without opset 29 load it (opset.cpp).
int model_opset(Mode mode, const onnx::GraphProto &graph);

// GGUF metadata (and the source file's name and GGUF version) into model.metadata_props.
// Returns notes about arrays cut to `max_array` elements.
std::vector<std::string> add_metadata_props(onnx::ModelProto &model, const gguf::Model &gguf,
                                            std::optional<uint64_t> max_array);

}  // namespace gguftool::onnx_export::detail
