// GGUF -> a runnable ONNX decoder: the whole model (embedding, every layer with its KV cache,
// the head) as one graph, in the layout Optimum and transformers.js use, computing what llama.cpp
// computes from the same file (llama.cpp's src/models/<arch>.cpp and src/llama-graph.cpp).
// Or (Graph::encoder) the model as an embedding model: a feature-extraction package (below).
//
// The package is a directory:
//   OUT/onnx/model.onnx, OUT/onnx/model.onnx_data   the graph and the tensor bytes
//   OUT/config.json, OUT/generation_config.json     what transformers.js reads
//   OUT/tokenizer.json, OUT/tokenizer_config.json,  the vocabulary, tokenizing as llama.cpp does
//   OUT/special_tokens_map.json                     (gguftool/tokenizer_export.hpp)
// written under a temporary name beside OUT and renamed into place at the end: it appears whole
// or not at all. Tensor bytes stream from the mapped GGUF (bounded memory).
//
// Graph inputs: input_ids, attention_mask, position_ids (int64, [batch_size, ...]) and
// past_key_values.{i}.key|value (float32 [batch_size, n_head_kv, past_sequence_length, head_dim]);
// outputs: logits (float32 [batch_size, sequence_length, n_vocab]) and present.{i}.key|value
// (past + new, keys after RoPE). Weights keep their GGUF bytes: a quantized weight is one
// DequantizePacked node on them (opset 29), or that node lowered to standard operators
// (Options::opset 17..26) so that released runtimes run the model.
//
// The encoder package has no cache and no head: inputs input_ids and attention_mask (and
// token_type_ids for the BERT family), positions counted from the mask (left or right padding);
// outputs last_hidden_state (float32 [batch_size, sequence_length, n_embd]: llama.cpp's
// per-token embeddings) and, when {arch}.pooling_type pools, sentence_embedding ([batch_size,
// n_embd]: llama_get_embeddings_seq's vector, its dense_2/dense_3 projections included, not
// normalised). Beside the tokenizer, sentence-transformers' modules.json, 1_Pooling/config.json
// and 2_Normalize say how to pool and that the vectors are L2-normalised, as llama.cpp's
// embedding tools do; there is no generation_config.json.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/types.hpp"

namespace gguftool::decoder {

// The two graphs of a model: the decoder (logits and the KV cache, for generation) and the
// encoder (each token's final hidden state and, where the model pools, the pooled embedding, as
// llama.cpp's embeddings give them).
enum class Graph { decoder, encoder };

// The architectures exported as `graph`, as general.architecture names them: every architecture
// has the encoder graph; the BERT family and gemma-embedding have no decoder.
std::vector<std::string_view> architectures(Graph graph = Graph::decoder);

// How llama.cpp pools an encoder's hidden states into one embedding ({arch}.pooling_type,
// build_pooling in src/llama-graph.cpp): not at all, their mean, the first token's (CLS), the
// last token's.
enum class Pooling { none = 0, mean = 1, cls = 2, last = 3 };

// One set of RoPE parameters (ggml_rope_ext's freq_base, freq_scale, ext_factor, attn_factor).
struct RopeParams {
    float freq_base = 10000, freq_scale = 1;
    float ext_factor = 0;   // YaRN's extrapolation mix (0: none)
    float attn_factor = 1;  // cos and sin are multiplied by it
};

// What the graph is built from, read from the GGUF metadata and tensors (llama.cpp's rules and
// defaults, per architecture: the structural quirks stay in the architecture's row).
struct Hparams {
    std::string arch;
    int64_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0;
    int64_t head_dim = 0;  // attention.key_length (= value_length)
    int64_t n_ff = 0;
    int64_t n_ctx_train = 0;
    int64_t n_rot = 0;  // rotated dimensions of each head (<= head_dim)
    float rms_eps = 0;
    std::string rope_scaling;  // "none", "linear", "yarn", "longrope"
    RopeParams rope;           // the global layers'
    RopeParams rope_swa;       // the sliding-window layers'
    float beta_fast = 32, beta_slow = 1;
    int64_t n_ctx_orig = 0;
    std::vector<bool> rope_layers;  // per layer: RoPE applied (smollm3, granite switch it off)
    uint32_t n_swa = 0;             // sliding window (tokens, the current one included); 0: none
    std::vector<bool> swa;          // per layer: uses the sliding window
    float attn_softcap = 0;         // scores = c * tanh(scores / c); 0: none
    float final_softcap = 0;        // logits likewise
    float kq_scale = 1;             // applied to the scores (llama, qwen, mistral3, granite...)
    float q_scale = 1;              // applied to Q after RoPE (gemma*, phi3)
    float attn_temp_scale = 0;      // mistral3: Q *= 1 + s * ln(floor(p / floor_scale) + 1)
    int64_t attn_temp_floor = 0;
    float embed_scale = 0;     // x = embedding * embed_scale (gemma*: sqrt(n_embd)); 0: none
    float residual_scale = 0;  // attention and FFN outputs * it before the residual add; 0: none
    float logit_scale = 0;     // logits / it; 0: none
    bool tied = false;         // the head is token_embd
    // Mixture of experts (0 experts: a dense FFN).
    int64_t n_expert = 0, n_expert_used = 0;
    int64_t n_ff_exp = 0;    // each expert's FFN width
    int64_t n_ff_shexp = 0;  // the shared expert's (qwen2moe)
    int64_t bos = -1, eos = -1, pad = -1;
    // Encoders (--graph encoder).
    Graph graph = Graph::decoder;     // the graph these were read for
    bool causal = true;               // {arch}.attention.causal (false: every token sees all)
    Pooling pooling = Pooling::none;  // {arch}.pooling_type (none when absent)
    float norm_eps = 0;         // LayerNorm's epsilon (attention.layer_norm_epsilon), BERT layout
    int64_t n_token_types = 0;  // tokenizer.ggml.token_type_count (the BERT family)
    float max_alibi_bias = 0;   // ALiBi's (jina-bert-v2: 8)
};

// Reads and checks the hyperparameters and that every tensor `graph` needs is there with its
// shape. Throws gguftool::Error naming the file and the key or tensor: an architecture not
// exported, an expert count of zero, a rope scaling type not done, a head count that does not
// divide...
Hparams read_hparams(const gguf::Model &model, Graph graph = Graph::decoder);

// How quantized weights are stored: `packed`, their GGUF bytes decoded by DequantizePacked
// (lowered with an opset); `nbits`, the blocks repacked for onnxruntime's com.microsoft
// MatMulNBits (decoder_nbits.cpp: every quantized format), the token embedding's rows gathered from
// them and decoded by standard operators.
enum class Weights { packed, nbits };

struct Options {
    Graph graph = Graph::decoder;
    // Lower DequantizePacked to standard operators of this opset (17..26); nullopt: opset 29
    // (packed) or 21 (nbits: a model for onnxruntime).
    std::optional<int> opset;
    Weights weights = Weights::packed;
    // MatMulNBits' accuracy_level (4: int8 activations, as llama.cpp quantizes them for its dot
    // products, onnxruntime's fast kernels; 0: unset, activations in float).
    int accuracy_level = 4;
    // Element type plain floating weights (f32 f16 bf16) and decoded weights are stored or decoded
    // as: float32 or float16 (then a Cast to float32 feeds the math).
    DataType weight_type = DataType::float32;
    unsigned threads = 0;
    std::function<void(uint64_t done, uint64_t total)> progress;
};

struct Result {
    std::string directory;
    std::string model_path, data_path;
    Hparams hparams;
    int opset = 0;
    size_t nodes = 0;
    size_t packed = 0;  // weights decoded by DequantizePacked (or its lowering)
    // --weights nbits: weights per GGUF type and form ("q4_K -> MatMulNBits + offsets": 154)
    std::map<std::string, size_t> forms;
    bool tokenizer = false;          // tokenizer.json and tokenizer_config.json written
    std::vector<std::string> notes;  // things the user should know
    uint64_t tensor_bytes = 0;
};

// Writes the package to `out_dir`, which must not exist (or be an empty directory). Throws
// gguftool::Error; nothing is left behind.
Result export_decoder(const gguf::Model &model, const std::string &out_dir, const Options &options);

// MatMulNBits operands of a GGUF format (lib/onnx/decoder_nbits.cpp): its bits (4 or 8) and block
// size, codes stored symmetric (MatMulNBits' default zero point, 8 or 128), and whether the format
// has a minimum, which becomes a float offset per block added after the product (the sum of the
// block's activations times the offset); nullopt for a type that is not quantized.
struct NbitsForm {
    int bits, block;
    bool offsets;
};
std::optional<NbitsForm> nbits_form(GgmlType type);
// `rows` rows of K elements of `type` at `src` into B [rows][K/block][block·bits/8], scales
// [rows][K/block] and, when the form has them, offsets (same shape): element j of block i is
// (code_j - 2^(bits-1)) · scale_i + offset_i. Throws gguftool::Error for a type that is not
// quantized.
void nbits_rows(GgmlType type, const uint8_t *src, int64_t rows, int64_t K, uint8_t *b,
                float *scales, float *offsets);

}  // namespace gguftool::decoder
