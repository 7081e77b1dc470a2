// llama.cpp's own model quantizer, llama_model_quantize, from its libllama (loaded at run time,
// from beside the libggml-base.so that gguftool::reference::ggml() found): what llama-quantize
// runs, k-quant mixtures (Q4_K_M ...) included.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "gguftool/reference.hpp"

namespace gguftool::llama {

// llama_ftype values (llama.h).
inline constexpr int kFtypeMostlyF16 = 1;
inline constexpr int kFtypeMostlyQ4_K_M = 15;

namespace detail {

// llama_model_quantize_params, declared here only as far as we use it: its first two members,
// int32 nthread and enum llama_ftype ftype, have kept their place in every version. The rest is
// left as llama_model_quantize_default_params() sets it; the struct (64 bytes in the library
// shipped by the set-up) is larger than 16 bytes, so on x86-64 it is returned through memory and
// a larger buffer receives it whole.
struct Params {
    int32_t nthread;
    int32_t ftype;
    alignas(8) unsigned char rest[504];
};
using DefaultParamsFn = Params (*)();
using QuantizeFn = uint32_t (*)(const char *in, const char *out, const Params *params);
using LogFn = void (*)(int level, const char *text, void *user_data);
using LogSetFn = void (*)(LogFn callback, void *user_data);

struct Library {
    DefaultParamsFn default_params = nullptr;
    QuantizeFn quantize = nullptr;
    LogSetFn log_set = nullptr;
};

inline const Library *library(std::string *why) {
    static const Library lib = []() -> Library {
        Library l;
        const auto g = reference::ggml();
        if (!g) return l;
        const auto dir = std::filesystem::path(g->path).parent_path();
        for (const auto &e : std::filesystem::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            if (!name.starts_with("libllama") || !name.ends_with(".so")) continue;
            void *h = dlopen(e.path().c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!h) continue;
            l.quantize = reinterpret_cast<QuantizeFn>(dlsym(h, "llama_model_quantize"));
            if (!l.quantize) continue;  // libllama-common
            l.default_params =
                reinterpret_cast<DefaultParamsFn>(dlsym(h, "llama_model_quantize_default_params"));
            l.log_set = reinterpret_cast<LogSetFn>(dlsym(h, "llama_log_set"));
            break;
        }
        return l;
    }();
    if (lib.quantize && lib.default_params) return &lib;
    *why = "llama_model_quantize not found: no libllama beside llama.cpp's libggml-base.so";
    return nullptr;
}

}  // namespace detail

// Quantizes the model `in` into `out` as llama-quantize does, to llama_ftype `ftype`, on
// `threads` threads (0: all). Its log is silenced. Returns "" on success, else why it failed.
inline std::string model_quantize(const std::string &in, const std::string &out, int ftype,
                                  int threads = 0) {
    std::string why;
    const detail::Library *lib = detail::library(&why);
    if (!lib) return why;
    if (lib->log_set) lib->log_set([](int, const char *, void *) {}, nullptr);
    detail::Params p = lib->default_params();
    p.nthread = threads;
    p.ftype = ftype;
    if (lib->quantize(in.c_str(), out.c_str(), &p) != 0)
        return "llama_model_quantize failed on " + in;
    return "";
}

}  // namespace gguftool::llama
