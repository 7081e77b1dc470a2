// llama.cpp's own ggml, loaded at run time (dlopen) from a prebuilt libggml-base.so: the ground
// truth for tests and `gguftool verify`. Nothing of ggml is compiled into gguftool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gguftool::reference {

// Opaque llama.cpp handles.
struct gguf_context;

// Function pointers resolved from libggml-base.so. Any may be null if the library lacks it.
struct Ggml {
    std::string path;  // where the library was loaded from

    // Type table.
    const char *(*type_name)(int type) = nullptr;
    size_t (*type_size)(int type) = nullptr;
    int64_t (*blck_size)(int type) = nullptr;

    // Row decoders and quantizers, indexed by ggml type id (null where the library has none).
    using DequantizeRow = void (*)(const void *x, float *y, int64_t k);
    using QuantizeRowRef = void (*)(const float *x, void *y, int64_t k);
    DequantizeRow dequantize_row[64] = {};
    QuantizeRowRef quantize_row_ref[64] = {};
    void (*quantize_init)(int type) = nullptr;
    size_t (*quantize_chunk)(int type, const float *src, void *dst, int64_t start, int64_t nrows,
                             int64_t n_per_row, const float *imatrix) = nullptr;
    bool (*quantize_requires_imatrix)(int type) = nullptr;

    // GGUF reader and writer.
    struct InitParams {
        bool no_alloc;
        void **ctx;  // struct ggml_context **
    };
    gguf_context *(*gguf_init_from_file)(const char *fname, InitParams params) = nullptr;
    void (*gguf_free)(gguf_context *ctx) = nullptr;
    uint32_t (*gguf_get_version)(const gguf_context *ctx) = nullptr;
    size_t (*gguf_get_alignment)(const gguf_context *ctx) = nullptr;
    size_t (*gguf_get_data_offset)(const gguf_context *ctx) = nullptr;
    int64_t (*gguf_get_n_kv)(const gguf_context *ctx) = nullptr;
    const char *(*gguf_get_key)(const gguf_context *ctx, int64_t key_id) = nullptr;
    int (*gguf_get_kv_type)(const gguf_context *ctx, int64_t key_id) = nullptr;
    int (*gguf_get_arr_type)(const gguf_context *ctx, int64_t key_id) = nullptr;
    size_t (*gguf_get_arr_n)(const gguf_context *ctx, int64_t key_id) = nullptr;
    const void *(*gguf_get_arr_data)(const gguf_context *ctx, int64_t key_id) = nullptr;
    const char *(*gguf_get_arr_str)(const gguf_context *ctx, int64_t key_id, size_t i) = nullptr;
    const void *(*gguf_get_val_data)(const gguf_context *ctx, int64_t key_id) = nullptr;
    const char *(*gguf_get_val_str)(const gguf_context *ctx, int64_t key_id) = nullptr;
    // The typed getters (each aborts on a key of another type: check gguf_get_kv_type first).
    uint8_t (*gguf_get_val_u8)(const gguf_context *, int64_t) = nullptr;
    int8_t (*gguf_get_val_i8)(const gguf_context *, int64_t) = nullptr;
    uint16_t (*gguf_get_val_u16)(const gguf_context *, int64_t) = nullptr;
    int16_t (*gguf_get_val_i16)(const gguf_context *, int64_t) = nullptr;
    uint32_t (*gguf_get_val_u32)(const gguf_context *, int64_t) = nullptr;
    int32_t (*gguf_get_val_i32)(const gguf_context *, int64_t) = nullptr;
    float (*gguf_get_val_f32)(const gguf_context *, int64_t) = nullptr;
    uint64_t (*gguf_get_val_u64)(const gguf_context *, int64_t) = nullptr;
    int64_t (*gguf_get_val_i64)(const gguf_context *, int64_t) = nullptr;
    double (*gguf_get_val_f64)(const gguf_context *, int64_t) = nullptr;
    bool (*gguf_get_val_bool)(const gguf_context *, int64_t) = nullptr;
    int64_t (*gguf_get_n_tensors)(const gguf_context *ctx) = nullptr;
    const char *(*gguf_get_tensor_name)(const gguf_context *ctx, int64_t tensor_id) = nullptr;
    int (*gguf_get_tensor_type)(const gguf_context *ctx, int64_t tensor_id) = nullptr;
    size_t (*gguf_get_tensor_offset)(const gguf_context *ctx, int64_t tensor_id) = nullptr;
    size_t (*gguf_get_tensor_size)(const gguf_context *ctx, int64_t tensor_id) = nullptr;

    gguf_context *(*gguf_init_empty)() = nullptr;
    void (*gguf_set_val_u8)(gguf_context *, const char *, uint8_t) = nullptr;
    void (*gguf_set_val_i8)(gguf_context *, const char *, int8_t) = nullptr;
    void (*gguf_set_val_u16)(gguf_context *, const char *, uint16_t) = nullptr;
    void (*gguf_set_val_i16)(gguf_context *, const char *, int16_t) = nullptr;
    void (*gguf_set_val_u32)(gguf_context *, const char *, uint32_t) = nullptr;
    void (*gguf_set_val_i32)(gguf_context *, const char *, int32_t) = nullptr;
    void (*gguf_set_val_f32)(gguf_context *, const char *, float) = nullptr;
    void (*gguf_set_val_u64)(gguf_context *, const char *, uint64_t) = nullptr;
    void (*gguf_set_val_i64)(gguf_context *, const char *, int64_t) = nullptr;
    void (*gguf_set_val_f64)(gguf_context *, const char *, double) = nullptr;
    void (*gguf_set_val_bool)(gguf_context *, const char *, bool) = nullptr;
    void (*gguf_set_val_str)(gguf_context *, const char *, const char *) = nullptr;
    void (*gguf_set_arr_data)(gguf_context *, const char *, int type, const void *data,
                              size_t n) = nullptr;
    void (*gguf_set_arr_str)(gguf_context *, const char *, const char **data, size_t n) = nullptr;
    bool (*gguf_write_to_file)(const gguf_context *ctx, const char *fname,
                               bool only_meta) = nullptr;
    int64_t (*gguf_find_key)(const gguf_context *ctx, const char *key) = nullptr;  // -1: absent
    // Copies (sets or adds) every key-value pair of `src`, as gguf-split does for its first shard.
    void (*gguf_set_kv)(gguf_context *ctx, const gguf_context *src) = nullptr;

    // ggml tensors, needed only to add tensors through llama.cpp's writer.
    struct InitParamsGgml {
        size_t mem_size;
        void *mem_buffer;
        bool no_alloc;
    };
    void *(*ggml_init)(InitParamsGgml params) = nullptr;  // ggml_context *
    void (*ggml_free)(void *ctx) = nullptr;
    void *(*ggml_new_tensor)(void *ctx, int type, int n_dims, const int64_t *ne) = nullptr;
    void *(*ggml_set_name)(void *tensor, const char *name) = nullptr;
    void (*gguf_add_tensor)(gguf_context *ctx, const void *tensor) = nullptr;
    void (*gguf_set_tensor_data)(gguf_context *ctx, const char *name, const void *data) = nullptr;
    void *(*ggml_get_tensor)(void *ctx, const char *name) = nullptr;  // ggml_tensor *, or null

    void *handle = nullptr;
    ~Ggml();
};

// Where to look, in order: `explicit_path` if non-empty, $GGUFTOOL_GGML_LIB, the copy installed by
// the project's set-up (npm ci: node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/), then the
// system library path (libggml-base.so). Returns nullptr and sets `why` when none loads.
std::shared_ptr<const Ggml> load_ggml(const std::string &explicit_path, std::string *why);

// The library, loaded once per process with the default search; nullptr if unavailable.
std::shared_ptr<const Ggml> ggml();

}  // namespace gguftool::reference
