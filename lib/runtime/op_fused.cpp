// The fused operators a session puts in place of nodes of its graph (fuse.cpp): a Gemm whose B is
// a DequantizePacked output, and a Gather whose data is one, each reading the packed blocks
// itself instead of a float copy of the whole weight; a KV cache's Concat, appending in place, and
// attention's MatMuls reading the cache where it is. They are not in the operator table (no model
// names them); their rows are fused_ops(). A fused node keeps the attributes of the nodes it
// replaces and checks what they checked, with their messages.
#include <fmt/format.h>

#include "gguftool/opset29.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// The DequantizePacked node's attributes (copied onto the fused node), checked.
opset29::DequantizePacked dequantize_attributes(const OpContext &ctx) {
    const std::optional<std::string> format = ctx.attr_string("format");
    const std::optional<std::vector<int64_t>> shape = ctx.attr_ints("shape");
    return opset29::check_dequantize_packed(
        format ? std::optional<std::string_view>(*format) : std::nullopt,
        shape ? std::optional<std::span<const int64_t>>(*shape) : std::nullopt,
        ctx.attr_int("output_dtype"));
}

// The packed input x (input `i`), checked as DequantizePacked checks it; or, with `expert` (input
// `e`, a Gather's index), the row of x that Gather would give (x [X, ...] uint8, the index one
// value in [-X, X)). Returns the byte offset of the blocks in x.
uint64_t packed_input(OpContext &ctx, const opset29::DequantizePacked &op, size_t i,
                      std::optional<size_t> e) {
    const DeviceTensor &x = ctx.input(i);
    if (x.dtype != DataType::uint8)
        throw Error(fmt::format("input x must be uint8, not {}", dtype_name(x.dtype)));
    std::vector<std::optional<int64_t>> x_shape(x.shape.begin(), x.shape.end());
    uint64_t offset = 0;
    if (e) {
        // Gather(x, index) along axis 0: the index's shape, then x's after the first.
        const DeviceTensor &index = ctx.input(*e);
        if (x.shape.empty()) throw Error("input data must have rank at least 1");
        const std::vector<int64_t> k = ctx.index_list(*e, "indices", true, true);
        x_shape.assign(index.shape.begin(), index.shape.end());
        x_shape.insert(x_shape.end(), x.shape.begin() + 1, x.shape.end());
        opset29::check_dequantize_packed_input(op, x_shape);
        // One-dimensional after the Gather: a scalar index, one row of x.
        const int64_t rows = x.shape[0];
        int64_t row = k.at(0);
        if (row < 0 && ctx.attr_int("negative_indices", 0) != 0) row += rows;
        if (row < 0 || row >= rows)
            throw Error(
                fmt::format("index {} (element 0 of indices) is out of range for axis 0 "
                            "of size {}",
                            k[0], rows));
        offset = uint64_t(row) * op.input_bytes;
    } else {
        opset29::check_dequantize_packed_input(op, x_shape);
    }
    return offset;
}

// The kernels' attributes of the weight: "format" (its GgmlType number), "weight_dtype" (the
// DequantizePacked output type each value is rounded to before the product), "offset" (bytes
// into x where the blocks start), "int8" (1: activations quantized to int8 where the backend
// can, as llama.cpp does; 0: float products, as the unfused graph's).
void weight_attributes(const OpContext &ctx, const opset29::DequantizePacked &op, uint64_t offset,
                       Attributes &attributes) {
    attributes.set("format", int64_t(op.type));
    attributes.set("weight_dtype", int64_t(op.output_dtype));
    attributes.set("offset", int64_t(offset));
    attributes.set("int8", ctx.attr_int("int8", 0));
}

// DequantizePackedGemm: Gemm(A, B = DequantizePacked(x) [then Cast to float], C) with transB = 1.
// Inputs A, x, C (optional), and the index of a Gather of x (optional: x is then the stack the
// Gather picks one row of). Kernel: A [M, K] float, x the blocks of B [N, K] from attribute
// "offset" on, y [M, N] = alpha * A Bᵀ + beta * C; attributes those of Gemm's kernel and
// weight_attributes'.
void run_dequantize_packed_gemm(OpContext &ctx) {
    const opset29::DequantizePacked op = dequantize_attributes(ctx);
    const bool gathered = ctx.has_input(3);
    const uint64_t offset =
        packed_input(ctx, op, 1, gathered ? std::optional<size_t>(3) : std::nullopt);
    const Shape b_shape(op.shape.begin(), op.shape.end());
    Attributes attributes;
    const Shape y = check_gemm(ctx, ctx.input(0), b_shape, DataType::float32,
                               ctx.has_input(2) ? &ctx.input(2) : nullptr, attributes);
    weight_attributes(ctx, op, offset, attributes);
    ctx.allocate_output(DataType::float32, y);
    ctx.run_kernel(attributes);
}

// DequantizePackedGather: Gather(data = DequantizePacked(x) [then Cast to float], indices) along
// axis 0. Kernel: x the blocks of data (shape attribute "shape"), indices INT32 or INT64 (negative
// ones counting from the end when "negative_indices" is 1), y [indices..., shape[1:]...] of type
// "to" (the Cast's; the DequantizePacked's type without one), each row decoded, rounded to
// "weight_dtype", then converted; weight_attributes' others.
void run_dequantize_packed_gather(OpContext &ctx) {
    const opset29::DequantizePacked op = dequantize_attributes(ctx);
    const uint64_t offset = packed_input(ctx, op, 0, std::nullopt);
    const DeviceTensor &indices = ctx.input(1);
    if (indices.dtype != DataType::int32 && indices.dtype != DataType::int64)
        throw Error(
            fmt::format("input indices must be int32 or int64, not {}", dtype_name(indices.dtype)));
    Shape shape(indices.shape.begin(), indices.shape.end());
    shape.insert(shape.end(), op.shape.begin() + 1, op.shape.end());
    shape_elements(shape, "output");
    const DataType to = attribute_dtype(ctx.node(), "to", op.output_dtype);
    Attributes attributes;
    weight_attributes(ctx, op, offset, attributes);
    attributes.set("shape", op.shape);
    attributes.set("negative_indices", ctx.attr_int("negative_indices", 0));
    ctx.allocate_output(to, shape);
    ctx.run_kernel(attributes);
}

// KvConcat: Concat(past, new) (Concat-11's semantics) along "axis", into a KV cache (cpu_index.cpp:
// in place when past is the newest view of a cache with room; kept transposed when "transposed"
// is 1: the keys attention reads transposed). Kernel: past and new of y's type, matching but on
// the axis; y's dtype and shape set and no buffer: the kernel gives y a view of the cache.
void run_kv_concat(OpContext &ctx) {
    size_t axis = 0;
    const Shape shape = check_concat(ctx, axis);
    ctx.outputs()[0] = DeviceTensor{ctx.input(0).dtype, shape, nullptr};
    Attributes attributes;
    attributes.set("axis", int64_t(axis));
    attributes.set("transposed", ctx.attr_int("transposed", 0));
    ctx.run_kernel(attributes);
}

// KvMatMul: MatMul(A, Unsqueeze(X, [2])), or with "transpose" 1 MatMul(A, Unsqueeze(Transpose(X,
// [0, 1, 3, 2]), [2])): attention's products with a KV cache X [B, H, T, D] read where it is.
// Kernel: A [B, H, r, S, T] (or [B, H, r, S, D] transposed) and X float, y [B, H, r, S, D] (or
// [B, H, r, S, T]): for each (b, h, i) of A's first three axes the product of A[b, h, i] with
// X[b, h] (transposed).
void run_kv_matmul(OpContext &ctx) {
    const DeviceTensor &a = ctx.input(0), &x = ctx.input(1);
    const bool transpose = ctx.attr_int("transpose", 0) != 0;
    if (a.dtype != DataType::float32 || x.dtype != DataType::float32)
        throw Error(fmt::format("inputs A ({}) and B ({}) must be float here", dtype_name(a.dtype),
                                dtype_name(x.dtype)));
    if (a.shape.size() != 5 || x.shape.size() != 4 || a.shape[0] != x.shape[0] ||
        a.shape[1] != x.shape[1])
        throw Error(
            fmt::format("the fused attention product takes A [B, H, r, S, K] and a cache "
                        "[B, H, T, D], not A {} and {}",
                        shape_string(a.shape), shape_string(x.shape)));
    const int64_t k = transpose ? x.shape[3] : x.shape[2], n = transpose ? x.shape[2] : x.shape[3];
    if (a.shape[4] != k)
        throw Error(fmt::format("A {} has {} columns but B has {} rows", shape_string(a.shape),
                                a.shape[4], k));
    Shape y = a.shape;
    y[4] = n;
    ctx.allocate_output(DataType::float32, y);
    Attributes attributes;
    attributes.set("transpose", int64_t(transpose));
    ctx.run_kernel(attributes);
}

DataType float_output(const onnx::NodeProto &, std::span<const DataType>, size_t) {
    return DataType::float32;
}
DataType gather_output(const onnx::NodeProto &n, std::span<const DataType>, size_t) {
    return attribute_dtype(n, "to", attribute_dtype(n, "output_dtype", DataType::float32));
}

}  // namespace

std::span<const OpDef> fused_ops() {
    static const std::vector<OpDef> rows = {
        {.domain = kFusedDomain,
         .op_type = "DequantizePackedGemm",
         .inputs = {2, 4},
         .attributes = {"format", "shape", "output_dtype", "alpha", "beta", "transA", "transB",
                        "negative_indices", "int8"},
         .run = run_dequantize_packed_gemm,
         .output_dtype = float_output},
        {.domain = kFusedDomain,
         .op_type = "DequantizePackedGather",
         .inputs = {2, 2},
         .attributes = {"format", "shape", "output_dtype", "to", "negative_indices", "int8"},
         .run = run_dequantize_packed_gather,
         .output_dtype = gather_output},
        {.domain = kFusedDomain,
         .op_type = "KvConcat",
         .since = 11,
         .inputs = {2, 2},
         .attributes = {"axis", "transposed"},
         .run = run_kv_concat},
        {.domain = kFusedDomain,
         .op_type = "KvMatMul",
         .inputs = {2, 2},
         .attributes = {"transpose"},
         .run = run_kv_matmul,
         .output_dtype = float_output},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
