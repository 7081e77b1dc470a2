// Reference values from DIR/<tensor name>.npy (read by the runtime's .npy reader), for users
// without llama.cpp's library: e.g. arrays dumped with gguf-py's dequantize().
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "verify_impl.hpp"

namespace gguftool::verify {

std::string reference_file(const std::string &dir, std::string_view tensor_name) {
    std::string safe(tensor_name);
    for (char &c : safe)
        if (c == '/' || c == '\\' || c == '\0') c = '_';
    if (safe.empty() || safe == "." || safe == "..") safe = "_" + safe;
    return (std::filesystem::path(dir) / (safe + ".npy")).string();
}

namespace detail {

Stream reference_stream(const Context &ctx, const gguf::TensorInfo &t, DataType dtype) {
    const std::string path = reference_file(ctx.options.reference_dir, t.name);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(path, std::nullopt, fmt::format("no reference file for tensor {}", t.name));
    const auto file = std::make_shared<runtime::Tensor>(runtime::read_npy(path));
    const DataType got = file->dtype();
    if (file->elements() != t.elements)
        throw Error(path, std::nullopt,
                    fmt::format("{} elements {}, but tensor {} has {}", dtype_name(got),
                                runtime::shape_string(file->shape()), t.name, t.elements));
    const bool widen =
        dtype == DataType::float32 && (got == DataType::float16 || got == DataType::bfloat16);
    const bool narrow = dtype == DataType::float32 && got == DataType::float64;
    if (got != dtype && !widen && !narrow)
        throw Error(path, std::nullopt,
                    fmt::format("holds {} values; {} tensor {} needs {}{}", dtype_name(got),
                                type_name(t.type), t.name, dtype_name(dtype),
                                dtype == DataType::float32 ? " (or float16, bfloat16)" : ""));

    const size_t size = dtype_size(got);
    return {
        dtype, [file, got, size, widen, narrow, path](uint64_t first, uint64_t count, void *out) {
            const uint8_t *src = file->data() + first * size;
            float *f = static_cast<float *>(out);
            if (widen) {
                const auto *h = reinterpret_cast<const uint16_t *>(src);
                for (uint64_t i = 0; i < count; ++i)
                    f[i] = got == DataType::float16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i]);
            } else if (narrow) {
                // Only float64 values that are float32 values exactly: anything else would
                // hide or invent differences.
                for (uint64_t i = 0; i < count; ++i) {
                    double d;
                    std::memcpy(&d, src + i * 8, 8);
                    f[i] = float(d);
                    if (!std::isnan(d) && double(f[i]) != d)
                        throw Error(
                            path, std::nullopt,
                            fmt::format("element {} ({}) is not a float32 value", first + i, d));
                }
            } else if (count) {
                std::memcpy(out, src, count * size);
            }
        }};
}

}  // namespace detail
}  // namespace gguftool::verify
