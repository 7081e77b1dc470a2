// `gguftool verify`: our decoding of a GGUF model against llama.cpp's, bit for bit.
//
// Each selected tensor is decoded twice, chunk by chunk (bounded memory whatever its size), and
// the two float streams are compared element by element:
//   ours      the dequantization core (quant::decode), or with `onnx_model` the outputs of the
//             converted graph run by the executor (runtime.hpp);
//   expected  llama.cpp's dequantize_row_<type> (ggml_fp16_to_fp32_row / ggml_bf16_to_fp32_row
//             for f16 / bf16, the tensor's own bytes for f32) from a libggml-base.so loaded at
//             run time, or with `reference_dir` the file DIR/<tensor name>.npy.
//
//     auto report = gguftool::verify::verify(gguf::Model::open("model.gguf"), {});
//     if (report.mismatched) ...
//
// A tensor is "not compared", never passed, when there is nothing to compare it with (q8_1, which
// llama.cpp cannot decode; f64 and integer tensors, which it does not decode; a big-endian file).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/runtime.hpp"
#include "gguftool/types.hpp"

namespace gguftool::verify {

// ---------------------------------------------------------------------------------------------
// Comparing two arrays

// max_ulp when a NaN faced a value that is not NaN: no distance is defined.
inline constexpr uint64_t kUlpNaN = std::numeric_limits<uint64_t>::max();

// How two arrays of one element type differ.
//   mismatch      the bits differ; any NaN equals any NaN, +0 and -0 differ
//   max_abs_diff  largest |ours - expected| over the mismatches: +inf where an infinity faced
//                 another value, NaN where a NaN faced a number (0 when all match)
//   max_ulp       largest distance in units in the last place of the element type, counting the
//                 representable values between the two (+0 and -0 are 0 apart, the largest
//                 finite value and infinity 1); kUlpNaN where a NaN faced a number. Integers:
//                 the difference of the values.
struct Diff {
    uint64_t elements = 0;
    uint64_t mismatches = 0;
    double max_abs_diff = 0;
    uint64_t max_ulp = 0;
    std::optional<uint64_t> first_mismatch;  // index of the first differing element

    // Adds the comparison of the `next.elements` elements that follow these.
    void append(const Diff &next);
};

// Compares n elements of `type` (float32, float16, bfloat16, float64 or an integer type; 16-bit
// floats as their bit patterns). Throws gguftool::Error for another type.
Diff compare_bits(DataType type, const void *ours, const void *expected, uint64_t n);

// Exact widening and round-to-nearest-even narrowing (NaN stays NaN, quiet; overflow gives
// infinity): how an expected float32 value is brought to a float16 or bfloat16 graph output.
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_f16(float f);
uint16_t f32_to_bf16(float f);

// ---------------------------------------------------------------------------------------------
// llama.cpp's decoding

// Decodes GGML types to float32 with llama.cpp's own row functions.
class LlamaDecoder {
public:
    explicit LlamaDecoder(std::shared_ptr<const reference::Ggml> ggml);

    // Why llama.cpp cannot decode `type` ("llama.cpp has no decoder for q8_1"), or nullopt.
    std::optional<std::string> unsupported(GgmlType type) const;

    // Decodes `elements` values (whole blocks) held in `bytes` into `out`, the blocks split over
    // up to `threads` threads (0: all cores). Throws gguftool::Error for an unsupported type or a
    // byte count that does not match.
    void decode(GgmlType type, std::span<const uint8_t> bytes, uint64_t elements, float *out,
                unsigned threads = 0) const;

    const reference::Ggml &ggml() const { return *ggml_; }

private:
    using RowFn = reference::Ggml::DequantizeRow;
    RowFn row_fn(GgmlType type) const;

    std::shared_ptr<const reference::Ggml> ggml_;
    RowFn fp16_row_ = nullptr;  // ggml_fp16_to_fp32_row, when exported
    RowFn bf16_row_ = nullptr;  // ggml_bf16_to_fp32_row, when exported
};

// ---------------------------------------------------------------------------------------------
// Verifying a model

enum class Status { match, mismatch, not_compared };
const char *status_name(Status s);  // "match", "mismatch", "not_compared"

struct TensorResult {
    std::string name;
    std::string type;  // GGUF type name ("q4_K"); "-" for a graph output with no GGUF tensor
    uint64_t elements = 0;
    Status status = Status::not_compared;
    Diff diff;         // when compared
    std::string note;  // not compared: why; mismatch: what besides values (a shape, an error)
};

struct Options {
    std::vector<std::string> tensor_globs;  // fnmatch globs; empty: every tensor
    unsigned threads = 0;                   // 0: all cores
    // Where llama.cpp's library is: this path, else reference::load_ggml's search.
    std::string ggml_lib;
    // Use this already loaded library instead (tests: a doctored decoder).
    std::shared_ptr<const reference::Ggml> ggml;
    // Compare against DIR/<tensor name>.npy ('/' and '\' in names replaced by '_') instead of
    // llama.cpp: float32, or float16/bfloat16 widened exactly (float64 for f64 tensors, the same
    // integer type for integer tensors); any shape with the tensor's element count.
    std::string reference_dir;
    // Compare the outputs of this ONNX model, run by the executor, instead of the core's
    // decoding: each output named like a GGUF tensor against the expected decoding of it.
    std::string onnx_model;
    // With onnx_model: the backend that runs it (runtime::backend_names()) and its device.
    std::string backend = "cpu";
    int device = 0;
    // With onnx_model: called once the backend is made, before the graph runs.
    std::function<void(const runtime::Backend &)> on_backend;
    // With onnx_model: called once the session is made, with where its nodes run.
    std::function<void(const std::vector<runtime::NodePlacement> &)> on_placement;
    uint64_t chunk_elements = uint64_t(4) << 20;  // elements decoded at a time (rounded to blocks)
    // Called with each tensor's result as soon as it is known.
    std::function<void(const TensorResult &)> on_result;
    // Called as work is done: units done so far and the total (tensor bytes, or graph outputs).
    std::function<void(uint64_t done, uint64_t total)> progress;
};

struct Report {
    std::vector<TensorResult> tensors;
    size_t matched = 0, mismatched = 0, not_compared = 0;
    std::string reference;  // what the decoding was compared with ("llama.cpp (PATH)", "DIR/*.npy")
    std::string decoding;   // what was compared ("gguftool's decoder", "MODEL.onnx run by ...")
};

// Verifies the selected tensors of `model`. Throws gguftool::Error when a comparison cannot be
// made at all: llama.cpp's library does not load, a reference file is missing or unusable, the
// ONNX model cannot be loaded or run, or no tensor matches the globs.
Report verify(const gguf::Model &model, const Options &options);

// The reference file of a tensor: DIR/<name>.npy with path separators replaced.
std::string reference_file(const std::string &dir, std::string_view tensor_name);

}  // namespace gguftool::verify
