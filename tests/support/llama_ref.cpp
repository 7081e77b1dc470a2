#include "llama_ref.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "gguftool/error.hpp"
#include "gguftool/llama_reference.hpp"

namespace gguftool::testkit {

namespace {

// The one call into llama.cpp's quantizers: `values` as rows of n_per_row into `out`.
void quantize_into(const reference::Ggml &g, GgmlType type, const std::vector<float> &values,
                   size_t n_per_row, const std::vector<float> &imatrix, void *out) {
    const uint32_t id = static_cast<uint32_t>(type);
    if (quantized_by_ref_row(type)) {
        g.quantize_row_ref[id](values.data(), out, int64_t(values.size()));
    } else {
        g.quantize_chunk(int(id), values.data(), out, 0, int64_t(values.size() / n_per_row),
                         int64_t(n_per_row), imatrix.empty() ? nullptr : imatrix.data());
    }
}

// Why llama.cpp cannot quantize `values` to `type`, or "".
std::string cannot_quantize(const reference::Ggml &g, GgmlType type,
                            const std::vector<float> &values, size_t n_per_row) {
    if (!row_bytes(type, values.size()) || n_per_row == 0 || values.size() % n_per_row != 0)
        return "bad shape";
    const uint32_t id = static_cast<uint32_t>(type);
    if (quantized_by_ref_row(type) ? !g.quantize_row_ref[id]
                                   : (!g.quantize_chunk || !g.quantize_init))
        return std::string("libggml-base.so lacks a quantizer for ") + type_name(type);
    return "";
}

std::vector<float> dequantize_with_llama(const reference::Ggml &g, GgmlType type,
                                         const std::vector<uint8_t> &bytes, size_t n) {
    std::vector<float> out(n);
    if (type == GgmlType::f32) {
        if (n) std::memcpy(out.data(), bytes.data(), n * 4);
        return out;
    }
    reference::Ggml::DequantizeRow fn = g.dequantize_row[uint32_t(type)];
    // f16 and bf16 have row converters instead (ggml_fp16_to_fp32_row, ggml_bf16_to_fp32_row).
    const char *row_fn = type == GgmlType::f16    ? "ggml_fp16_to_fp32_row"
                         : type == GgmlType::bf16 ? "ggml_bf16_to_fp32_row"
                                                  : nullptr;
    if (row_fn) fn = reinterpret_cast<reference::Ggml::DequantizeRow>(dlsym(g.handle, row_fn));
    if (!fn) return {};
    if (n) fn(bytes.data(), out.data(), int64_t(n));
    return out;
}

}  // namespace

bool quantized_by_ref_row(GgmlType t) {
    return t == GgmlType::q8_k || t == GgmlType::q8_1;
}

bool requires_imatrix(const reference::Ggml &g, GgmlType t) {
    return !quantized_by_ref_row(t) && g.quantize_requires_imatrix &&
           g.quantize_requires_imatrix(int(t));
}

std::vector<uint8_t> quantize_rows(const reference::Ggml &g, GgmlType type,
                                   const std::vector<float> &values, size_t n_per_row,
                                   const std::vector<float> &imatrix) {
    const std::string why = cannot_quantize(g, type, values, n_per_row);
    if (!why.empty()) throw std::runtime_error(why);
    std::vector<uint8_t> out(*row_bytes(type, values.size()));
    quantize_into(g, type, values, n_per_row, imatrix, out.data());
    return out;
}

Quantized quantize_with_llama(const reference::Ggml &g, GgmlType type,
                              const std::vector<float> &values, size_t n_per_row,
                              const std::vector<float> &imatrix) {
    Quantized q;
    q.failure = cannot_quantize(g, type, values, n_per_row);
    if (!q.failure.empty()) return q;
    if (requires_imatrix(g, type) && imatrix.empty()) {
        q.failure = "this type needs an importance matrix";
        return q;
    }
    const size_t size = *row_bytes(type, values.size());
    void *shared =
        mmap(nullptr, size + 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        q.failure = "mmap failed";
        return q;
    }
    // The grid tables of the IQ quantizers take a while to build: build them here, once, so every
    // child inherits them.
    if (!quantized_by_ref_row(type)) g.quantize_init(int(type));
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(60);  // a quantizer that never finishes fails rather than hangs
        // No gdb backtrace on abort (slow), and none of ggml's diagnostics in the test output:
        // the failure is reported by the caller.
        setenv("GGML_NO_BACKTRACE", "1", 1);
        if (FILE *null = std::fopen("/dev/null", "w")) {
            dup2(fileno(null), 1);
            dup2(fileno(null), 2);
        }
        quantize_into(g, type, values, n_per_row, imatrix, shared);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        q.failure = "fork failed";
    } else if (WIFSIGNALED(status)) {
        q.failure =
            "llama.cpp's quantizer aborted (signal " + std::to_string(WTERMSIG(status)) + ")";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        q.failure = "llama.cpp's quantizer failed";
    } else {
        const auto *p = static_cast<const uint8_t *>(shared);
        q.bytes.assign(p, p + size);
    }
    munmap(shared, size + 1);
    return q;
}

std::vector<float> reference_decode(const reference::Ggml &g, GgmlType type,
                                    const std::vector<uint8_t> &bytes, size_t n) {
    if (type != GgmlType::q8_1) return dequantize_with_llama(g, type, bytes, n);
    std::vector<uint8_t> q8_0;
    for (size_t k = 0; k + 36 <= bytes.size(); k += 36) {
        q8_0.insert(q8_0.end(), bytes.begin() + int64_t(k), bytes.begin() + int64_t(k) + 2);
        q8_0.insert(q8_0.end(), bytes.begin() + int64_t(k) + 4, bytes.begin() + int64_t(k) + 36);
    }
    return dequantize_with_llama(g, GgmlType::q8_0, q8_0, n);
}

void write_with_llama(const reference::Ggml &g, const std::string &path,
                      const std::vector<LlamaTensor> &tensors, const LlamaMetadata &add_metadata) {
    reference::gguf_context *ctx = g.gguf_init_empty();
    if (add_metadata) add_metadata(g, ctx);
    // Tensor descriptors live in a no_alloc ggml context; their bytes stay in `tensors`.
    void *gctx = g.ggml_init({size_t(1) << 22, nullptr, true});
    for (const LlamaTensor &t : tensors) {
        void *tensor = g.ggml_new_tensor(gctx, int(t.type), int(t.ne.size()), t.ne.data());
        g.ggml_set_name(tensor, t.name.c_str());
        g.gguf_add_tensor(ctx, tensor);
        g.gguf_set_tensor_data(ctx, t.name.c_str(), t.bytes.data());
    }
    const bool ok = g.gguf_write_to_file(ctx, path.c_str(), false);
    g.gguf_free(ctx);
    g.ggml_free(gctx);
    if (!ok) throw std::runtime_error("llama.cpp could not write " + path);
}

std::string model_quantize(const std::string &in, const std::string &out, int ftype, int threads) {
    std::string why;
    const auto lib = reference::load_llama(&why);
    if (!lib) return why;
    try {
        reference::quantize_model(lib, in, out, ftype, unsigned(std::max(threads, 0)));
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

LlamaGreedy llama_greedy(const std::string &gguf, const std::vector<int32_t> &prompt, int steps) {
    static const std::shared_ptr<const reference::LlamaLib> lib = [] {
        std::string why;
        auto l = reference::load_llama(&why);
        if (!l) throw std::runtime_error("libllama: " + why);
        return l;
    }();
    reference::LlamaModel::Options o;
    o.n_ctx = 256;
    reference::LlamaModel m(lib, gguf, o);
    LlamaGreedy r;
    std::vector<int32_t> feed = prompt;
    int32_t pos = 0;
    for (int s = 0; s <= steps; ++s) {
        r.logits.push_back(m.decode(feed, pos));
        pos += int32_t(feed.size());
        const float *last = r.logits.back().data() + (feed.size() - 1) * size_t(m.n_vocab());
        r.chosen.push_back(int32_t(std::max_element(last, last + m.n_vocab()) - last));
        feed = {r.chosen.back()};
    }
    return r;
}

}  // namespace gguftool::testkit
