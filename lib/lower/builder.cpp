// LoweringBuilder: fresh names, nodes, constants shared by content, and the opset-dependent sugar.
#include "builder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "gguftool/error.hpp"

namespace gguftool::lower::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "constants are written as raw data in host byte order, which must be little-endian");

template <class T>
std::string raw(const T &v) {
    return std::string(reinterpret_cast<const char *>(&v), sizeof v);
}

// `v` as the raw bytes of one element of `dtype` (exactly representable: checked).
std::string element_bytes(DataType dtype, double v) {
    auto exact = [&](auto x) {
        if (double(x) != v && !(std::isnan(v) && std::isnan(double(x))))
            throw Error(
                fmt::format("internal: constant {} is not exact in {}", v, dtype_name(dtype)));
        return raw(x);
    };
    switch (dtype) {
        case DataType::float32:
            return exact(float(v));
        case DataType::float64:
            return exact(v);
        case DataType::int8:
            return exact(int8_t(v));
        case DataType::uint8:
            return exact(uint8_t(v));
        case DataType::int16:
            return exact(int16_t(v));
        case DataType::uint16:
            return exact(uint16_t(v));
        case DataType::int32:
            return exact(int32_t(v));
        case DataType::uint32:
            return exact(uint32_t(v));
        case DataType::int64:
            return exact(int64_t(v));
        case DataType::uint64:
            return exact(uint64_t(v));
        default:
            throw Error(fmt::format("internal: no scalar constants of {}", dtype_name(dtype)));
    }
}

onnx::TensorProto tensor(const std::string &name, DataType dtype, const std::vector<int64_t> &dims,
                         std::string bytes) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx_number(dtype));
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(std::move(bytes));
    return t;
}

}  // namespace

GraphSink::GraphSink(onnx::GraphProto &graph) : graph_(graph) {
    for (const auto &v : graph.input()) names_.insert(v.name());
    for (const auto &v : graph.output()) names_.insert(v.name());
    for (const auto &v : graph.value_info()) names_.insert(v.name());
    for (const auto &t : graph.initializer()) names_.insert(t.name());
    for (const auto &n : graph.node()) {
        for (const std::string &s : n.input()) names_.insert(s);
        for (const std::string &s : n.output()) names_.insert(s);
    }
}

onnx::NodeProto &GraphSink::add_node() {
    return *graph_.add_node();
}

Value GraphSink::constant(onnx::TensorProto t) {
    const std::string name = t.name();
    if (constants_.count(name)) return name;
    if (names_.count(name))
        throw Error(
            fmt::format("the graph already has a value named '{}', which the lowering "
                        "needs for its constant",
                        name));
    constants_.insert(name);
    names_.insert(name);
    *graph_.add_initializer() = std::move(t);
    return name;
}

Value FunctionSink::constant(onnx::TensorProto t) {
    const std::string name = t.name();
    if (names_.count(name)) return name;
    names_.insert(name);
    onnx::NodeProto &n = *function_.add_node();
    n.set_op_type("Constant");
    n.set_name(name);
    n.add_output(name);
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = std::move(t);
    return name;
}

LoweringBuilder::LoweringBuilder(Sink &sink, int opset, std::string owner)
    : sink_(sink), opset_(opset), owner_(std::move(owner)) {}

Value LoweringBuilder::fresh(std::string_view hint) {
    for (;;) {
        std::string name = fmt::format("{}/lower/{}_{}", owner_, hint, counter_++);
        if (!sink_.taken(name)) return name;
    }
}

Value LoweringBuilder::op(std::string_view type, std::initializer_list<Value> inputs,
                          std::initializer_list<onnx::AttributeProto> attributes) {
    return op(type, std::vector<Value>(inputs), std::vector<onnx::AttributeProto>(attributes));
}

Value LoweringBuilder::op(std::string_view type, const std::vector<Value> &inputs,
                          const std::vector<onnx::AttributeProto> &attributes) {
    Value out = fresh(type);
    op_into(out, type, inputs, attributes);
    return out;
}

void LoweringBuilder::op_into(const std::string &output, std::string_view type,
                              const std::vector<Value> &inputs,
                              const std::vector<onnx::AttributeProto> &attributes) {
    onnx::NodeProto &n = sink_.add_node();
    n.set_op_type(std::string(type));
    n.set_name(output == owner_ ? owner_ + "/lower/" + std::string(type) : output);
    for (const Value &in : inputs) n.add_input(in);
    n.add_output(output);
    for (const onnx::AttributeProto &a : attributes) *n.add_attribute() = a;
    ++sink_.report.nodes_added;
    ++sink_.report.op_count[std::string(type)];
}

onnx::AttributeProto LoweringBuilder::attr(std::string_view name, int64_t v) {
    onnx::AttributeProto a;
    a.set_name(std::string(name));
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
}

onnx::AttributeProto LoweringBuilder::attr(std::string_view name, const std::vector<int64_t> &v) {
    onnx::AttributeProto a;
    a.set_name(std::string(name));
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return a;
}

Value LoweringBuilder::int64s(const std::vector<int64_t> &v) {
    std::string bytes;
    for (int64_t x : v) bytes += raw(x);
    const std::string name = fmt::format("gguftool.lower/int64[{}]", fmt::join(v, ","));
    return sink_.constant(tensor(name, DataType::int64, {int64_t(v.size())}, std::move(bytes)));
}

Value LoweringBuilder::scalar(DataType dtype, double v) {
    const std::string name = fmt::format("gguftool.lower/{}({})", dtype_name(dtype), v);
    return sink_.constant(tensor(name, dtype, {}, element_bytes(dtype, v)));
}

Value LoweringBuilder::scalar(DataType dtype, double v, size_t rank) {
    if (rank == 0) return scalar(dtype, v);
    const std::string name = fmt::format("gguftool.lower/{}({})x{}", dtype_name(dtype), v, rank);
    return sink_.constant(
        tensor(name, dtype, std::vector<int64_t>(rank, 1), element_bytes(dtype, v)));
}

Value LoweringBuilder::table(const std::string &name, DataType dtype,
                             const std::vector<int64_t> &dims,
                             const std::function<std::string()> &bytes) {
    const std::string full = "gguftool.lower/" + name;
    if (sink_.has_constant(full)) return full;
    std::string data = bytes();
    sink_.report.table_bytes += data.size();
    return sink_.constant(tensor(full, dtype, dims, std::move(data)));
}

Value LoweringBuilder::reshape(const Value &x, const std::vector<int64_t> &shape) {
    const bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
    if (zero) return op("Reshape", {x, int64s(shape)}, {attr("allowzero", 1)});
    return op("Reshape", {x, int64s(shape)});
}

Value LoweringBuilder::slice(const Value &x, int64_t axis, int64_t start, int64_t end) {
    return op("Slice", {x, int64s({start}), int64s({end}), int64s({axis})});
}

Value LoweringBuilder::cast(const Value &x, DataType to) {
    return op("Cast", {x}, {attr("to", int64_t(onnx_number(to)))});
}

Value LoweringBuilder::gather(const Value &data, const Value &indices, int64_t axis) {
    return op("Gather", {data, indices}, {attr("axis", axis)});
}

Value LoweringBuilder::concat(const std::vector<Value> &parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    return op("Concat", parts, {attr("axis", axis)});
}

Value LoweringBuilder::transpose(const Value &x, const std::vector<int64_t> &perm) {
    return op("Transpose", {x}, {attr("perm", perm)});
}

Value LoweringBuilder::low_bits(const Value &x, DataType dtype, unsigned k) {
    if (opset_ >= 18) return op("BitwiseAnd", {x, scalar(dtype, double((uint64_t{1} << k) - 1))});
    return op("Mod", {x, scalar(dtype, double(uint64_t{1} << k))});
}

onnx::AttributeProto LoweringBuilder::attr(std::string_view name, std::string_view v) {
    onnx::AttributeProto a;
    a.set_name(std::string(name));
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(std::string(v));
    return a;
}

Value LoweringBuilder::shift_right(const Value &x, DataType dtype, unsigned n) {
    if (n == 0) return x;
    return op("BitShift", {x, scalar(dtype, n)}, {attr("direction", std::string_view("RIGHT"))});
}

Value LoweringBuilder::shift_left(const Value &x, DataType dtype, unsigned n) {
    if (n == 0) return x;
    return op("BitShift", {x, scalar(dtype, n)}, {attr("direction", std::string_view("LEFT"))});
}

Value LoweringBuilder::bit_field(const Value &x, DataType dtype, unsigned n, unsigned k) {
    const Value shifted = shift_right(x, dtype, n);
    return n + k >= dtype_size(dtype) * 8 ? shifted : low_bits(shifted, dtype, k);
}

}  // namespace gguftool::lower::detail
