// Tiny decoder models and their exported packages, made once per build in the test kit's cache
// (testkit-cache/decoders) under a lock, so that concurrent test processes share them.
#pragma once

#include <string>

namespace gguftool::testkit {

// The tiny decoder `variant` (tiny_decoder.hpp) as a GGUF of weight type `type`: "F32", or a
// llama.cpp ftype name ("Q4_0", "Q8_0", "Q4_K_M", "Q6_K", "IQ4_XS", ...) quantized from the F32
// file by llama.cpp's own llama_model_quantize. Throws std::runtime_error when libllama is missing.
std::string decoder_gguf(const std::string &variant, const std::string &type);

// That GGUF's decoder package (to-onnx --graph decoder): opset 29 (DequantizePacked) or,
// for 17..26, lowered to standard operators. `nbits`: --weights nbits (MatMulNBits /
// GatherBlockQuantized where the format maps; opset 21 unless given).
std::string decoder_package(const std::string &variant, const std::string &type, int opset = 29,
                            bool nbits = false);

}  // namespace gguftool::testkit
