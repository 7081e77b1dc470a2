// onnxruntime's contrib operators (domain com.microsoft, version 1) that gguftool's decoder
// export writes with --weights nbits: MatMulNBits and GatherBlockQuantized (their specification:
// onnxruntime's docs/ContribOperators.md). Checks and output shapes; the CPU kernels are
// backends/cpu/cpu_nbits.cpp.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

bool power_of_two_at_least_16(int64_t v) {
    return v >= 16 && (v & (v - 1)) == 0;
}

void expect(const DeviceTensor &t, DataType dtype, const char *what) {
    if (t.dtype != dtype)
        throw Error(fmt::format("input {} must be {}, not {}", what, dtype_name(dtype),
                                dtype_name(t.dtype)));
}

// Y = A · dequant(B)ᵀ (+ bias): dequant(B)[n][k] = (code - zero_point) · scale of its block.
// Kernel: the node's inputs as checked here (g_idx absent); attributes "K", "N", "bits" and
// "block_size" (the default bits filled in).
void run_matmul_nbits(OpContext &ctx) {
    const DeviceTensor &a = ctx.input(0), &b = ctx.input(1), &scales = ctx.input(2);
    expect(a, DataType::float32, "A");
    expect(b, DataType::uint8, "B");
    expect(scales, DataType::float32, "scales");
    const std::optional<int64_t> K = ctx.attr_int("K"), N = ctx.attr_int("N"),
                                 block = ctx.attr_int("block_size");
    if (!K || !N || !block) throw Error("attributes 'K', 'N' and 'block_size' are required");
    const int64_t bits = ctx.attr_int("bits", 4);
    if (bits != 4 && bits != 8)
        throw Error(fmt::format("attribute 'bits' {} is not supported here (4 or 8)", bits));
    if (!power_of_two_at_least_16(*block))
        throw Error(fmt::format("attribute 'block_size' {} must be a power of 2 >= 16", *block));
    if (*K <= 0 || *N <= 0) throw Error("attributes 'K' and 'N' must be positive");
    if (a.shape.empty() || a.shape.back() != *K)
        throw Error(fmt::format("input A {} must end in K = {}", shape_string(a.shape), *K));
    const int64_t blocks = (*K + *block - 1) / *block, blob = *block * bits / 8;
    if (b.elements() != uint64_t(*N * blocks * blob))
        throw Error(fmt::format("input B {} must hold N x {} blocks x {} bytes",
                                shape_string(b.shape), blocks, blob));
    if (scales.elements() != uint64_t(*N * blocks))
        throw Error(fmt::format("input scales {} must hold N x {} blocks",
                                shape_string(scales.shape), blocks));
    if (ctx.has_input(3)) {
        const DeviceTensor &zp = ctx.input(3);
        const bool packed = zp.dtype == DataType::uint8 &&
                            zp.elements() == uint64_t(*N * ((blocks * bits + 7) / 8));
        const bool floats = zp.dtype == DataType::float32 && zp.elements() == uint64_t(*N * blocks);
        if (!packed && !floats)
            throw Error(
                fmt::format("input zero_points ({} {}) must be packed uint8 or float "
                            "[N, {}]",
                            dtype_name(zp.dtype), shape_string(zp.shape), blocks));
    }
    if (ctx.has_input(4)) throw Error("input g_idx is not supported");
    if (ctx.has_input(5)) {
        expect(ctx.input(5), DataType::float32, "bias");
        if (ctx.input(5).elements() != uint64_t(*N))
            throw Error(fmt::format("input bias must hold N = {} values", *N));
    }
    Shape shape = a.shape;
    shape.back() = *N;
    shape_elements(shape, "output");
    ctx.allocate_output(DataType::float32, shape);
    Attributes attrs;
    attrs.set("K", *K);
    attrs.set("N", *N);
    attrs.set("bits", bits);
    attrs.set("block_size", *block);
    ctx.run_kernel(attrs);
}

// Rows of data (quantized along its last axis, gathered along axis 0) at `indices`, decoded:
// (code - zero_point) · scale, zero point 2^(bits-1) (uint8 data). Kernel: data, indices and
// scales as checked here; attributes "bits" and "block_size" (the defaults filled in); an index
// out of range gives a row of zeros (onnxruntime's behaviour).
void run_gather_block_quantized(OpContext &ctx) {
    const DeviceTensor &data = ctx.input(0), &indices = ctx.input(1), &scales = ctx.input(2);
    expect(data, DataType::uint8, "data");
    expect(scales, DataType::float32, "scales");
    if (indices.dtype != DataType::int32 && indices.dtype != DataType::int64)
        throw Error("input indices must be int32 or int64");
    if (ctx.has_input(3)) throw Error("input zero_points is not supported here");
    const int64_t bits = ctx.attr_int("bits", 4), block = ctx.attr_int("block_size", 128);
    if (bits != 4 && bits != 8)
        throw Error(fmt::format("attribute 'bits' {} is not supported here (4 or 8)", bits));
    if (!power_of_two_at_least_16(block))
        throw Error(fmt::format("attribute 'block_size' {} must be a power of 2 >= 16", block));
    if (data.shape.size() != 2) throw Error("input data must be 2-D here");
    if (ctx.attr_int("gather_axis", 0) != 0) throw Error("attribute 'gather_axis' must be 0 here");
    const int64_t qa = ctx.attr_int("quantize_axis", 1);
    if (qa != 1 && qa != -1) throw Error("attribute 'quantize_axis' must be the last axis here");
    const int64_t rows = data.shape[0], width = data.shape[1] * 8 / bits;
    if (width % block != 0)
        throw Error(fmt::format("the rows ({} values) are not whole blocks of {}", width, block));
    if (scales.elements() != uint64_t(rows * (width / block)))
        throw Error(fmt::format("input scales {} must hold {} x {} blocks",
                                shape_string(scales.shape), rows, width / block));
    Shape shape = indices.shape;
    shape.push_back(width);
    shape_elements(shape, "output");
    ctx.allocate_output(DataType::float32, shape);
    Attributes attrs;
    attrs.set("bits", bits);
    attrs.set("block_size", block);
    ctx.run_kernel(attrs);
}

DataType float_output(const onnx::NodeProto &, std::span<const DataType>) {
    return DataType::float32;
}

}  // namespace

std::span<const OpDef> contrib_ops() {
    static const std::vector<OpDef> rows = {
        {.domain = kContribDomain,
         .op_type = "MatMulNBits",
         .inputs = {3, 6},
         .attributes = {"K", "N", "bits", "block_size", "accuracy_level", "weight_prepacked"},
         .run = run_matmul_nbits,
         .output_dtype = float_output},
        {.domain = kContribDomain,
         .op_type = "GatherBlockQuantized",
         .inputs = {3, 4},
         .attributes = {"bits", "block_size", "gather_axis", "quantize_axis"},
         .run = run_gather_block_quantized,
         .output_dtype = float_output},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
