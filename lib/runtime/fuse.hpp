// Fusing the weight products of a model at session construction (internal to lib/runtime): a
// Gemm (transA 0, transB 1) whose B is a DequantizePacked output, directly or through a Cast to
// float, becomes a DequantizePackedGemm node reading the packed blocks (op_fused.cpp); so does one
// whose DequantizePacked decodes the row a Gather picks out of a stack (a mixture of experts'
// Loop body: Gather(stack, e) -> DequantizePacked -> Gemm). A Gather along axis 0 whose data is a
// DequantizePacked output (an embedding) becomes a DequantizePackedGather, which decodes only the
// rows it gathers. The DequantizePacked, Cast and Gather nodes no node reads any more are dropped:
// no float copy of a fused weight is ever made.
#pragma once

#include "model_impl.hpp"

namespace gguftool::runtime::detail {

// The model with its weight products fused, Loop bodies included; `int8`: the fused Gemm nodes
// may quantize their activations to int8 as llama.cpp does (their "int8" attribute). The model
// itself when nothing fuses.
Model fuse_weight_products(const Model &model, bool int8);

}  // namespace gguftool::runtime::detail
