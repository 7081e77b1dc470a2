// Fusing nodes of a model at session construction (internal to lib/runtime), for a backend that
// has the fused kernels (the CPU's; op_fused.cpp gives their contracts):
//   - weights: a Gemm (transA 0, transB 1) whose B is a DequantizePacked output, directly or
//     through a Cast to float, becomes a DequantizePackedGemm reading the packed blocks; so does
//     one whose DequantizePacked decodes the row a Gather picks out of a stack (a mixture of
//     experts' Loop body: Gather(stack, e) -> DequantizePacked -> Gemm). A Gather along axis 0
//     whose data is a DequantizePacked output (an embedding) becomes a DequantizePackedGather,
//     which decodes only the rows it gathers. No float copy of a fused weight is ever made.
//   - the KV cache: a Concat(past, new) from a graph input to a graph output becomes a KvConcat,
//     which appends in place when past is the newest view of a cache (Session::run_step carries
//     it from one step to the next); a MatMul reading it through Unsqueeze(X, [2]), or through
//     Unsqueeze(Transpose(X, [0, 1, 3, 2]), [2]) (attention's values and keys), becomes a
//     KvMatMul reading the cache where it is.
// The nodes a fused node stands in for are dropped when no other node reads them.
#pragma once

#include "model_impl.hpp"

namespace gguftool::runtime::detail {

// The model with its nodes fused, Loop bodies included; `int8`: the fused Gemm nodes may quantize
// their activations to int8 as llama.cpp does (their "int8" attribute); `gemms_only`: only the
// weight products (DequantizePackedGemm) are fused, for a session whose backend has that kernel
// but falls back to the CPU for the others. The model itself when nothing fuses.
Model fuse_nodes(const Model &model, bool int8, bool gemms_only = false);

}  // namespace gguftool::runtime::detail
