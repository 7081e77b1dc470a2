// Tiny decoder models and their exported packages, made once per build in the test kit's cache
// (testkit-cache/decoders) under a lock, so that concurrent test processes share them.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gguftool/decoder_export.hpp"
#include "gguftool/runtime/session.hpp"

namespace gguftool::testkit {

// The tiny decoder `variant` (tiny_decoder.hpp) as a GGUF of weight type `type`: "F32", or a
// llama.cpp ftype name ("Q4_0", "Q8_0", "Q4_K_M", "Q6_K", "IQ4_XS", ...) quantized from the F32
// file by llama.cpp's own llama_model_quantize (with a random importance matrix for the ftypes that
// need one, such as "IQ2_XXS"; "<ftype>-pure" as llama-quantize --pure, e.g. "MXFP4_MOE-pure":
// every weight mxfp4). Throws std::runtime_error when libllama is missing.
std::string decoder_gguf(const std::string &variant, const std::string &type);

// That GGUF's decoder package (to-onnx --graph decoder): opset 29 (DequantizePacked) or,
// for 17..26, lowered to standard operators. `nbits`: --weights nbits (MatMulNBits /
// GatherBlockQuantized where the format maps; opset 21 unless given), with MatMulNBits'
// `accuracy_level` (0: float activations, 4: int8).
std::string decoder_package(const std::string &variant, const std::string &type, int opset = 29,
                            bool nbits = false, int accuracy_level = 0);

// The same for the tiny encoders (tiny_encoder.hpp): "F32", a llama.cpp ftype, or
// "<ftype>-dequantized": that file with every quantized, F16 and BF16 weight decoded to F32 (our
// decoder, bit for bit llama.cpp's), the reference for "as close as llama.cpp's own quantized
// output". Packages are to-onnx --graph encoder.
std::string encoder_gguf(const std::string &variant, const std::string &type);
std::string encoder_package(const std::string &variant, const std::string &type, int opset = 29,
                            bool nbits = false);

// One step of a decoder run: [batch][sequence] token ids, attention mask and positions.
struct DecoderStep {
    std::vector<std::vector<int64_t>> ids, mask, positions;
};

// `prompt` alone (batch 1), then each token of `next` at the following positions.
std::vector<DecoderStep> single_prompt_plan(const std::vector<int32_t> &prompt,
                                            const std::vector<int32_t> &next);

// A batch of 2: `prompt`, and its last prompt.size() - pad tokens padded on the left (id 0, mask
// 0, position 1, as clients make them: cumsum(mask) - 1, pads 1); then token `next` in both rows.
std::vector<DecoderStep> left_padded_plan(const std::vector<int32_t> &prompt, int64_t pad,
                                          int32_t next);

// The logits of every step ([batch][sequence][vocab] each) of the executor running the package in
// `dir` through its KV cache, from an empty past; its weight products `products` (by default the
// exact ones: fused_float is bit for bit the unfused graph).
std::vector<std::vector<float>> run_decoder_plan(
    const std::string &dir, const decoder::Hparams &h, const std::vector<DecoderStep> &plan,
    runtime::WeightProducts products = runtime::WeightProducts::fused_float);

// The bound on the relative gap between two runs of one package's graph whose float math may
// differ in the last bit (onnxruntime against the executor; a batch against each row alone, whose
// products OpenBLAS cuts differently): 1e-5, or 5e-4 where the graph rounds values to fp16 (a Cast
// to float16: ggml's GELU, which reads an fp16 table, emulated): there a one-bit difference at a
// rounding boundary moves a value by a whole fp16 step, 2^-11 of it, and int8 activations after it
// can round the other way too. Measured on the gemma family: at most 1.5e-4. A wrong graph (a mask,
// a position, a weight) is off by 1e-2 and more.
double same_math_bound(const std::string &dir);

// A parameterized test's name for a tiny model ("llama-tied-bias") or a (model, type) pair
// ("llama_Q4_K_M"): the characters gtest refuses become '_'.
std::string test_param_name(std::string s);
struct DecoderParamName {
    template <class Info>
    std::string operator()(const Info &info) const {
        if constexpr (std::is_same_v<std::decay_t<decltype(info.param)>, std::string>)
            return test_param_name(info.param);
        else
            return test_param_name(std::get<0>(info.param) + "_" + std::get<1>(info.param));
    }
};

}  // namespace gguftool::testkit
