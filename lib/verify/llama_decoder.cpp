// llama.cpp's decoding of a GGML type to float32: its row functions from libggml-base.so, called
// on whole blocks, the blocks of a chunk split over threads.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>

#include "gguftool/parallel.hpp"
#include "gguftool/verify.hpp"

namespace gguftool::verify {
namespace {

// Below this many elements per thread, starting a thread costs more than it saves.
constexpr uint64_t kElementsPerThread = 1 << 16;

}  // namespace

LlamaDecoder::LlamaDecoder(std::shared_ptr<const reference::Ggml> ggml) : ggml_(std::move(ggml)) {
    if (!ggml_) throw Error("llama.cpp's library is not loaded");
    // Not in reference::Ggml: f16 and bf16 have row converters rather than dequantize_row_*.
    if (ggml_->handle) {
        fp16_row_ = reinterpret_cast<RowFn>(dlsym(ggml_->handle, "ggml_fp16_to_fp32_row"));
        bf16_row_ = reinterpret_cast<RowFn>(dlsym(ggml_->handle, "ggml_bf16_to_fp32_row"));
    }
}

LlamaDecoder::RowFn LlamaDecoder::row_fn(GgmlType type) const {
    switch (type) {
        case GgmlType::f16:
            return fp16_row_;
        case GgmlType::bf16:
            return bf16_row_;
        default: {
            const auto id = static_cast<uint32_t>(type);
            return id < std::size(ggml_->dequantize_row) ? ggml_->dequantize_row[id] : nullptr;
        }
    }
}

std::optional<std::string> LlamaDecoder::unsupported(GgmlType type) const {
    const TypeTraits *t = type_traits(static_cast<uint32_t>(type));
    if (!t || t->removed) return "unknown type";
    if (type == GgmlType::f32) return std::nullopt;  // compared with its own bytes
    if (!t->quantized && type != GgmlType::f16 && type != GgmlType::bf16)
        return fmt::format("plain {} data: llama.cpp does not decode it to float", t->name);
    if (!row_fn(type)) {
        const char *fn = type == GgmlType::f16    ? "ggml_fp16_to_fp32_row"
                         : type == GgmlType::bf16 ? "ggml_bf16_to_fp32_row"
                                                  : nullptr;
        return fn ? fmt::format("{} lacks {}", ggml_->path, fn)
                  : fmt::format("llama.cpp has no decoder for {}", t->name);
    }
    // A library with a decoder knows the type; its layout must be ours (ids are stable in ggml,
    // but a mismatch here would feed it bytes it reads differently).
    const int id = int(type);
    if (ggml_->type_size && ggml_->blck_size &&
        (ggml_->type_size(id) != t->type_size || uint64_t(ggml_->blck_size(id)) != t->block_size))
        return fmt::format("{}'s {} has another block layout ({} bytes per {} values)", ggml_->path,
                           t->name, ggml_->type_size(id), ggml_->blck_size(id));
    return std::nullopt;
}

void LlamaDecoder::decode(GgmlType type, std::span<const uint8_t> bytes, uint64_t elements,
                          float *out, unsigned threads) const {
    if (auto why = unsupported(type)) throw Error(*why);
    const TypeTraits &t = traits(type);
    const std::optional<uint64_t> need = row_bytes(type, elements);
    if (!need || *need != bytes.size())
        throw Error(fmt::format("{} {} values need {} bytes, got {}", elements, t.name,
                                need ? std::to_string(*need) : "a whole number of blocks of",
                                bytes.size()));
    if (type == GgmlType::f32) {
        if (elements) std::memcpy(out, bytes.data(), bytes.size());
        return;
    }
    const RowFn fn = row_fn(type);
    const unsigned parts =
        unsigned(std::min<uint64_t>(thread_count(threads), elements / kElementsPerThread + 1));
    for_each_part(elements, t.block_size, parts, [&](unsigned, uint64_t first, uint64_t last) {
        if (first == last) return;
        fn(bytes.data() + first / t.block_size * t.type_size, out + first, int64_t(last - first));
    });
}

}  // namespace gguftool::verify
