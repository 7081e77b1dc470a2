#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

#ifndef GGUFTOOL_REFERENCE_DIR
#define GGUFTOOL_REFERENCE_DIR ""
#endif

namespace gguftool::reference {
namespace {

template <class F>
void resolve(void *h, F &fn, const char *name) {
    fn = reinterpret_cast<F>(dlsym(h, name));
}

// ggml's function names use the upper-case K of the type names ("q4_K").
std::string type_symbol_suffix(uint32_t id) {
    return type_traits(id)->name;
}

void resolve_all(Ggml &g) {
    void *h = g.handle;
    resolve(h, g.type_name, "ggml_type_name");
    resolve(h, g.type_size, "ggml_type_size");
    resolve(h, g.blck_size, "ggml_blck_size");
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        if (type_traits(id)->removed) continue;
        const std::string s = type_symbol_suffix(id);
        resolve(h, g.dequantize_row[id], ("dequantize_row_" + s).c_str());
        resolve(h, g.quantize_row_ref[id], ("quantize_row_" + s + "_ref").c_str());
    }
    resolve(h, g.quantize_init, "ggml_quantize_init");
    resolve(h, g.quantize_chunk, "ggml_quantize_chunk");
    resolve(h, g.quantize_requires_imatrix, "ggml_quantize_requires_imatrix");

    resolve(h, g.gguf_init_from_file, "gguf_init_from_file");
    resolve(h, g.gguf_free, "gguf_free");
    resolve(h, g.gguf_get_version, "gguf_get_version");
    resolve(h, g.gguf_get_alignment, "gguf_get_alignment");
    resolve(h, g.gguf_get_data_offset, "gguf_get_data_offset");
    resolve(h, g.gguf_get_n_kv, "gguf_get_n_kv");
    resolve(h, g.gguf_get_key, "gguf_get_key");
    resolve(h, g.gguf_get_kv_type, "gguf_get_kv_type");
    resolve(h, g.gguf_get_arr_type, "gguf_get_arr_type");
    resolve(h, g.gguf_get_arr_n, "gguf_get_arr_n");
    resolve(h, g.gguf_get_arr_data, "gguf_get_arr_data");
    resolve(h, g.gguf_get_arr_str, "gguf_get_arr_str");
    resolve(h, g.gguf_get_val_data, "gguf_get_val_data");
    resolve(h, g.gguf_get_val_str, "gguf_get_val_str");
    resolve(h, g.gguf_get_val_u8, "gguf_get_val_u8");
    resolve(h, g.gguf_get_val_i8, "gguf_get_val_i8");
    resolve(h, g.gguf_get_val_u16, "gguf_get_val_u16");
    resolve(h, g.gguf_get_val_i16, "gguf_get_val_i16");
    resolve(h, g.gguf_get_val_u32, "gguf_get_val_u32");
    resolve(h, g.gguf_get_val_i32, "gguf_get_val_i32");
    resolve(h, g.gguf_get_val_f32, "gguf_get_val_f32");
    resolve(h, g.gguf_get_val_u64, "gguf_get_val_u64");
    resolve(h, g.gguf_get_val_i64, "gguf_get_val_i64");
    resolve(h, g.gguf_get_val_f64, "gguf_get_val_f64");
    resolve(h, g.gguf_get_val_bool, "gguf_get_val_bool");
    resolve(h, g.gguf_get_n_tensors, "gguf_get_n_tensors");
    resolve(h, g.gguf_get_tensor_name, "gguf_get_tensor_name");
    resolve(h, g.gguf_get_tensor_type, "gguf_get_tensor_type");
    resolve(h, g.gguf_get_tensor_offset, "gguf_get_tensor_offset");
    resolve(h, g.gguf_get_tensor_size, "gguf_get_tensor_size");

    resolve(h, g.gguf_init_empty, "gguf_init_empty");
    resolve(h, g.gguf_set_val_u8, "gguf_set_val_u8");
    resolve(h, g.gguf_set_val_i8, "gguf_set_val_i8");
    resolve(h, g.gguf_set_val_u16, "gguf_set_val_u16");
    resolve(h, g.gguf_set_val_i16, "gguf_set_val_i16");
    resolve(h, g.gguf_set_val_u32, "gguf_set_val_u32");
    resolve(h, g.gguf_set_val_i32, "gguf_set_val_i32");
    resolve(h, g.gguf_set_val_f32, "gguf_set_val_f32");
    resolve(h, g.gguf_set_val_u64, "gguf_set_val_u64");
    resolve(h, g.gguf_set_val_i64, "gguf_set_val_i64");
    resolve(h, g.gguf_set_val_f64, "gguf_set_val_f64");
    resolve(h, g.gguf_set_val_bool, "gguf_set_val_bool");
    resolve(h, g.gguf_set_val_str, "gguf_set_val_str");
    resolve(h, g.gguf_set_arr_data, "gguf_set_arr_data");
    resolve(h, g.gguf_set_arr_str, "gguf_set_arr_str");
    resolve(h, g.gguf_write_to_file, "gguf_write_to_file");
    resolve(h, g.gguf_find_key, "gguf_find_key");
    resolve(h, g.gguf_set_kv, "gguf_set_kv");

    resolve(h, g.ggml_init, "ggml_init");
    resolve(h, g.ggml_free, "ggml_free");
    resolve(h, g.ggml_new_tensor, "ggml_new_tensor");
    resolve(h, g.ggml_set_name, "ggml_set_name");
    resolve(h, g.gguf_add_tensor, "gguf_add_tensor");
    resolve(h, g.gguf_set_tensor_data, "gguf_set_tensor_data");
    resolve(h, g.ggml_get_tensor, "ggml_get_tensor");
}

}  // namespace

Ggml::~Ggml() {
    if (handle) dlclose(handle);
}

std::shared_ptr<const Ggml> load_ggml(const std::string &explicit_path, std::string *why) {
    std::vector<std::string> candidates;
    if (!explicit_path.empty()) {
        candidates.push_back(explicit_path);
    } else {
        if (const char *env = std::getenv("GGUFTOOL_GGML_LIB"); env && *env)
            candidates.push_back(env);
        if (*GGUFTOOL_REFERENCE_DIR)
            candidates.push_back(std::string(GGUFTOOL_REFERENCE_DIR) + "/libggml-base.so");
        candidates.push_back("libggml-base.so");
    }
    std::string errors;
    for (const std::string &path : candidates) {
        // NODELETE: llama.cpp keeps tables in globals (the IQ quantizers' grids); unmapping the
        // library at exit would orphan them, and LeakSanitizer would call that a leak.
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h) {
            errors += (errors.empty() ? "" : "; ") + std::string(dlerror());
            continue;
        }
        auto g = std::make_shared<Ggml>();
        g->handle = h;
        g->path = path;
        resolve_all(*g);
        if (!g->type_name || !g->gguf_init_from_file) {
            errors += (errors.empty() ? "" : "; ") + path + ": not a libggml-base.so";
            continue;
        }
        return g;
    }
    if (why) *why = "cannot load llama.cpp's libggml-base.so (" + errors + ")";
    return nullptr;
}

std::shared_ptr<const Ggml> ggml() {
    static std::once_flag once;
    static std::shared_ptr<const Ggml> lib;
    std::call_once(once, [] { lib = load_ggml("", nullptr); });
    return lib;
}

}  // namespace gguftool::reference
