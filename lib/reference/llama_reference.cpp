// libllama through dlopen: its structs as byte arrays with the offsets of llama.cpp 0.5.0's
// llama.h, checked against the library's defaults at load time (llama_reference.hpp).
#include "gguftool/llama_reference.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <type_traits>
#include <utility>

#include "gguftool/error.hpp"
#include "gguftool/output_file.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/reference.hpp"

namespace gguftool::reference {
namespace {

// ---------------------------------------------------------------------------------------------
// The structs llama.h passes by value, as opaque bytes of the same size and alignment, with the
// offsets of the fields we read or set. Header: llama.cpp 0.5.0 (the release of the npm package
// @node-llama-cpp/linux-x64 the set-up installs), include/llama.h; offsets measured once with
// offsetof against that header on x86-64 (LP64; aarch64 lays these structs out the same way).
// All three are larger than 16 bytes, so they are passed and returned through memory, as the byte
// arrays are.

struct alignas(8) ModelParams {  // struct llama_model_params, 80 bytes
    unsigned char b[80];
};
namespace mp {
constexpr size_t devices = 0;           // ggml_backend_dev_t *            (default null)
constexpr size_t n_gpu_layers = 16;     // int32_t                         (-1)
constexpr size_t split_mode = 20;       // enum llama_split_mode           (1, LAYER)
constexpr size_t load_mode = 24;        // enum llama_load_mode            (-1, AUTO)
constexpr size_t lazy_mode = 28;        // enum llama_lazy_mode            (1, AUTO)
constexpr size_t main_gpu = 32;         // int32_t                         (0)
constexpr size_t kv_overrides = 64;     // const llama_model_kv_override * (null)
constexpr size_t vocab_only = 72;       // bool                            (false)
constexpr size_t use_extra_bufts = 74;  // bool                            (true)
constexpr size_t no_alloc = 76;         // bool                            (false)
constexpr size_t load_mtp = 77;         // bool, the last field            (false)
}  // namespace mp

struct alignas(8) ContextParams {  // struct llama_context_params, 160 bytes
    unsigned char b[160];
};
namespace cp {
constexpr size_t n_ctx = 0;                   // uint32_t                   (512)
constexpr size_t n_batch = 4;                 // uint32_t                   (2048)
constexpr size_t n_ubatch = 8;                // uint32_t                   (512)
constexpr size_t n_seq_max = 12;              // uint32_t                   (1)
constexpr size_t n_outputs_max_per_seq = 24;  // uint32_t                   (1)
constexpr size_t n_threads = 28;              // int32_t                    (4)
constexpr size_t n_threads_batch = 32;        // int32_t                    (4)
constexpr size_t pooling_type = 44;           // enum llama_pooling_type    (-1, UNSPECIFIED)
constexpr size_t attention_type = 48;         // enum llama_attention_type  (-1, UNSPECIFIED)
constexpr size_t flash_attn_type = 52;        // enum llama_flash_attn_type (-1, AUTO)
constexpr size_t rope_freq_base = 56;         // float                      (0)
constexpr size_t yarn_ext_factor = 64;        // float                      (-1)
constexpr size_t defrag_thold = 84;           // float                      (-1)
constexpr size_t type_k = 104;                // enum ggml_type             (1, F16)
constexpr size_t type_v = 108;                // enum ggml_type             (1, F16)
constexpr size_t embeddings = 128;            // bool                       (false)
constexpr size_t offload_kqv = 129;           // bool                       (true)
constexpr size_t swa_full = 132;              // bool                       (true)
constexpr size_t kv_unified = 133;            // bool                       (false)
constexpr size_t samplers = 136;              // llama_sampler_seq_config * (null)
constexpr size_t ctx_other = 152;             // llama_context *, the last  (null)
}  // namespace cp

struct alignas(8) QuantizeParams {  // struct llama_model_quantize_params, 64 bytes
    unsigned char b[64];
};
namespace qp {
constexpr size_t nthread = 0;                  // int32_t         (0)
constexpr size_t ftype = 4;                    // enum llama_ftype (7, MOSTLY_Q8_0)
constexpr size_t output_tensor_type = 8;       // enum ggml_type  (43, GGML_TYPE_COUNT)
constexpr size_t token_embedding_type = 12;    // enum ggml_type  (43)
constexpr size_t allow_requantize = 16;        // bool            (false)
constexpr size_t quantize_output_tensor = 17;  // bool            (true)
constexpr size_t pure = 19;                    // bool            (false)
constexpr size_t dry_run = 21;                 // bool            (false)
constexpr size_t imatrix = 24;                 // pointer         (null)
constexpr size_t max_buf_size = 56;            // size_t, the last (8 GiB)
}  // namespace qp

// struct llama_batch: its fields are documented and plain, so declared as they are.
struct Batch {
    int32_t n_tokens;
    int32_t *token;
    float *embd;
    int32_t *pos;
    int32_t *n_seq_id;
    int32_t **seq_id;
    int8_t *logits;
};
static_assert(sizeof(Batch) == 56 || sizeof(void *) != 8);

template <class T, class S>
T get(const S &s, size_t offset) {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, s.b + offset, sizeof v);
    return v;
}
template <class T, class S>
void put(S &s, size_t offset, T v) {
    std::memcpy(s.b + offset, &v, sizeof v);
}

constexpr int kGgmlTypeF32 = 0;
constexpr int kGgmlTypeF16 = 1;
constexpr int kGgmlTypeCount = 43;  // GGML_TYPE_COUNT of this header's ggml.h
constexpr int kFlashAttnDisabled = 0;

// ---------------------------------------------------------------------------------------------
// llama's log (llama_log_set also sets ggml's): its warnings and errors kept, numbered, for the
// messages of our errors; printed only with GGUFTOOL_LLAMA_LOG=1.

constexpr int kLogWarn = 3, kLogError = 4, kLogCont = 5;  // enum ggml_log_level

struct LogStore {
    std::mutex mutex;
    std::deque<std::pair<uint64_t, std::string>> lines;  // warnings and errors, numbered
    uint64_t next = 0;
    bool keeping_last = false;  // whether a continuation belongs to a kept line
    bool echo = false;
};

LogStore &log_store() {
    static LogStore *store = new LogStore;  // never destroyed: llama may log at exit
    return *store;
}

void on_log(int level, const char *text, void *) {
    LogStore &s = log_store();
    std::lock_guard lock(s.mutex);
    if (s.echo) std::fputs(text, stderr);
    if (level == kLogCont) {
        if (s.keeping_last && !s.lines.empty()) s.lines.back().second += text;
        return;
    }
    s.keeping_last = level == kLogWarn || level == kLogError;
    if (!s.keeping_last) return;
    s.lines.emplace_back(s.next++, text);
    if (s.lines.size() > 64) s.lines.pop_front();
}

uint64_t log_mark() {
    LogStore &s = log_store();
    std::lock_guard lock(s.mutex);
    return s.next;
}

// What llama logged (warnings and errors) since `mark`, as " (llama.cpp: ...; ...)", or "".
std::string logged_since(uint64_t mark) {
    LogStore &s = log_store();
    std::lock_guard lock(s.mutex);
    std::string out;
    for (const auto &[n, text] : s.lines) {
        if (n < mark) continue;
        std::string line = text;
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
            line.pop_back();
        if (line.empty()) continue;
        out += (out.empty() ? "" : "; ") + line;
    }
    return out.empty() ? out : " (llama.cpp: " + out + ")";
}

using LogCallback = void (*)(int level, const char *text, void *user_data);

}  // namespace

// ---------------------------------------------------------------------------------------------

struct LlamaLib {
    std::string path;
    void *handle = nullptr;

    const char *(*version)() = nullptr;
    void (*backend_init)() = nullptr;
    void (*log_set)(LogCallback, void *) = nullptr;
    ModelParams (*model_default_params)() = nullptr;
    ContextParams (*context_default_params)() = nullptr;
    QuantizeParams (*model_quantize_default_params)() = nullptr;

    void *(*model_load_from_file)(const char *path, ModelParams params) = nullptr;
    void (*model_free)(void *model) = nullptr;
    void *(*init_from_model)(void *model, ContextParams params) = nullptr;
    void (*free_context)(void *ctx) = nullptr;
    void (*set_n_threads)(void *ctx, int32_t n_threads, int32_t n_threads_batch) = nullptr;

    const void *(*model_get_vocab)(const void *model) = nullptr;
    int (*model_rope_type)(const void *model) = nullptr;
    int32_t (*model_n_layer)(const void *model) = nullptr;
    int32_t (*model_n_head)(const void *model) = nullptr;
    int32_t (*model_n_head_kv)(const void *model) = nullptr;
    int32_t (*model_n_embd)(const void *model) = nullptr;
    int32_t (*model_n_swa)(const void *model) = nullptr;

    int32_t (*vocab_n_tokens)(const void *vocab) = nullptr;
    int32_t (*vocab_bos)(const void *vocab) = nullptr;
    int32_t (*vocab_eos)(const void *vocab) = nullptr;
    bool (*vocab_is_eog)(const void *vocab, int32_t token) = nullptr;
    int32_t (*tokenize)(const void *vocab, const char *text, int32_t text_len, int32_t *tokens,
                        int32_t n_tokens_max, bool add_special, bool parse_special) = nullptr;
    int32_t (*token_to_piece)(const void *vocab, int32_t token, char *buf, int32_t length,
                              int32_t lstrip, bool special) = nullptr;
    int32_t (*detokenize)(const void *vocab, const int32_t *tokens, int32_t n_tokens, char *text,
                          int32_t text_len_max, bool remove_special,
                          bool unparse_special) = nullptr;

    Batch (*batch_init)(int32_t n_tokens, int32_t embd, int32_t n_seq_max) = nullptr;
    void (*batch_free)(Batch batch) = nullptr;
    int32_t (*decode)(void *ctx, Batch batch) = nullptr;
    float *(*get_logits_ith)(void *ctx, int32_t i) = nullptr;
    float *(*get_embeddings_ith)(void *ctx, int32_t i) = nullptr;
    float *(*get_embeddings_seq)(void *ctx, int32_t seq) = nullptr;
    int (*pooling_type)(const void *ctx) = nullptr;
    void *(*get_memory)(const void *ctx) = nullptr;  // llama_memory_t
    void (*memory_clear)(void *memory, bool data) = nullptr;

    uint32_t (*model_quantize)(const char *in, const char *out,
                               const QuantizeParams *params) = nullptr;
};

namespace {

// Resolves every function; the name of the first one missing, or "".
std::string resolve_all(LlamaLib &l) {
    std::string missing;
    const auto r = [&](auto &fn, const char *name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(l.handle, name));
        if (!fn && missing.empty()) missing = name;
    };
    r(l.version, "llama_version");
    r(l.backend_init, "llama_backend_init");
    r(l.log_set, "llama_log_set");
    r(l.model_default_params, "llama_model_default_params");
    r(l.context_default_params, "llama_context_default_params");
    r(l.model_quantize_default_params, "llama_model_quantize_default_params");
    r(l.model_load_from_file, "llama_model_load_from_file");
    r(l.model_free, "llama_model_free");
    r(l.init_from_model, "llama_init_from_model");
    r(l.free_context, "llama_free");
    r(l.set_n_threads, "llama_set_n_threads");
    r(l.model_get_vocab, "llama_model_get_vocab");
    r(l.model_rope_type, "llama_model_rope_type");
    r(l.model_n_layer, "llama_model_n_layer");
    r(l.model_n_head, "llama_model_n_head");
    r(l.model_n_head_kv, "llama_model_n_head_kv");
    r(l.model_n_embd, "llama_model_n_embd");
    r(l.model_n_swa, "llama_model_n_swa");
    r(l.vocab_n_tokens, "llama_vocab_n_tokens");
    r(l.vocab_bos, "llama_vocab_bos");
    r(l.vocab_eos, "llama_vocab_eos");
    r(l.vocab_is_eog, "llama_vocab_is_eog");
    r(l.tokenize, "llama_tokenize");
    r(l.token_to_piece, "llama_token_to_piece");
    r(l.detokenize, "llama_detokenize");
    r(l.batch_init, "llama_batch_init");
    r(l.batch_free, "llama_batch_free");
    r(l.decode, "llama_decode");
    r(l.get_logits_ith, "llama_get_logits_ith");
    r(l.get_embeddings_ith, "llama_get_embeddings_ith");
    r(l.get_embeddings_seq, "llama_get_embeddings_seq");
    r(l.pooling_type, "llama_pooling_type");
    r(l.get_memory, "llama_get_memory");
    r(l.memory_clear, "llama_memory_clear");
    r(l.model_quantize, "llama_model_quantize");
    return missing;
}

// The defaults llama.h 0.5.0 documents, read through our offsets: every field that differs, or
// "" when all agree.
std::string abi_mismatches(const LlamaLib &l) {
    std::string bad;
    const auto expect = [&](const char *what, auto got, auto want) {
        if (got == want) return;
        bad += (bad.empty() ? "" : ", ") + std::string(what) + " = " + std::to_string(got) +
               " (expected " + std::to_string(want) + ")";
    };
    const ModelParams m = l.model_default_params();
    expect("model.devices", get<uintptr_t>(m, mp::devices), uintptr_t(0));
    expect("model.n_gpu_layers", get<int32_t>(m, mp::n_gpu_layers), -1);
    expect("model.split_mode", get<int32_t>(m, mp::split_mode), 1);
    expect("model.load_mode", get<int32_t>(m, mp::load_mode), -1);
    expect("model.lazy_mode", get<int32_t>(m, mp::lazy_mode), 1);
    expect("model.main_gpu", get<int32_t>(m, mp::main_gpu), 0);
    expect("model.kv_overrides", get<uintptr_t>(m, mp::kv_overrides), uintptr_t(0));
    expect("model.vocab_only", int(get<uint8_t>(m, mp::vocab_only)), 0);
    expect("model.use_extra_bufts", int(get<uint8_t>(m, mp::use_extra_bufts)), 1);
    expect("model.no_alloc", int(get<uint8_t>(m, mp::no_alloc)), 0);
    expect("model.load_mtp", int(get<uint8_t>(m, mp::load_mtp)), 0);

    const ContextParams c = l.context_default_params();
    expect("context.n_ctx", get<uint32_t>(c, cp::n_ctx), 512u);
    expect("context.n_batch", get<uint32_t>(c, cp::n_batch), 2048u);
    expect("context.n_ubatch", get<uint32_t>(c, cp::n_ubatch), 512u);
    expect("context.n_seq_max", get<uint32_t>(c, cp::n_seq_max), 1u);
    expect("context.n_outputs_max_per_seq", get<uint32_t>(c, cp::n_outputs_max_per_seq), 1u);
    expect("context.n_threads", get<int32_t>(c, cp::n_threads), 4);  // GGML_DEFAULT_N_THREADS
    expect("context.n_threads_batch", get<int32_t>(c, cp::n_threads_batch), 4);
    expect("context.pooling_type", get<int32_t>(c, cp::pooling_type), -1);
    expect("context.attention_type", get<int32_t>(c, cp::attention_type), -1);
    expect("context.flash_attn_type", get<int32_t>(c, cp::flash_attn_type), -1);
    expect("context.rope_freq_base", get<float>(c, cp::rope_freq_base), 0.0f);
    expect("context.yarn_ext_factor", get<float>(c, cp::yarn_ext_factor), -1.0f);
    expect("context.defrag_thold", get<float>(c, cp::defrag_thold), -1.0f);
    expect("context.type_k", get<int32_t>(c, cp::type_k), kGgmlTypeF16);
    expect("context.type_v", get<int32_t>(c, cp::type_v), kGgmlTypeF16);
    expect("context.embeddings", int(get<uint8_t>(c, cp::embeddings)), 0);
    expect("context.offload_kqv", int(get<uint8_t>(c, cp::offload_kqv)), 1);
    expect("context.swa_full", int(get<uint8_t>(c, cp::swa_full)), 1);
    expect("context.kv_unified", int(get<uint8_t>(c, cp::kv_unified)), 0);
    expect("context.samplers", get<uintptr_t>(c, cp::samplers), uintptr_t(0));
    expect("context.ctx_other", get<uintptr_t>(c, cp::ctx_other), uintptr_t(0));

    const QuantizeParams q = l.model_quantize_default_params();
    expect("quantize.nthread", get<int32_t>(q, qp::nthread), 0);
    expect("quantize.ftype", get<int32_t>(q, qp::ftype), 7);
    expect("quantize.output_tensor_type", get<int32_t>(q, qp::output_tensor_type), kGgmlTypeCount);
    expect("quantize.token_embedding_type", get<int32_t>(q, qp::token_embedding_type),
           kGgmlTypeCount);
    expect("quantize.allow_requantize", int(get<uint8_t>(q, qp::allow_requantize)), 0);
    expect("quantize.quantize_output_tensor", int(get<uint8_t>(q, qp::quantize_output_tensor)), 1);
    expect("quantize.pure", int(get<uint8_t>(q, qp::pure)), 0);
    expect("quantize.dry_run", int(get<uint8_t>(q, qp::dry_run)), 0);
    expect("quantize.imatrix", get<uintptr_t>(q, qp::imatrix), uintptr_t(0));
    expect("quantize.max_buf_size", get<uint64_t>(q, qp::max_buf_size), uint64_t(8) << 30);

    // llama_batch: what llama_batch_init(n, 0, 1) allocates, and what it leaves null.
    Batch b = l.batch_init(4, 0, 1);
    expect("batch.n_tokens", b.n_tokens, 0);
    expect("batch.token set", b.token != nullptr, true);
    expect("batch.embd null", b.embd == nullptr, true);
    expect("batch.pos set", b.pos != nullptr, true);
    expect("batch.n_seq_id set", b.n_seq_id != nullptr, true);
    expect("batch.seq_id set", b.seq_id != nullptr, true);
    expect("batch.logits set", b.logits != nullptr, true);
    if (b.seq_id && b.token && b.pos && b.n_seq_id && b.logits && !b.embd) l.batch_free(b);
    return bad;
}

std::string dir_of_loaded(const void *symbol) {
    Dl_info info{};
    if (!dladdr(symbol, &info) || !info.dli_fname) return "";
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

void *open_first(const std::string &dir, std::initializer_list<const char *> names,
                 std::string *path, std::string *errors) {
    for (const char *name : names) {
        const std::string p = dir.empty() ? std::string(name) : dir + "/" + name;
        // NODELETE: ggml and llama keep state in globals (backend registry, log callback) that
        // must outlive every user; the library is never unloaded.
        if (void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
            if (path) *path = p;
            return h;
        }
        *errors += (errors->empty() ? "" : "; ") + std::string(dlerror());
    }
    return nullptr;
}

struct Loaded {
    std::shared_ptr<const LlamaLib> lib;
    std::string why;
};

Loaded load_once() {
    if (sizeof(void *) != 8) return {nullptr, "libllama's structs are declared for 64-bit targets"};
    std::string llama_path, dir;
    if (const char *env = std::getenv("GGUFTOOL_LLAMA_LIB"); env && *env) {
        llama_path = env;
        dir = std::filesystem::path(llama_path).parent_path().string();
    } else {
        const auto g = ggml();
        if (!g) {
            std::string why;
            load_ggml("", &why);
            return {nullptr, "cannot find libllama: " + why};
        }
        dir = dir_of_loaded(reinterpret_cast<const void *>(g->type_name));
    }
    std::string errors;
    // The ggml that libllama links (found through its $ORIGIN run path, so the same file).
    std::string ggml_path;
    void *ggml_handle = open_first(dir, {"libggml.v0.5.0.so", "libggml.so"}, &ggml_path, &errors);
    if (!ggml_handle)
        return {nullptr, "cannot load llama.cpp's libggml beside libllama (" + errors + ")"};
    auto *load_all_from_path = reinterpret_cast<void (*)(const char *)>(
        dlsym(ggml_handle, "ggml_backend_load_all_from_path"));
    auto *dev_count = reinterpret_cast<size_t (*)()>(dlsym(ggml_handle, "ggml_backend_dev_count"));
    if (!load_all_from_path || !dev_count)
        return {nullptr, ggml_path + ": no ggml_backend_load_all_from_path"};

    void *h = llama_path.empty()
                  ? open_first(dir, {"libllama.v0.5.0.so", "libllama.so"}, &llama_path, &errors)
                  : open_first("", {llama_path.c_str()}, nullptr, &errors);
    if (!h) return {nullptr, "cannot load llama.cpp's libllama (" + errors + ")"};
    auto lib = std::make_shared<LlamaLib>();
    lib->path = llama_path;
    lib->handle = h;
    if (const std::string missing = resolve_all(*lib); !missing.empty())
        return {nullptr, "libllama at " + llama_path +
                             " has a different ABI than 0.5.0 (it lacks " + missing + ")"};
    if (const std::string bad = abi_mismatches(*lib); !bad.empty())
        return {nullptr,
                "libllama at " + llama_path + " has a different ABI than 0.5.0 (" + bad + ")"};

    const char *echo = std::getenv("GGUFTOOL_LLAMA_LOG");
    log_store().echo = echo && std::string_view(echo) == "1";
    lib->log_set(on_log, nullptr);
    // The CPU backend is a set of libggml-cpu-<variant>.so beside libggml; ggml picks the best.
    if (dev_count() == 0) load_all_from_path(dir.empty() ? "." : dir.c_str());
    if (dev_count() == 0)
        return {nullptr, "llama.cpp's ggml at " + ggml_path + " loads no backend from " + dir};
    lib->backend_init();
    return {lib, ""};
}

[[noreturn]] void fail(const std::string &where, const std::string &what, uint64_t mark) {
    throw Error(where, std::nullopt, what + logged_since(mark));
}

}  // namespace

std::shared_ptr<const LlamaLib> load_llama(std::string *why) {
    static const Loaded loaded = load_once();
    if (!loaded.lib && why) *why = loaded.why;
    return loaded.lib;
}

const std::string &llama_lib_path(const LlamaLib &lib) {
    return lib.path;
}

std::string llama_lib_version(const LlamaLib &lib) {
    const char *v = lib.version();
    return v ? v : "";
}

// ---------------------------------------------------------------------------------------------

LlamaModel::LlamaModel(std::shared_ptr<const LlamaLib> lib, const std::string &path,
                       const Options &options)
    : lib_(std::move(lib)), path_(path), options_(options) {
    if (!lib_) throw Error(path, std::nullopt, "llama.cpp's libllama is not loaded");
    if (options.n_ctx < 1 || options.n_seq < 1 || options.n_seq > 256)
        throw Error(path, std::nullopt, "bad context size or sequence count");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(path, std::nullopt, ec ? ec.message() : "no such file");
    const uint64_t mark = log_mark();

    ModelParams m = lib_->model_default_params();
    put<int32_t>(m, mp::n_gpu_layers, 0);
    put<uint8_t>(m, mp::use_extra_bufts, 0);  // no repacking of the weights for the CPU
    put<uint8_t>(m, mp::vocab_only, options.vocab_only ? 1 : 0);
    model_ = lib_->model_load_from_file(path.c_str(), m);
    if (!model_) fail(path, "llama.cpp cannot load the model", mark);
    if (options.vocab_only) {  // no context: the vocabulary only
        vocab_ = lib_->model_get_vocab(model_);
        n_vocab_ = lib_->vocab_n_tokens(vocab_);
        return;
    }

    const int32_t threads = int32_t(thread_count(options.threads));
    ContextParams c = lib_->context_default_params();
    // Each sequence gets n_ctx cells (a non-unified cache splits its cells between sequences).
    put<uint32_t>(c, cp::n_ctx, uint32_t(options.n_ctx) * uint32_t(options.n_seq));
    // Embeddings of a non-causal model need every sequence of a batch in one ubatch.
    const uint32_t batch =
        uint32_t(options.n_ctx) * (options.embeddings ? uint32_t(options.n_seq) : 1);
    put<uint32_t>(c, cp::n_batch, batch);
    put<uint32_t>(c, cp::n_ubatch, batch);
    put<uint32_t>(c, cp::n_seq_max, uint32_t(options.n_seq));
    put<int32_t>(c, cp::n_threads, threads);
    put<int32_t>(c, cp::n_threads_batch, threads);
    put<int32_t>(c, cp::flash_attn_type, kFlashAttnDisabled);
    put<int32_t>(c, cp::type_k, kGgmlTypeF32);
    put<int32_t>(c, cp::type_v, kGgmlTypeF32);
    if (options.embeddings) {
        put<uint8_t>(c, cp::embeddings, 1);
        put<int32_t>(c, cp::pooling_type, options.pooling);
    }
    ctx_ = lib_->init_from_model(model_, c);
    if (!ctx_) {
        lib_->model_free(model_);
        fail(path, "llama.cpp cannot create a context for the model", mark);
    }
    lib_->set_n_threads(ctx_, threads, threads);
    vocab_ = lib_->model_get_vocab(model_);
    n_vocab_ = lib_->vocab_n_tokens(vocab_);
}

LlamaModel::~LlamaModel() {
    if (ctx_) lib_->free_context(ctx_);
    lib_->model_free(model_);
}

int LlamaModel::n_vocab() const {
    return n_vocab_;
}
int LlamaModel::rope_type() const {
    return lib_->model_rope_type(model_);
}
int LlamaModel::n_layer() const {
    return lib_->model_n_layer(model_);
}
int LlamaModel::n_head() const {
    return lib_->model_n_head(model_);
}
int LlamaModel::n_head_kv() const {
    return lib_->model_n_head_kv(model_);
}
int LlamaModel::n_embd() const {
    return lib_->model_n_embd(model_);
}
int LlamaModel::n_swa() const {
    return lib_->model_n_swa(model_);
}
int32_t LlamaModel::bos() const {
    return lib_->vocab_bos(vocab_);
}
int32_t LlamaModel::eos() const {
    return lib_->vocab_eos(vocab_);
}

bool LlamaModel::is_eog(int32_t token) const {
    return lib_->vocab_is_eog(vocab_, token);
}

void LlamaModel::submit(std::span<const Part> parts) {
    const auto where = [&] { return path_ + ": decode"; };
    if (!ctx_) throw Error(where(), std::nullopt, "the model was loaded as a vocabulary only");
    size_t n = 0;
    for (const Part &p : parts) {
        const size_t k = p.tokens.size();
        if (k == 0) throw Error(where(), std::nullopt, "no tokens");
        if (k > size_t(options_.n_ctx))
            throw Error(where(), std::nullopt,
                        std::to_string(k) + " tokens, more than the context's batch of " +
                            std::to_string(options_.n_ctx));
        if (p.seq < 0 || p.seq >= options_.n_seq)
            throw Error(
                where(), std::nullopt,
                "sequence " + std::to_string(p.seq) + " of " + std::to_string(options_.n_seq));
        if (p.pos0 < 0 || int64_t(p.pos0) + int64_t(k) > options_.n_ctx)
            throw Error(where(), std::nullopt,
                        "positions " + std::to_string(p.pos0) + ".." +
                            std::to_string(int64_t(p.pos0) + int64_t(k) - 1) + " outside 0.." +
                            std::to_string(options_.n_ctx - 1));
        for (size_t i = 0; i < k; ++i)
            if (p.tokens[i] < 0 || p.tokens[i] >= n_vocab_)
                throw Error(where(), std::nullopt,
                            "token " + std::to_string(p.tokens[i]) + " at " + std::to_string(i) +
                                " is not in the vocabulary of " + std::to_string(n_vocab_));
        n += k;
    }

    std::vector<int32_t> token, pos, n_seq_id(n, 1), seq_ids;
    for (const Part &p : parts)
        for (size_t i = 0; i < p.tokens.size(); ++i) {
            token.push_back(p.tokens[i]);
            pos.push_back(p.pos0 + int32_t(i));
            seq_ids.push_back(p.seq);
        }
    std::vector<int32_t *> seq_id(n);
    std::vector<int8_t> logits(n, 1);
    for (size_t i = 0; i < n; ++i) seq_id[i] = &seq_ids[i];
    const Batch batch{int32_t(n),      token.data(),  nullptr,      pos.data(),
                      n_seq_id.data(), seq_id.data(), logits.data()};
    const uint64_t mark = log_mark();
    const int32_t rc = lib_->decode(ctx_, batch);
    if (rc != 0) {
        const char *meaning = rc == 1    ? "no room in the KV cache"
                              : rc == 2  ? "aborted"
                              : rc == -1 ? "invalid batch"
                                         : "fatal error";
        fail(where(), "llama_decode returned " + std::to_string(rc) + " (" + meaning + ")", mark);
    }
}

void LlamaModel::decode_sequences(const std::vector<std::vector<int32_t>> &seqs) {
    if (!options_.embeddings)
        throw Error(path_ + ": decode", std::nullopt, "the context was made without embeddings");
    std::vector<Part> parts;
    for (size_t s = 0; s < seqs.size(); ++s) parts.push_back({seqs[s], 0, int32_t(s)});
    submit(parts);
}

std::vector<float> LlamaModel::decode(std::span<const int32_t> tokens, int32_t pos0, int32_t seq) {
    const auto where = [&] { return path_ + ": decode"; };
    if (options_.embeddings)
        throw Error(where(), std::nullopt, "the context gives embeddings, not logits");
    const Part part{tokens, pos0, seq};
    submit({&part, 1});
    const size_t n = tokens.size();
    const uint64_t mark = log_mark();
    std::vector<float> out(n * size_t(n_vocab_));
    for (size_t i = 0; i < n; ++i) {
        const float *row = lib_->get_logits_ith(ctx_, int32_t(i));
        if (!row) fail(where(), "llama.cpp has no logits for position " + std::to_string(i), mark);
        std::copy(row, row + n_vocab_, out.begin() + int64_t(i) * n_vocab_);
    }
    return out;
}

std::vector<float> LlamaModel::decode_embeddings(std::span<const int32_t> tokens, int32_t seq) {
    const auto where = [&] { return path_ + ": decode"; };
    if (!options_.embeddings)
        throw Error(where(), std::nullopt, "the context was made without embeddings");
    const Part part{tokens, 0, seq};
    submit({&part, 1});
    if (pooling_type() != 0) return {};
    const size_t n = tokens.size(), E = size_t(n_embd());
    const uint64_t mark = log_mark();
    std::vector<float> out(n * E);
    for (size_t i = 0; i < n; ++i) {
        const float *row = lib_->get_embeddings_ith(ctx_, int32_t(i));
        if (!row)
            fail(where(), "llama.cpp has no embedding for position " + std::to_string(i), mark);
        std::copy(row, row + E, out.begin() + int64_t(i * E));
    }
    return out;
}

std::vector<float> LlamaModel::pooled(int32_t seq) const {
    const uint64_t mark = log_mark();
    const float *v = ctx_ ? lib_->get_embeddings_seq(ctx_, seq) : nullptr;
    if (!v) fail(path_ + ": pooled", "llama.cpp has no pooled embedding for the sequence", mark);
    return std::vector<float>(v, v + n_embd());
}

int LlamaModel::pooling_type() const {
    return ctx_ ? lib_->pooling_type(ctx_) : 0;
}

void LlamaModel::clear() {
    if (!ctx_) return;  // a vocabulary only: no cache
    lib_->memory_clear(lib_->get_memory(ctx_), true);
}

std::vector<int32_t> LlamaModel::tokenize(std::string_view text, bool add_special,
                                          bool parse_special) const {
    if (text.size() > size_t(INT32_MAX / 2))
        throw Error(path_ + ": tokenize", std::nullopt, "text too long");
    std::vector<int32_t> out(text.size() + 8);
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int32_t got = lib_->tokenize(vocab_, text.data(), int32_t(text.size()), out.data(),
                                           int32_t(out.size()), add_special, parse_special);
        if (got == INT32_MIN) break;
        if (got >= 0) {
            out.resize(size_t(got));
            return out;
        }
        out.resize(size_t(-int64_t(got)));
    }
    throw Error(path_ + ": tokenize", std::nullopt, "llama_tokenize failed");
}

std::string LlamaModel::detokenize(std::span<const int32_t> tokens, bool remove_special,
                                   bool unparse_special) const {
    for (const int32_t t : tokens)
        if (t < 0 || t >= n_vocab_)
            throw Error(path_ + ": detokenize", std::nullopt,
                        "token " + std::to_string(t) + " is not in the vocabulary");
    std::string out(tokens.size() * 8 + 16, '\0');
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int32_t got =
            lib_->detokenize(vocab_, tokens.data(), int32_t(tokens.size()), out.data(),
                             int32_t(out.size()), remove_special, unparse_special);
        if (got >= 0) {
            out.resize(size_t(got));
            return out;
        }
        out.resize(size_t(-int64_t(got)));
    }
    throw Error(path_ + ": detokenize", std::nullopt, "llama_detokenize failed");
}

std::string LlamaModel::token_to_piece(int32_t token, bool special) const {
    if (token < 0 || token >= n_vocab_)
        throw Error(path_ + ": token_to_piece", std::nullopt,
                    "token " + std::to_string(token) + " is not in the vocabulary");
    std::string out(32, '\0');
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int32_t got =
            lib_->token_to_piece(vocab_, token, out.data(), int32_t(out.size()), 0, special);
        if (got >= 0) {
            out.resize(size_t(got));
            return out;
        }
        out.resize(size_t(-int64_t(got)));
    }
    throw Error(path_ + ": token_to_piece", std::nullopt, "llama_token_to_piece failed");
}

// ---------------------------------------------------------------------------------------------

void quantize_model(std::shared_ptr<const LlamaLib> lib, const std::string &in,
                    const std::string &out, int ftype, unsigned threads,
                    const QuantizeExtras &extras) {
    if (!lib) throw Error(in, std::nullopt, "llama.cpp's libllama is not loaded");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(in, ec))
        throw Error(in, std::nullopt, ec ? ec.message() : "no such file");
    refuse_to_write_over(out, {in});
    // llama.cpp writes the file itself, by name: under a temporary name beside `out`, renamed when
    // complete.
    const std::filesystem::path final_path(out);
    std::string temp = (final_path.parent_path() /
                        ("." + final_path.filename().string() + ".llama-quantize.XXXXXX"))
                           .string();
    const int fd = mkstemp(temp.data());
    if (fd < 0) throw Error(out, std::nullopt, std::string("cannot create: ") + strerror(errno));
    ::close(fd);

    QuantizeParams p = lib->model_quantize_default_params();
    put<int32_t>(p, qp::nthread, int32_t(thread_count(threads)));
    put<int32_t>(p, qp::ftype, ftype);
    put<uint8_t>(p, qp::pure, extras.pure);
    struct ImatrixEntry {  // struct llama_model_imatrix_data; the list ends with a null name
        const char *name;
        const float *data;
        size_t size;
    };
    std::vector<ImatrixEntry> imatrix;
    for (const auto &[name, values] : extras.imatrix)
        imatrix.push_back({name.c_str(), values.data(), values.size()});
    imatrix.push_back({nullptr, nullptr, 0});
    if (!extras.imatrix.empty()) put<const ImatrixEntry *>(p, qp::imatrix, imatrix.data());
    const uint64_t mark = log_mark();
    const uint32_t rc = lib->model_quantize(in.c_str(), temp.c_str(), &p);
    if (rc != 0) {
        std::filesystem::remove(temp, ec);
        fail(in,
             "llama_model_quantize to " +
                 (llama_ftype_name(ftype).empty() ? "ftype " + std::to_string(ftype)
                                                  : llama_ftype_name(ftype)) +
                 " failed",
             mark);
    }
    std::filesystem::rename(temp, final_path, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        throw Error(out, std::nullopt, "cannot rename the quantized model into place");
    }
}

namespace {

struct FtypeName {
    const char *name;
    int ftype;
};
// llama-quantize's names of the file types (tools/quantize/quantize.cpp), with their llama_ftype
// values from llama.h 0.5.0; aliases after the name they stand for.
constexpr std::array kFtypes = {
    FtypeName{"F32", 0},     FtypeName{"F16", 1},      FtypeName{"Q4_0", 2},
    FtypeName{"Q4_1", 3},    FtypeName{"Q8_0", 7},     FtypeName{"Q5_0", 8},
    FtypeName{"Q5_1", 9},    FtypeName{"Q2_K", 10},    FtypeName{"Q3_K_S", 11},
    FtypeName{"Q3_K_M", 12}, FtypeName{"Q3_K", 12},    FtypeName{"Q3_K_L", 13},
    FtypeName{"Q4_K_S", 14}, FtypeName{"Q4_K_M", 15},  FtypeName{"Q4_K", 15},
    FtypeName{"Q5_K_S", 16}, FtypeName{"Q5_K_M", 17},  FtypeName{"Q5_K", 17},
    FtypeName{"Q6_K", 18},   FtypeName{"IQ2_XXS", 19}, FtypeName{"IQ2_XS", 20},
    FtypeName{"Q2_K_S", 21}, FtypeName{"IQ3_XS", 22},  FtypeName{"IQ3_XXS", 23},
    FtypeName{"IQ1_S", 24},  FtypeName{"IQ4_NL", 25},  FtypeName{"IQ3_S", 26},
    FtypeName{"IQ3_M", 27},  FtypeName{"IQ2_S", 28},   FtypeName{"IQ2_M", 29},
    FtypeName{"IQ4_XS", 30}, FtypeName{"IQ1_M", 31},   FtypeName{"BF16", 32},
    FtypeName{"TQ1_0", 36},  FtypeName{"TQ2_0", 37},   FtypeName{"MXFP4_MOE", 38},
    FtypeName{"Q1_0", 40},   FtypeName{"Q2_0", 41},
};

}  // namespace

std::optional<int> llama_ftype_from_name(std::string_view name) {
    std::string upper(name);
    for (char &ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    for (const FtypeName &f : kFtypes)
        if (upper == f.name) return f.ftype;
    int n = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec == std::errc() && end == name.data() + name.size() && !llama_ftype_name(n).empty())
        return n;
    return std::nullopt;
}

std::string llama_ftype_name(int ftype) {
    for (const FtypeName &f : kFtypes)
        if (f.ftype == ftype) return f.name;
    return "";
}

}  // namespace gguftool::reference
