// What an operator implementation sees: its node, its inputs on the backend, typed attribute
// access with validation, and where to put its outputs (internal to lib/runtime).
//
// Operators validate everything that does not depend on data values (attributes, dtypes, shapes),
// allocate their outputs, and call one Backend function. They throw gguftool::Error with the bare
// problem; the session prefixes the model and the node.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/dims.hpp"
#include "gguftool/runtime.hpp"
#include "tensor_proto.hpp"

namespace gguftool::runtime::detail {

class OpContext {
public:
    OpContext(const onnx::NodeProto &node, int version, Backend &backend, ExternalData &external,
              std::vector<const DeviceTensor *> inputs)
        : node_(node),
          version_(version),
          backend_(backend),
          external_(external),
          inputs_(std::move(inputs)),
          outputs_(size_t(node.output_size())) {}

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
    // Allocates output 0 on the backend.
    DeviceTensor &allocate_output(DataType dtype, const Shape &shape);

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

    const onnx::NodeProto &node_;
    int version_;
    Backend &backend_;
    ExternalData &external_;
    std::vector<const DeviceTensor *> inputs_;
    std::vector<DeviceTensor> outputs_;
};

// The attribute `name` of `node`, or nullptr (no type check: OpContext's accessors check).
const onnx::AttributeProto *find_attribute(const onnx::NodeProto &node, std::string_view name);

// One operator version: arity, the attributes it accepts, and its implementation.
using OpFn = void (*)(OpContext &);
struct OpDef {
    std::string_view op_type;
    int since;  // first opset version with these semantics
    // Later ONNX versions of the operator with the same semantics here (they only widened the
    // type lists), ascending: a node at opset 29 runs Identity-1's code but is Identity-25.
    std::vector<int> same_as_later;
    int min_inputs, max_inputs;
    int min_outputs, max_outputs;
    std::vector<std::string_view> attributes;
    OpFn run;
    bool view = false;  // output shares the input's buffer (Reshape, Unsqueeze, Identity, BitCast)

    // The ONNX version of this operator that a model of `opset` uses ("Identity-25").
    int onnx_version(int64_t opset) const {
        int v = since;
        for (int later : same_as_later)
            if (later <= opset) v = later;
        return v;
    }
};

// Newest version of `op_type` the default-domain opset `opset` selects, or nullptr with `why`.
const OpDef *find_op(std::string_view op_type, int64_t opset, std::string *why);

// The highest default-domain opset this runtime knows.
inline constexpr int64_t kMaxOpset = 29;

// Implementations (op_*.cpp).
void run_dequantize_packed(OpContext &ctx);
void run_unpack(OpContext &ctx);
void run_unsqueeze(OpContext &ctx);
void run_one_hot(OpContext &ctx);
void run_cast(OpContext &ctx);
void run_add(OpContext &ctx);
void run_sub(OpContext &ctx);
void run_mul(OpContext &ctx);
void run_div(OpContext &ctx);
void run_mod(OpContext &ctx);
void run_min(OpContext &ctx);
void run_bitwise_and(OpContext &ctx);
void run_bit_shift(OpContext &ctx);
void run_equal(OpContext &ctx);
void run_neg(OpContext &ctx);
void run_where(OpContext &ctx);
void run_gather(OpContext &ctx);
void run_slice(OpContext &ctx);
void run_transpose(OpContext &ctx);
void run_range(OpContext &ctx);
void run_reshape(OpContext &ctx);
void run_identity(OpContext &ctx);
void run_bitcast(OpContext &ctx);
void run_shape(OpContext &ctx);
void run_concat(OpContext &ctx);
void run_constant(OpContext &ctx);

}  // namespace gguftool::runtime::detail
