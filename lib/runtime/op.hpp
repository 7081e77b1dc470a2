// An operator is its rows (OpDef: versions, arity, attributes, output type, run function), kept
// beside its run function in an op_*.cpp file; op_registry.cpp joins every file's rows into the
// table. What a run function sees is an OpContext: its node, its inputs on the backend, typed
// attribute access with validation, and where to put its outputs (internal to lib/runtime).
//
// Operators validate everything that does not depend on data values (attributes, dtypes, shapes),
// allocate their outputs, and run the backend's kernel for the operator (run_kernel) with the
// attributes they checked and derived; views (Reshape, ...) and host-side values (Shape,
// Constant) run none. The comment above a run function is its kernel's contract: the inputs,
// outputs and attributes a kernel gets. Operators throw gguftool::Error with the bare problem;
// the session prefixes the model and the node.
#pragma once

#include <onnx/onnx_pb.h>

#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/dims.hpp"
#include "gguftool/runtime.hpp"
#include "tensor_proto.hpp"

namespace gguftool::runtime::detail {

struct OpDef;

class OpContext {
public:
    OpContext(const OpDef &def, const onnx::NodeProto &node, Backend &backend,
              ExternalData &external, std::vector<const DeviceTensor *> inputs);

    const onnx::NodeProto &node() const { return node_; }
    int version() const { return version_; }  // the operator version whose semantics apply
    Backend &backend() { return backend_; }
    ExternalData &external() { return external_; }

    size_t input_count() const { return inputs_.size(); }
    bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i]; }
    // Input i; throws when it is absent (an omitted optional input).
    const DeviceTensor &input(size_t i) const;
    // Input i copied to the host (for small control tensors: axes, shape, count, depth).
    Tensor host_input(size_t i);
    // Input i, a small control tensor of INT64 values (or INT32 when `int32_ok`), on the host:
    // one-dimensional, or a scalar when `scalar_ok`. `what` names it ("axes").
    std::vector<int64_t> index_list(size_t i, const char *what, bool int32_ok, bool scalar_ok);

    void set_output(size_t i, DeviceTensor t) { outputs_.at(i) = std::move(t); }
    std::vector<DeviceTensor> &outputs() { return outputs_; }
    // The type of output 0 by the operator's row (OpDef::output_dtype), from the inputs' types:
    // what dtype inference says before the node runs.
    DataType output_dtype() const;
    // Allocates output 0 (or output i) on the backend.
    DeviceTensor &allocate_output(DataType dtype, const Shape &shape) {
        return allocate_output(0, dtype, shape);
    }
    DeviceTensor &allocate_output(size_t i, DataType dtype, const Shape &shape);

    // A control-flow node's subgraphs as models (Model::Impl::Node::subgraphs), and how many of
    // its inputs are its own (the outer values its subgraphs read follow them).
    void set_subgraphs(std::span<const Model> models, size_t declared_inputs) {
        subgraphs_ = models;
        declared_inputs_ = declared_inputs;
    }
    const Model &subgraph(size_t i) const;
    size_t declared_inputs() const { return declared_inputs_; }
    // Runs the backend's kernel for this operator on the node's inputs and outputs (allocated
    // first) with `attributes`; throws when the backend has none.
    void run_kernel(const Attributes &attributes = {});
    // The same kernel on other tensors (Min folds its inputs through the two-input kernel).
    void run_kernel(std::span<const DeviceTensor *const> inputs, std::span<DeviceTensor> outputs,
                    const Attributes &attributes = {});

    // Attributes. Each checks the attribute's declared type; absent gives nullopt / the default.
    const onnx::AttributeProto *attribute(std::string_view name) const;
    std::optional<int64_t> attr_int(std::string_view name) const;
    int64_t attr_int(std::string_view name, int64_t fallback) const;
    std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
    std::optional<float> attr_float(std::string_view name) const;
    std::optional<std::vector<float>> attr_floats(std::string_view name) const;
    std::optional<std::string> attr_string(std::string_view name) const;
    const onnx::TensorProto *attr_tensor(std::string_view name) const;
    // A required INT attribute naming an element type ("to" of Cast and BitCast).
    DataType attr_dtype(std::string_view name) const;

private:
    const onnx::AttributeProto *typed(std::string_view name,
                                      onnx::AttributeProto::AttributeType type) const;

    const OpDef &def_;
    const onnx::NodeProto &node_;
    int version_;
    Backend &backend_;
    ExternalData &external_;
    std::vector<const DeviceTensor *> inputs_;
    std::vector<DeviceTensor> outputs_;
    std::span<const Model> subgraphs_;
    size_t declared_inputs_ = 0;
};

// The attribute `name` of `node`, or nullptr (no type check: OpContext's accessors check).
const onnx::AttributeProto *find_attribute(const onnx::NodeProto &node, std::string_view name);
// An INT attribute naming an element type; `absent` when the node does not have it, undefined
// when it is not an INT or names no type.
DataType attribute_dtype(const onnx::NodeProto &node, std::string_view name, DataType absent);
// The node's INT, FLOAT, STRING and INTS attributes, typed.
Attributes typed_attributes(const onnx::NodeProto &node);

// The type of a node's output `output`, from the node and its inputs' types (undefined: unknown).
// Dtype inference applies it before anything runs, and the operator allocates with it
// (output_dtype()). The rules of single-output operators ignore `output`.
using OutputDtypeRule = DataType (*)(const onnx::NodeProto &node, std::span<const DataType> inputs,
                                     size_t output);

// Output-type rules several operators share.
DataType same_as_input0(const onnx::NodeProto &, std::span<const DataType> inputs, size_t);
DataType bool_output(const onnx::NodeProto &, std::span<const DataType>, size_t);
DataType int64_output(const onnx::NodeProto &, std::span<const DataType>, size_t);
DataType uint8_output(const onnx::NodeProto &, std::span<const DataType>, size_t);
DataType to_attribute_dtype(const onnx::NodeProto &node, std::span<const DataType>,
                            size_t);  // "to"

// Gemm's checks (op_linalg.cpp, above run_gemm's contract) of A, a B of shape `b_shape` and type
// `b_dtype`, and C (or nullptr): fills the kernel's attributes and gives Y's shape [M, N].
Shape check_gemm(const OpContext &ctx, const DeviceTensor &a, const Shape &b_shape,
                 DataType b_dtype, const DeviceTensor *c, Attributes &attributes);

// Concat's checks (op_compute.cpp) of the node's inputs: the output's shape; `axis` is set to the
// normalized axis.
Shape check_concat(const OpContext &ctx, size_t &axis);

// NumPy's multidirectional broadcasting of two shapes; throws when they do not broadcast.
Shape broadcast(const Shape &a, const Shape &b);

// Any number of inputs (Arity::max).
inline constexpr int kMany = std::numeric_limits<int>::max();

// How many inputs or outputs a node of an operator has: min to max (kMany: any number).
struct Arity {
    int min = 1, max = 1;
};

// One operator version: arity, the attributes it accepts, its output type and its implementation.
// Rows are written with designated initializers, the common fields left to their defaults:
//     {.op_type = "Softmax", .since = 13, .attributes = {"axis"}, .run = run_softmax}
using OpFn = void (*)(OpContext &);
struct OpDef {
    // The operator's domain: "" (the default ONNX domain) or "com.microsoft" (onnxruntime's
    // contrib operators, version 1).
    std::string_view domain = {};
    std::string_view op_type;
    int since = 1;  // first opset version with these semantics
    // Later ONNX versions of the operator with the same semantics here (they only widened the
    // type lists), ascending: a node at opset 29 runs Identity-1's code but is Identity-25.
    std::vector<int> same_as_later = {};
    Arity inputs = {};
    Arity outputs = {};
    std::vector<std::string_view> attributes = {};
    OpFn run = nullptr;
    OutputDtypeRule output_dtype = same_as_input0;
    bool view = false;  // output shares the input's buffer (Reshape, Squeeze, Identity, ...)

    // The ONNX version of this operator that a model of `opset` uses ("Identity-25").
    int onnx_version(int64_t opset) const {
        int v = since;
        for (int later : same_as_later)
            if (later <= opset) v = later;
        return v;
    }
};

// The operator table, row by row (op_registry.cpp).
std::span<const OpDef> op_table();

// Newest version of `op_type` of `domain` ("" the default one) the opset `opset` of that domain
// selects, or nullptr with `why`.
const OpDef *find_op(std::string_view domain, std::string_view op_type, int64_t opset,
                     std::string *why);

// The highest default-domain opset this runtime knows, and of onnxruntime's contrib domain.
inline constexpr int64_t kMaxOpset = 29;
inline constexpr int64_t kMaxContribOpset = 1;
inline constexpr std::string_view kContribDomain = "com.microsoft";

// Each op_*.cpp file's rows (op_registry.cpp joins them into the table; a new op_*.cpp file adds
// its function here and there).
std::span<const OpDef> compute_ops();  // Cast, Gather, Concat, Constant
std::span<const OpDef> dequantize_packed_ops();
std::span<const OpDef> elementwise_ops();  // Add, Sub, ..., Neg, Where, Greater, ..., Expand
std::span<const OpDef> layout_ops();       // Slice, Transpose
std::span<const OpDef> linalg_ops();       // MatMul, Gemm
std::span<const OpDef> reduce_ops();       // Softmax, ReduceMean, ReduceSum
std::span<const OpDef> one_hot_ops();
std::span<const OpDef> range_ops();
std::span<const OpDef> shape_ops();  // Unsqueeze, Squeeze, Reshape, Identity, BitCast, Shape
std::span<const OpDef> unpack_ops();
std::span<const OpDef> contrib_ops();  // com.microsoft: MatMulNBits, GatherBlockQuantized
std::span<const OpDef> select_ops();   // TopK, NonZero, ScatterND
std::span<const OpDef> loop_ops();

// The fused weight operators (op_fused.cpp), in the domain kFusedDomain: not in the table (no
// model names them), put in place of DequantizePacked and its readers by a session (fuse.hpp).
inline constexpr std::string_view kFusedDomain = "gguftool.fused";
std::span<const OpDef> fused_ops();

}  // namespace gguftool::runtime::detail
