// The pieces shared by the two ways of verifying (the core's decoding, an ONNX graph's outputs):
// streams of values produced chunk by chunk, the expected side's sources, and the chunked
// comparison.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "gguftool/verify.hpp"

namespace gguftool::verify::detail {

// Writes elements [first, first + count) of a stream into `out` (in the stream's dtype).
using Fill = std::function<void(uint64_t first, uint64_t count, void *out)>;

struct Stream {
    DataType dtype = DataType::float32;
    Fill fill;
};

// A stream, or why there is none ("llama.cpp has no decoder for q8_1").
using StreamOrReason = std::variant<Stream, std::string>;

struct Context {
    Context(const gguf::Model &m, const Options &o, unsigned t)
        : model(m), options(o), threads(t) {}

    const gguf::Model &model;
    const Options &options;
    unsigned threads = 1;
    std::unique_ptr<LlamaDecoder> llama;  // null with a reference directory
    uint64_t progress_done = 0, progress_total = 0;

    void advance(uint64_t units) {
        progress_done += units;
        if (options.progress) options.progress(progress_done, progress_total);
    }
};

// The ONNX type that holds a plain GGUF type's values unchanged (f32 -> float32, i8 -> int8...);
// undefined for quantized types.
DataType plain_dtype(GgmlType type);

// The tensor's own bytes (little-endian file), for a plain type.
Stream own_bytes(const gguf::TensorInfo &t);

// The expected float32 decoding of a tensor: llama.cpp's, or the reference file's.
StreamOrReason expected_float32(Context &ctx, const gguf::TensorInfo &t);

// The reference file of `t` as a stream of `dtype` (float32: float16 and bfloat16 files widened,
// float64 files that hold float32 values narrowed). Throws Error for a missing or unusable file.
Stream reference_stream(const Context &ctx, const gguf::TensorInfo &t, DataType dtype);

// `in` (float32) as `out_dtype`: float32, float16 or bfloat16 (rounded to nearest even), or
// float64 (exact).
Stream convert_float32(Stream in, DataType out_dtype);

// Compares two streams of `elements` values of one dtype, `chunk` values at a time (a multiple
// of `granule`), calling ctx.advance(units_per_chunk * values / chunk) as it goes.
Diff compare_streams(Context &ctx, uint64_t elements, uint64_t granule, const Stream &ours,
                     const Stream &expected, uint64_t progress_units);

// Tensor selection by the option's globs.
bool selected(const Options &options, std::string_view name);

// The shard holding `t` is big-endian: neither llama.cpp nor the decoders read its data.
bool big_endian(const gguf::Model &model, const gguf::TensorInfo &t);

// A result with nothing compared yet (status not_compared).
TensorResult new_result(std::string name, std::string type, uint64_t elements);

// Adds `r` to the report and hands it to on_result.
void record(const Options &options, Report &report, TensorResult r);

// The ONNX half of verify().
void verify_onnx(Context &ctx, Report &report);

}  // namespace gguftool::verify::detail
