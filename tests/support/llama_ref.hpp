// The test kit's one way to llama.cpp's quantizers and decoders (libggml-base through
// reference::ggml()): quantizing rows, in this process or in a child that may abort, llama.cpp's
// decode of a tensor's bytes, and llama_model_quantize of a whole file (libllama, through
// llama_reference.hpp). Used by the tests, the benchmarks and the tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

namespace gguftool::testkit {

// How llama.cpp quantizes a type: through ggml_quantize_chunk, or (q8_K, q8_1, which it only
// produces as matmul operands) through quantize_row_<type>_ref.
bool quantized_by_ref_row(GgmlType t);

// Whether ggml_quantize_chunk needs an importance matrix for `t`.
bool requires_imatrix(const reference::Ggml &g, GgmlType t);

// `values` (rows of n_per_row) quantized by llama.cpp in this process, with `imatrix` (n_per_row
// weights) when it is non-empty. Throws std::runtime_error when libggml-base lacks the quantizer.
std::vector<uint8_t> quantize_rows(const reference::Ggml &g, GgmlType type,
                                   const std::vector<float> &values, size_t n_per_row,
                                   const std::vector<float> &imatrix = {});

struct Quantized {
    std::vector<uint8_t> bytes;  // empty when llama.cpp could not quantize
    std::string failure;         // why, when it could not
};

// As quantize_rows, but ggml aborts the process on inputs its quantizers cannot handle (e.g. a
// grid search that finds no point), so this runs in a child process writing to shared memory; an
// abort there becomes `failure`. Types that require an importance matrix fail without one.
Quantized quantize_with_llama(const reference::Ggml &g, GgmlType type,
                              const std::vector<float> &values, size_t n_per_row,
                              const std::vector<float> &imatrix);

// llama.cpp's decode of the first `n` values of `bytes` to float: f32 copied, f16 and bf16 through
// ggml's row converters, the rest through dequantize_row_<type>, and q8_1, which llama.cpp cannot
// decode, by its definition (formats/SPEC.md): q8_0's blocks with `s` dropped, decoded by
// llama.cpp's q8_0 decoder. Empty when llama.cpp has no decoder for the type. (The tests' check
// of it is gguf_test_support.hpp's llama_decode.)
std::vector<float> reference_decode(const reference::Ggml &g, GgmlType type,
                                    const std::vector<uint8_t> &bytes, size_t n);

// A tensor as llama.cpp's writer takes it: its bytes already in `type`'s format, ne in ggml order.
struct LlamaTensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
};

// Sets metadata on llama.cpp's gguf_context (gguf_set_val_*, gguf_set_arr_*).
using LlamaMetadata = std::function<void(const reference::Ggml &, reference::gguf_context *)>;

// Writes a GGUF file with llama.cpp's own writer (gguf_write_to_file): the metadata that
// `add_metadata` sets, then `tensors`. Throws std::runtime_error naming `path` when llama.cpp
// cannot write it.
void write_with_llama(const reference::Ggml &g, const std::string &path,
                      const std::vector<LlamaTensor> &tensors,
                      const LlamaMetadata &add_metadata = {});

// llama.cpp's own model quantizer, llama_model_quantize (what llama-quantize runs, k-quant
// mixtures such as Q4_K_M included), through gguftool::reference::quantize_model
// (llama_reference.hpp: libllama loaded beside the libggml-base.so that reference::ggml() found).
// llama_ftype values (llama.h; reference::llama_ftype_from_name has them all):
inline constexpr int kFtypeMostlyF16 = 1;
inline constexpr int kFtypeMostlyQ4_K_M = 15;

// Quantizes the model `in` into `out` as llama-quantize does, to llama_ftype `ftype`, on
// `threads` threads (0: all). Its log is kept out of the output. Returns "" on success, else why
// it failed.
std::string model_quantize(const std::string &in, const std::string &out, int ftype,
                           int threads = 0);

// llama.cpp's logits (libllama, n_ctx 256) of `prompt` and of `steps` greedy single-token steps
// after it: per step [sequence][vocab], and the token chosen after each. Throws
// std::runtime_error when libllama cannot be loaded.
struct LlamaGreedy {
    std::vector<std::vector<float>> logits;
    std::vector<int32_t> chosen;
};
LlamaGreedy llama_greedy(const std::string &gguf, const std::vector<int32_t> &prompt, int steps);

}  // namespace gguftool::testkit
