// MatMul-1/9/13 (NumPy's matmul) and Gemm-7/9/11/13: type and shape checks, output shapes. The
// products are the backend's kernels (on the CPU, OpenBLAS: cpu_matmul.cpp).
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// float32 and float64: what the kernels compute (ONNX also lists float16, bfloat16 and integers).
void check_gemm_type(DataType t, const char *what) {
    if (t != DataType::float32 && t != DataType::float64)
        throw Error(fmt::format("{} must be float or double here, not {}", what, dtype_name(t)));
}

// MatMul: A [..., M, K] times B [..., K, N] with the batch dims broadcast; a 1-D A is [1, K]
// and a 1-D B [K, 1], their added dim removed from the output again. Kernel: A and B float or
// double (checked to multiply), y that product.
void run_matmul(OpContext &ctx) {
    const DeviceTensor &a = ctx.input(0);
    const DeviceTensor &b = ctx.input(1);
    if (a.dtype != b.dtype)
        throw Error(fmt::format("inputs A ({}) and B ({}) must have the same type",
                                dtype_name(a.dtype), dtype_name(b.dtype)));
    check_gemm_type(a.dtype, "inputs");
    if (a.shape.empty() || b.shape.empty())
        throw Error(fmt::format("inputs must have rank at least 1, not A {} and B {}",
                                shape_string(a.shape), shape_string(b.shape)));
    Shape sa = a.shape, sb = b.shape;
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t k = sa.back(), kb = sb[sb.size() - 2];
    if (k != kb)
        throw Error(fmt::format("A {} has {} columns but B {} has {} rows", shape_string(a.shape),
                                k, shape_string(b.shape), kb));
    Shape shape;
    try {
        shape = broadcast(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
    } catch (const Error &) {
        throw Error(fmt::format("the batch dims of A {} and B {} cannot be broadcast together",
                                shape_string(a.shape), shape_string(b.shape)));
    }
    if (a.shape.size() > 1) shape.push_back(sa[sa.size() - 2]);
    if (b.shape.size() > 1) shape.push_back(sb.back());
    shape_elements(shape, "output");
    ctx.allocate_output(a.dtype, shape);
    ctx.run_kernel();
}

void run_gemm(OpContext &ctx) {
    const DeviceTensor &a = ctx.input(0);
    const DeviceTensor &b = ctx.input(1);
    Attributes attributes;
    const Shape y = check_gemm(ctx, a, b.shape, b.dtype, ctx.has_input(2) ? &ctx.input(2) : nullptr,
                               attributes);
    ctx.allocate_output(a.dtype, y);
    ctx.run_kernel(attributes);
}

}  // namespace

// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? Aᵀ : A ([M, K]), B' = transB ? Bᵀ : B
// ([K, N]); C (optional from Gemm-11) broadcast one way to [M, N]. Kernel: A, B and C (or
// absent) float or double, y [M, N]; attributes "alpha", "beta" (FLOAT), "transA", "transB" (INT
// 0 or 1), the defaults filled in.
Shape check_gemm(const OpContext &ctx, const DeviceTensor &a, const Shape &b_shape,
                 DataType b_dtype, const DeviceTensor *c, Attributes &attributes) {
    if (a.dtype != b_dtype)
        throw Error(fmt::format("inputs A ({}) and B ({}) must have the same type",
                                dtype_name(a.dtype), dtype_name(b_dtype)));
    check_gemm_type(a.dtype, "inputs");
    if (a.shape.size() != 2 || b_shape.size() != 2)
        throw Error(fmt::format("inputs A and B must be 2-D, not A {} and B {}",
                                shape_string(a.shape), shape_string(b_shape)));
    const auto flag = [&](const char *name) {
        const int64_t v = ctx.attr_int(name, 0);
        if (v != 0 && v != 1)
            throw Error(fmt::format("attribute '{}' must be 0 or 1, not {}", name, v));
        return v;
    };
    const int64_t trans_a = flag("transA"), trans_b = flag("transB");
    const int64_t m = a.shape[trans_a ? 1 : 0], k = a.shape[trans_a ? 0 : 1];
    const int64_t kb = b_shape[trans_b ? 1 : 0], n = b_shape[trans_b ? 0 : 1];
    if (k != kb)
        throw Error(fmt::format("A {}{} has K = {} but B {}{} has K = {}", shape_string(a.shape),
                                trans_a ? " (transposed)" : "", k, shape_string(b_shape),
                                trans_b ? " (transposed)" : "", kb));
    if (c) {
        if (c->dtype != a.dtype)
            throw Error(fmt::format("input C ({}) must have the type of A ({})",
                                    dtype_name(c->dtype), dtype_name(a.dtype)));
        // Unidirectional broadcasting: C's shape broadcasts to [M, N] without changing it.
        bool ok = c->shape.size() <= 2;
        for (size_t i = 0; ok && i < c->shape.size(); ++i) {
            const int64_t want = (c->shape.size() - i == 1) ? n : m;
            ok = c->shape[i] == 1 || c->shape[i] == want;
        }
        if (!ok)
            throw Error(fmt::format("input C {} cannot be broadcast to [{}, {}]",
                                    shape_string(c->shape), m, n));
    }
    attributes.set("alpha", double(ctx.attr_float("alpha").value_or(1.0f)));
    attributes.set("beta", double(ctx.attr_float("beta").value_or(1.0f)));
    attributes.set("transA", trans_a);
    attributes.set("transB", trans_b);
    return {m, n};
}

std::span<const OpDef> linalg_ops() {
    // MatMul-9 added integers and MatMul-13 bfloat16: the same product. Gemm-7 broadcasts C one
    // way (required), Gemm-9 adds integers, Gemm-11 makes C optional, Gemm-13 adds bfloat16.
    static const std::vector<OpDef> rows = {
        {.op_type = "MatMul",
         .since = 1,
         .same_as_later = {9, 13},
         .inputs = {2, 2},
         .run = run_matmul},
        {.op_type = "Gemm",
         .since = 7,
         .same_as_later = {9},
         .inputs = {3, 3},
         .attributes = {"alpha", "beta", "transA", "transB"},
         .run = run_gemm},
        {.op_type = "Gemm",
         .since = 11,
         .same_as_later = {13},
         .inputs = {2, 3},
         .attributes = {"alpha", "beta", "transA", "transB"},
         .run = run_gemm},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
