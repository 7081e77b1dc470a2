// The kit's GoogleTest helpers: its files (files.hpp), a raw byte builder for malformed files
// (raw_gguf.hpp), the cross-check of our reader against llama.cpp's (reference::ggml()),
// llama.cpp's decode of a tensor's blocks, and floats compared bit for bit (floats.hpp).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "files.hpp"
#include "floats.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"
#include "llama_ref.hpp"
#include "raw_gguf.hpp"

namespace gguftool::testkit {

// testdata/sample.gguf, the sample model (sample_model.hpp).
inline const std::string kSample = std::string(GGUFTOOL_SOURCE_DIR) + "/testdata/sample.gguf";

// llama.cpp's library with its error log silenced (broken-file tests make it chatty).
inline const reference::Ggml *ggml() {
    static const std::shared_ptr<const reference::Ggml> lib = [] {
        auto g = reference::ggml();
        if (g && g->handle) {
            using LogCallback = void (*)(int, const char *, void *);
            auto log_set =
                reinterpret_cast<void (*)(LogCallback, void *)>(dlsym(g->handle, "ggml_log_set"));
            if (log_set) log_set([](int, const char *, void *) {}, nullptr);
        }
        return g;
    }();
    return lib.get();
}

// llama.cpp, or a failed test: the suite needs it (CI installs it).
inline const reference::Ggml &llama() {
    const reference::Ggml *g = ggml();
    if (!g) {
        ADD_FAILURE() << "llama.cpp's libggml-base.so is not available (run npm ci)";
        throw std::runtime_error("no llama.cpp");
    }
    return *g;
}

// gguf_get_tensor_ne is newer than reference.hpp; resolve it here.
inline const int64_t *llama_tensor_ne(const reference::Ggml &g, const reference::gguf_context *ctx,
                                      int64_t i) {
    using Fn = const int64_t *(*)(const reference::gguf_context *, int64_t);
    static const Fn fn = reinterpret_cast<Fn>(dlsym(g.handle, "gguf_get_tensor_ne"));
    return fn ? fn(ctx, i) : nullptr;
}

// Opens `path` with llama.cpp (no_alloc, no ggml context); nullptr when it rejects the file.
struct LlamaGguf {
    explicit LlamaGguf(const std::string &path) {
        g = ggml();
        if (g) ctx = g->gguf_init_from_file(path.c_str(), {true, nullptr});
    }
    ~LlamaGguf() {
        if (ctx) g->gguf_free(ctx);
    }
    LlamaGguf(const LlamaGguf &) = delete;
    LlamaGguf &operator=(const LlamaGguf &) = delete;

    const reference::Ggml *g = nullptr;
    reference::gguf_context *ctx = nullptr;
};

inline size_t scalar_bytes(gguf::ValueType t) {
    static constexpr uint8_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return kSizes[static_cast<uint32_t>(t)];
}

// Compares a scalar of ours with llama.cpp's bytes for it (bools by truth value, as llama.cpp
// stores them normalised).
inline void expect_same_scalar(const gguf::Value &ours, const void *theirs,
                               const std::string &what) {
    const size_t n = scalar_bytes(ours.type());
    if (ours.type() == gguf::ValueType::bool_) {
        EXPECT_EQ(ours.as_bool(), *static_cast<const int8_t *>(theirs) != 0) << what;
        return;
    }
    EXPECT_EQ(std::memcmp(ours.data(), theirs, n), 0) << what;
}

// What a C string API shows of `s`: up to the first NUL (llama.cpp hands out c_str()).
inline std::string_view up_to_nul(std::string_view s) {
    return s.substr(0, s.find('\0'));
}

// The cross-check: llama.cpp must accept the file and agree with `f` on everything it reports.
inline void expect_same_as_llama(const std::string &path, const gguf::File &f) {
    LlamaGguf l(path);
    ASSERT_NE(l.g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    ASSERT_NE(l.ctx, nullptr) << "llama.cpp rejects " << path;
    const reference::Ggml &g = *l.g;
    EXPECT_EQ(g.gguf_get_version(l.ctx), f.version());
    EXPECT_EQ(g.gguf_get_alignment(l.ctx), f.alignment());
    EXPECT_EQ(g.gguf_get_data_offset(l.ctx), f.data_offset());

    ASSERT_EQ(g.gguf_get_n_kv(l.ctx), static_cast<int64_t>(f.metadata().size()));
    for (size_t i = 0; i < f.metadata().size(); ++i) {
        const auto &e = f.metadata()[i];
        const std::string key(e.key);
        EXPECT_EQ(g.gguf_get_key(l.ctx, i), up_to_nul(key)) << "key " << i;
        const int kv_type = g.gguf_get_kv_type(l.ctx, i);
        ASSERT_EQ(kv_type, static_cast<int>(e.value.type())) << key;
        if (e.value.type() == gguf::ValueType::string) {
            EXPECT_EQ(g.gguf_get_val_str(l.ctx, i), up_to_nul(e.value.as_string())) << key;
        } else if (e.value.type() != gguf::ValueType::array) {
            expect_same_scalar(e.value, g.gguf_get_val_data(l.ctx, i), key);
        } else {
            ASSERT_EQ(g.gguf_get_arr_type(l.ctx, i), static_cast<int>(e.value.array_type())) << key;
            ASSERT_EQ(g.gguf_get_arr_n(l.ctx, i), e.value.array_size()) << key;
            if (e.value.array_type() == gguf::ValueType::string) {
                size_t k = 0;
                e.value.for_each_element([&](const gguf::Value &s) {
                    EXPECT_EQ(g.gguf_get_arr_str(l.ctx, i, k), up_to_nul(s.as_string()))
                        << key << "[" << k << "]";
                    ++k;
                });
            } else {
                const auto *data = static_cast<const uint8_t *>(g.gguf_get_arr_data(l.ctx, i));
                const size_t n = scalar_bytes(e.value.array_type());
                size_t k = 0;
                e.value.for_each_element([&](const gguf::Value &v) {
                    expect_same_scalar(v, data + k * n, key + "[" + std::to_string(k) + "]");
                    ++k;
                });
            }
        }
    }

    ASSERT_EQ(g.gguf_get_n_tensors(l.ctx), static_cast<int64_t>(f.tensors().size()));
    for (size_t i = 0; i < f.tensors().size(); ++i) {
        const auto &t = f.tensors()[i];
        const std::string name(t.name);
        EXPECT_EQ(g.gguf_get_tensor_name(l.ctx, i), up_to_nul(name)) << "tensor " << i;
        EXPECT_EQ(g.gguf_get_tensor_type(l.ctx, i), static_cast<int>(t.type)) << name;
        EXPECT_EQ(g.gguf_get_tensor_offset(l.ctx, i), t.offset) << name;
        EXPECT_EQ(g.gguf_get_tensor_size(l.ctx, i), t.bytes) << name;
        const int64_t *ne = llama_tensor_ne(g, l.ctx, i);
        ASSERT_NE(ne, nullptr) << "gguf_get_tensor_ne missing from libggml-base.so";
        for (int d = 0; d < 4; ++d) {
            EXPECT_EQ(static_cast<uint64_t>(ne[d]), t.ne[d]) << name << " ne[" << d << "]";
        }
    }
}

// True when llama.cpp's reader rejects the file.
inline bool llama_rejects(const std::string &path) {
    LlamaGguf l(path);
    return l.g && !l.ctx;
}

// llama.cpp's FLOAT decode of `bytes`, whole blocks of `type` (reference_decode: q8_1 by its
// definition); a test failure, and an empty result, when llama.cpp has no decoder for the type.
inline std::vector<float> llama_decode(const reference::Ggml &g, GgmlType type,
                                       const std::vector<uint8_t> &bytes) {
    const TypeTraits &tt = traits(type);
    const size_t elements = bytes.size() / tt.type_size * tt.block_size;
    std::vector<float> out = reference_decode(g, type, bytes, elements);
    if (out.size() != elements) ADD_FAILURE() << "libggml-base.so lacks dequantize_row_" << tt.name;
    return out;
}

// `actual` equal to `expected` bit for bit (NaNs as `nans` says); otherwise how many values differ
// and the first of them.
inline testing::AssertionResult same_bits(const std::vector<float> &expected,
                                          const std::vector<float> &actual, Nans nans) {
    if (expected.size() != actual.size())
        return testing::AssertionFailure()
               << "sizes differ: " << expected.size() << " vs " << actual.size();
    const size_t n = expected.size();
    const size_t first = first_difference(expected.data(), actual.data(), n, nans);
    if (first == n) return testing::AssertionSuccess();
    size_t mismatches = 0;
    for (size_t i = first; i < n; ++i) mismatches += !same_bits(expected[i], actual[i], nans);
    char buf[200];
    std::snprintf(buf, sizeof buf, "expected %.9g (0x%08x), got %.9g (0x%08x)", expected[first],
                  float_bits(expected[first]), actual[first], float_bits(actual[first]));
    return testing::AssertionFailure() << mismatches << " of " << n
                                       << " values differ; first at index " << first << ": " << buf;
}

}  // namespace gguftool::testkit
