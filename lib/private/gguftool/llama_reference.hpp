// llama.cpp's libllama, loaded at run time (dlopen) beside the libggml-base.so of reference.hpp:
// the reference for a decoder's logits, and llama.cpp's tokenizer and model quantizer. Nothing of
// llama.cpp is compiled into gguftool: its structs are declared here as byte arrays with the field
// offsets of the llama.h of the library the project's set-up installs (0.5.0), and checked against
// the library's own defaults when it is loaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguftool::reference {

// The resolved libllama (function pointers). Loaded once per process.
struct LlamaLib;

// libllama, from $GGUFTOOL_LLAMA_LIB if set, else from the directory of the libggml-base.so that
// load_ggml() finds: libllama.v0.5.0.so, else libllama.so. Before it is used, the ggml backends of
// that directory are loaded (ggml_backend_load_all_from_path of its libggml.v0.5.0.so or
// libggml.so: the CPU backend variants) and llama_backend_init is called. Refused when the
// library's default parameter structs do not read as 0.5.0's header says ("... has a different ABI
// than 0.5.0"). Its log is kept (its errors and warnings go into the messages of the errors below)
// and not printed, unless GGUFTOOL_LLAMA_LOG=1. Returns nullptr and sets `why` (if given) when
// unavailable; the same answer on every call.
std::shared_ptr<const LlamaLib> load_llama(std::string *why);

// Where the library was loaded from, and what llama_version() says.
const std::string &llama_lib_path(const LlamaLib &lib);
std::string llama_lib_version(const LlamaLib &lib);

// One model and one context on the CPU: F32 K/V cache, flash attention off, no weight repacking
// (use_extra_bufts off), logits for every position. Not thread-safe; separate instances may be
// used from separate threads.
class LlamaModel {
public:
    struct Options {
        int n_ctx = 512;       // positions per sequence; also the largest batch decode() takes
        int n_seq = 1;         // sequences in the KV cache (each with n_ctx positions)
        unsigned threads = 0;  // 0 = all cores (gguftool::thread_count)
        // The vocabulary only (llama_model_params.vocab_only; no tensors are read, a vocab-only
        // GGUF loads): tokenize, detokenize, token_to_piece, bos, eos and n_vocab work, the rest
        // of the model (decode, clear, the shape queries) is not there to call.
        bool vocab_only = false;
        // Embeddings (llama_context_params.embeddings): decode_embeddings() and pooled() instead
        // of logits, pooled as `pooling` says (llama_pooling_type: -1 the model's
        // {arch}.pooling_type, 0 none: per-token vectors).
        bool embeddings = false;
        int pooling = -1;
    };
    // Throws gguftool::Error naming the file (and llama.cpp's reason, from its log) on failure.
    LlamaModel(std::shared_ptr<const LlamaLib> lib, const std::string &path,
               const Options &options);
    LlamaModel(std::shared_ptr<const LlamaLib> lib, const std::string &path)
        : LlamaModel(std::move(lib), path, Options{}) {}
    ~LlamaModel();
    LlamaModel(const LlamaModel &) = delete;
    LlamaModel &operator=(const LlamaModel &) = delete;

    const std::string &path() const { return path_; }
    int n_vocab() const;
    int rope_type() const;  // llama_rope_type: -1 none, 0 norm, 2 neox, 8 mrope, ...
    int n_layer() const;
    int n_head() const;
    int n_head_kv() const;
    int n_embd() const;
    int n_swa() const;  // 0: no sliding window

    // Decodes `tokens` at positions pos0, pos0 + 1, ... of sequence `seq` of the KV cache (which
    // keeps them for later calls); returns the logits, [tokens.size()][n_vocab()] row-major.
    // Positions lie in 0 .. n_ctx - 1 and, as llama.cpp requires, continue those of the sequence
    // in the cache (clear() to start again). Throws gguftool::Error on an empty or too long batch,
    // a token, position or sequence out of range, or when llama_decode fails (its return code and
    // llama.cpp's reason).
    std::vector<float> decode(std::span<const int32_t> tokens, int32_t pos0, int32_t seq = 0);
    void clear();  // empties the KV cache (all sequences)

    // With Options::embeddings: decodes `tokens` (positions 0, 1, ... of sequence `seq`; clear()
    // first) and returns llama_get_embeddings_ith of every token, [tokens.size()][n_embd()]
    // (empty when the context pools), or llama_get_embeddings_seq's pooled vector of the sequence
    // (pooled(): [n_embd()]). Throws gguftool::Error as decode() does.
    std::vector<float> decode_embeddings(std::span<const int32_t> tokens, int32_t seq = 0);
    std::vector<float> pooled(int32_t seq = 0) const;
    // With Options::embeddings: decodes every sequence of `seqs` (sequence s: positions 0, 1, ...)
    // in one batch (Options::n_seq of them at most); pooled(s) then reads each one's vector.
    void decode_sequences(const std::vector<std::vector<int32_t>> &seqs);
    int pooling_type() const;  // llama_pooling_type(ctx): the context's pooling

    // llama_tokenize; add_special adds BOS/EOS as the model's vocabulary asks.
    std::vector<int32_t> tokenize(std::string_view text, bool add_special,
                                  bool parse_special) const;
    // llama_detokenize: the text of `tokens` (remove_special: drop a leading BOS and trailing
    // EOS; unparse_special: render control tokens).
    std::string detokenize(std::span<const int32_t> tokens, bool remove_special,
                           bool unparse_special) const;
    // llama_token_to_piece (no leading spaces stripped); `special`: render control tokens.
    std::string token_to_piece(int32_t token, bool special) const;
    int32_t bos() const;  // -1 if none
    int32_t eos() const;
    // llama_vocab_is_eog: whether generation stops at `token` (the vocabulary's end-of-generation
    // set: EOS, EOT, EOM, FIM pad/repo/separator and the tokens its loader marks by text).
    bool is_eog(int32_t token) const;

private:
    // Checks and decodes a batch of sequences' tokens (every position an output).
    struct Part {
        std::span<const int32_t> tokens;
        int32_t pos0, seq;
    };
    void submit(std::span<const Part> parts);

    std::shared_ptr<const LlamaLib> lib_;
    std::string path_;
    Options options_;
    void *model_ = nullptr;        // llama_model *
    void *ctx_ = nullptr;          // llama_context *
    const void *vocab_ = nullptr;  // const llama_vocab *
    int n_vocab_ = 0;
};

// What llama-quantize's --imatrix and --pure add: an importance matrix (per tensor name, one weight
// per column; llama.cpp requires one for the iq1/iq2 and iq3_xxs types) and every tensor in the
// file type's default type.
struct QuantizeExtras {
    std::map<std::string, std::vector<float>> imatrix;
    bool pure = false;
};

// llama_model_quantize(in, out) to llama_ftype `ftype` on `threads` threads (0: all cores), with
// llama.cpp's other defaults (what llama-quantize IN OUT FTYPE does). `out` appears whole or not at
// all (written under a temporary name beside it, then renamed). Throws gguftool::Error with the
// reason (llama.cpp's, from its log).
void quantize_model(std::shared_ptr<const LlamaLib> lib, const std::string &in,
                    const std::string &out, int ftype, unsigned threads = 0,
                    const QuantizeExtras &extras = {});

// The llama_ftype of a file type as llama-quantize names it ("Q4_0" 2, "Q8_0" 7, "Q4_K_M" 15,
// "Q4_K" its alias, "IQ4_XS" 30, "F16" 1, "BF16" 32, "F32" 0, ...; any case), or its number as
// text; nullopt for anything else (COPY too: that is not a file type).
std::optional<int> llama_ftype_from_name(std::string_view name);
// The name of a llama_ftype, as llama-quantize spells it; "" if unknown.
std::string llama_ftype_name(int ftype);

}  // namespace gguftool::reference
