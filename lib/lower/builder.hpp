// Internal to lib/lower: the LoweringBuilder that a lowering writes standard-operator nodes with.
//
// Values are tensor names. Every node gets a fresh output name under the lowered node's prefix;
// constants (small integer and float tensors, lookup tables) are shared by the whole model: a graph
// holds each once as an initializer, named after its content; a function body gets Constant nodes.
// The sugar methods pick what the target opset has (BitwiseAnd from 18, BitCast from 26).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/lower.hpp"

namespace gguftool::lower::detail {

using Value = std::string;

// Where nodes and constants go: a graph or a function body.
class Sink {
public:
    virtual ~Sink() = default;
    virtual onnx::NodeProto &add_node() = 0;
    // Adds constant `t` (named) unless one of that name exists; returns its value name.
    virtual Value constant(onnx::TensorProto t) = 0;
    virtual bool has_constant(const std::string &name) const = 0;
    // Whether `name` is already a value of the graph (fresh names avoid these).
    virtual bool taken(const std::string &name) const = 0;
    Report report;
};

// A graph: constants become initializers, shared by every node lowered into it.
class GraphSink final : public Sink {
public:
    explicit GraphSink(onnx::GraphProto &graph);
    onnx::NodeProto &add_node() override;
    Value constant(onnx::TensorProto t) override;
    bool has_constant(const std::string &name) const override { return constants_.count(name); }
    bool taken(const std::string &name) const override { return names_.count(name) != 0; }

private:
    onnx::GraphProto &graph_;
    std::set<std::string> names_;      // every value name in the graph
    std::set<std::string> constants_;  // constants this sink added
};

// A function body: constants become Constant nodes, emitted once per body.
class FunctionSink final : public Sink {
public:
    explicit FunctionSink(onnx::FunctionProto &function) : function_(function) {}
    onnx::NodeProto &add_node() override { return *function_.add_node(); }
    Value constant(onnx::TensorProto t) override;
    bool has_constant(const std::string &name) const override { return names_.count(name); }
    bool taken(const std::string &name) const override { return names_.count(name) != 0; }
    void reserve(const std::string &name) { names_.insert(name); }

private:
    onnx::FunctionProto &function_;
    std::set<std::string> names_;
};

class LoweringBuilder {
public:
    // `owner` names the node being lowered (node and value names derive from it).
    LoweringBuilder(Sink &sink, int opset, std::string owner);

    int opset() const { return opset_; }
    Sink &sink() { return sink_; }

    // --- Nodes ------------------------------------------------------------------------------
    // Appends `type(inputs)` with attributes; returns its (fresh) output name.
    Value op(std::string_view type, std::initializer_list<Value> inputs,
             std::initializer_list<onnx::AttributeProto> attributes = {});
    Value op(std::string_view type, const std::vector<Value> &inputs,
             const std::vector<onnx::AttributeProto> &attributes);
    // The same, writing output `output` (the lowered node's own output).
    void op_into(const std::string &output, std::string_view type, const std::vector<Value> &inputs,
                 const std::vector<onnx::AttributeProto> &attributes = {});

    static onnx::AttributeProto attr(std::string_view name, int64_t v);
    static onnx::AttributeProto attr(std::string_view name, const std::vector<int64_t> &v);
    static onnx::AttributeProto attr(std::string_view name, std::string_view v);

    // --- Constants (shared by content) -------------------------------------------------------
    Value int64s(const std::vector<int64_t> &v);  // rank 1
    // A scalar (rank 0) of an integer or floating type holding `v` exactly.
    Value scalar(DataType dtype, double v);
    // The same as a tensor of `rank` dimensions of size 1. For an operand of a binary operator
    // whose other operand ends in a dimension of 1: onnxruntime broadcasts a lower-rank constant
    // over such a tensor element by element (measured: ~20 ns an element, 30x a same-rank one).
    Value scalar(DataType dtype, double v, size_t rank);
    // A lookup table named `name` (one per model): `dims` of `dtype`, raw little-endian bytes from
    // `bytes()` (called only the first time).
    Value table(const std::string &name, DataType dtype, const std::vector<int64_t> &dims,
                const std::function<std::string()> &bytes);

    // --- Sugar --------------------------------------------------------------------------------
    Value reshape(const Value &x, const std::vector<int64_t> &shape);  // -1 allowed, 0 is literal
    // x[..., start:end, ...] along `axis` (step 1).
    Value slice(const Value &x, int64_t axis, int64_t start, int64_t end);
    // Bytes [offset, offset + size) of every row of a [rows, bytes] uint8 matrix: [rows, size].
    Value bytes(const Value &blocks, size_t offset, size_t size) {
        return slice(blocks, 1, int64_t(offset), int64_t(offset + size));
    }
    Value cast(const Value &x, DataType to);
    Value gather(const Value &data, const Value &indices, int64_t axis = 0);
    Value concat(const std::vector<Value> &parts, int64_t axis);
    Value transpose(const Value &x, const std::vector<int64_t> &perm);
    Value add(const Value &a, const Value &b) { return op("Add", {a, b}); }
    Value sub(const Value &a, const Value &b) { return op("Sub", {a, b}); }
    Value mul(const Value &a, const Value &b) { return op("Mul", {a, b}); }
    Value div(const Value &a, const Value &b) { return op("Div", {a, b}); }  // integers: floor
    Value neg(const Value &x) { return op("Neg", {x}); }
    Value where(const Value &c, const Value &a, const Value &b) { return op("Where", {c, a, b}); }
    Value equal(const Value &a, const Value &b) { return op("Equal", {a, b}); }
    // x & mask for a non-negative integer tensor x and mask = 2^k - 1: BitwiseAnd from opset 18,
    // Mod by 2^k before. `dtype` is x's type (the constant's).
    Value low_bits(const Value &x, DataType dtype, unsigned k);
    // x >> n for an unsigned integer tensor x (uint8, uint32, uint64): BitShift.
    Value shift_right(const Value &x, DataType dtype, unsigned n);
    Value shift_left(const Value &x, DataType dtype, unsigned n);
    // (x >> n) & (2^k - 1) of an unsigned tensor.
    Value bit_field(const Value &x, DataType dtype, unsigned n, unsigned k);

private:
    Value fresh(std::string_view hint);

    Sink &sink_;
    int opset_;
    std::string owner_;
    unsigned counter_ = 0;
};

}  // namespace gguftool::lower::detail
