// Loading an ONNX model (external data included) and running its graph on a backend.
//
// One call does it all:
//     auto outputs = gguftool::runtime::run_model("model.onnx");   // [(name, Tensor)...]
//
// Every problem is a gguftool::Error naming the file and, for graph problems, the node
// ("node \"n\" (Unpack-29): ...").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gguftool/runtime/backend.hpp"
#include "gguftool/runtime/tensor.hpp"

namespace onnx {
class ModelProto;  // onnx_pb.h: only code that uses it includes protobuf
}  // namespace onnx

namespace gguftool::runtime {

// A graph input or output as declared: dtype (undefined if not declared) and dims (nullopt where
// symbolic or absent; `dims` empty and has_shape false when no shape is declared).
struct ValueInfo {
    std::string name;
    DataType dtype = DataType::undefined;
    bool has_shape = false;
    std::vector<std::optional<int64_t>> dims;
};

// A loaded, validated model: opsets resolved, every node's operator known, nodes in an execution
// order, initializers (external data memory-mapped, not copied) ready. Copies share the model.
class Model {
public:
    // Parses `path`; external data is found relative to its directory.
    static Model load(const std::string &path);
    // From a ModelProto built in memory (external data relative to base_dir).
    static Model from_proto(const onnx::ModelProto &proto, const std::string &base_dir = ".",
                            const std::string &name = "<model>");
    static Model from_bytes(std::span<const uint8_t> bytes, const std::string &base_dir,
                            const std::string &name);

    const std::string &name() const;               // the path, or the name given
    const std::vector<ValueInfo> &inputs() const;  // inputs to feed (initializers excluded)
    const std::vector<ValueInfo> &outputs() const;
    int64_t opset() const;  // version of the default domain ("" / "ai.onnx")
    size_t node_count() const;

    struct Impl;
    const Impl &impl() const { return *impl_; }

private:
    std::shared_ptr<const Impl> impl_;
};

// Time and traffic of one node in a profiled run.
struct NodeProfile {
    std::string node;  // node name, or "#index" when unnamed
    std::string op;    // "DequantizePacked-29"
    double seconds = 0;
    uint64_t bytes_read = 0;     // all inputs
    uint64_t bytes_written = 0;  // all outputs
    uint64_t device_calls = 0;   // operator launches on the device (Backend::device_calls)
    std::string backend;         // the backend that ran it ("ascend", or "cpu" for a fallback)
    // For a node the session lowered for its backend: the original node's label and format
    // ("\"blk.0.w\" (DequantizePacked-29, q4_0)"); empty otherwise.
    std::string lowered_from;
};

// How a session on the CPU multiplies by the weights a DequantizePacked node decodes (a Gemm's
// B, a Gather's data): docs/RUNTIME.md, "Fused weight products".
enum class WeightProducts {
    // Fused with their DequantizePacked (no float copy of a weight is made). A product with few
    // rows (a decode step) quantizes its activations to int8 per block and takes integer dot
    // products, as llama.cpp does, where the format has a dot kernel; the others decode tiles of
    // weight rows to float and multiply them with OpenBLAS. A Gather decodes only its rows.
    fused,
    // Fused, every product on tiles decoded to float: bit for bit the results of `unfused`.
    fused_float,
    // As the graph says: each weight decoded whole to float, then the Gemm or Gather.
    unfused,
};

struct RunOptions {
    std::string backend = "cpu";
    unsigned threads = 0;  // 0 = all cores (the CPU backend's, and a fallback CPU backend's)
    int device = 0;        // for backends with devices (ascend)
    bool profile = false;  // record a NodeProfile per node
    // A backend other than the CPU: the nodes it cannot run run on a CPU backend instead (values
    // copied between the two where a node's input lives on the other). false: such nodes are an
    // Error listing each, before anything runs.
    bool fallback = true;
    WeightProducts weight_products = WeightProducts::fused;
};

// Where a session runs one node of its model (as fitted: lowered where the backend asked).
struct NodePlacement {
    std::string node;     // node name, or "#index" when unnamed
    std::string op_type;  // "MatMul"
    std::string backend;  // the backend's name: "ascend", or "cpu" for a node that fell back
    // For a node that fell back: why the session's backend does not run it (its query answer,
    // "the ascend backend has no MatMul"); empty otherwise.
    std::string reason;
};

// One line on where a session's nodes run, per operator type, with the reasons of the nodes that
// fell back ("placement: 180 nodes on ascend (Add 40, Mul 60, ...), 20 on cpu (MatMul 8: the
// ascend backend has no MatMul; Softmax 2: ...)").
std::string placement_summary(const std::vector<NodePlacement> &placement);

using Inputs = std::map<std::string, Tensor>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using OutputCallback = std::function<void(const std::string &name, const Tensor &value)>;

// A model bound to a backend. Construction asks the backend about every node (Backend::query):
// nodes it wants lowered are lowered (gguftool lower, at lower::kMaxOpset), and a node it cannot
// run is placed on a CPU backend (RunOptions::fallback; the CPU backend itself has none) or, when
// the CPU cannot run it either or fallback is off, an Error naming the node, before anything runs.
// Initializers are uploaded once, at construction, to each backend whose nodes use them, and stay
// resident for every run. A value used on a backend other than its producer's is copied there
// (downloaded, uploaded) once per run; graph outputs are downloaded from where they live.
class Session {
public:
    explicit Session(Model model, const RunOptions &options = {});
    // On `backend` (options.backend is not used; options.threads are the fallback CPU's).
    Session(Model model, std::unique_ptr<Backend> backend, const RunOptions &options);
    Session(Model model, std::unique_ptr<Backend> backend, bool profile = false);
    ~Session();
    Session(Session &&) noexcept;

    // Runs the graph; returns every graph output, in graph order. Inputs are checked against the
    // declared dtypes and dims; inputs the graph does not have are an error.
    NamedTensors run(const Inputs &inputs = {});
    // Streaming: hands each graph output to `on_output` as soon as it is computed, then frees it
    // unless a later node needs it, so memory stays bounded by what is live.
    void run(const Inputs &inputs, const OutputCallback &on_output);

    // One step of a loop that feeds outputs back as inputs, as a decoder's generation loop does
    // (each "present.*" output is the next step's "past_key_values.*"): `carry` pairs such an
    // output with the input it feeds. The carried outputs are kept where they are, not handed
    // out, and bound to their inputs at the next run_step (an input given in `inputs` overrides
    // its carried value); at the first step, and after clear_carried(), `inputs` gives them. On
    // the CPU a KV cache carried so is appended in place: no step copies the cache (a KvConcat,
    // fuse.hpp). Returns the outputs not carried, in graph order.
    using Carry = std::vector<std::pair<std::string, std::string>>;  // (output, input)
    NamedTensors run_step(const Inputs &inputs, const Carry &carry);
    void clear_carried();
    // A carried output as the next step would bind it, on the host (a copy when it is a cache
    // with room left); undefined when nothing is carried under that name.
    Tensor carried(const std::string &output);

    const std::vector<NodeProfile> &profile() const;  // of the last run (when profiling)
    const Model &model() const;
    Backend &backend();  // the session's backend (not the fallback)
    // Per node of model()'s execution order: the backend it runs on, and why when it fell back.
    const std::vector<NodePlacement> &placement() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// An operator the runtime runs: its domain ("" the default one, "com.microsoft"), its type and
// the versions whose semantics differ here, ascending (a model at opset V runs the newest version
// not above V).
struct OperatorVersions {
    std::string domain;
    std::string op_type;
    std::vector<int> versions;
};
// Every operator of the runtime's table, in the table's order.
std::vector<OperatorVersions> supported_operators();

// Loads `model_path` and runs it: the graph outputs by name, in graph order.
NamedTensors run_model(const std::string &model_path, const Inputs &inputs = {},
                       const RunOptions &options = {});

}  // namespace gguftool::runtime
