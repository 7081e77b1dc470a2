// GGUF -> ONNX: every tensor of a GGUF model as an output of an opset-29 ONNX graph.
//
// Three modes:
//   packed       a quantized tensor is a 1-D UINT8 initializer holding its exact bytes, decoded by
//                one DequantizePacked node; plain tensors are initializers of their own type.
//   unpack       for the bit-field formats with per-block scales (q4_0 q4_1 q5_0 q5_1 q8_0 q1_0
//                q2_0 tq2_0 iq4_nl mxfp4) the blocks are split into code, scale and offset
//                initializers decoded by Unpack and standard operators, bit-identical to packed
//                mode; other formats fall back to DequantizePacked.
//   dequantized  quantized tensors decoded to plain FLOAT (or the chosen output type); Identity
//                nodes only, so the model imports the lowest opset that allows its types (1, or
//                13 with bfloat16) and runtimes without opset 29 (onnxruntime) load it.
// Packed and unpack modes import opset 29. In every mode, plain floating tensors (f32 f16 bf16
// f64) are converted to the output type unless Options::keep_plain_types; integers stay as they
// are.
//
// Output is streamed: bytes go from the memory-mapped GGUF to the file in chunks, so memory stays
// bounded whatever the model size. Above protobuf's 2 GB limit, or on request, tensor bytes go to
// one external data file beside the model (ONNX's location/offset/length convention, offsets
// aligned to 4096). Both files are written under temporary names in the destination directory
// and renamed at the end; an error, SIGINT or SIGTERM leaves neither behind.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::onnx_export {

enum class Mode { packed, unpack, dequantized };

const char *mode_name(Mode m);  // "packed", "unpack", "dequantized"
std::optional<Mode> mode_from_name(std::string_view name);

// "float", "float16", "bfloat16", "double" <-> DataType (numbered as ONNX types).
std::optional<DataType> output_type_from_name(std::string_view name);

// Offsets of tensors in the external data file are multiples of this.
inline constexpr uint64_t kExternalAlignment = 4096;

// Protobuf refuses to parse a message larger than this (2 GiB - 1).
inline constexpr uint64_t kProtobufLimit = 0x7FFFFFFF;

struct Options {
    Mode mode = Mode::packed;
    // Element type of the decoded outputs (and of the initializers of dequantized mode), and of
    // the plain floating tensors: their values converted with one rounding to nearest even.
    DataType output_type = DataType::float32;
    // Plain floating tensors keep their stored type and bytes instead (integers always do).
    bool keep_plain_types = false;
    // Convert only tensors whose name matches one of these globs (fnmatch); empty: all.
    std::vector<std::string> tensor_globs;
    // Metadata arrays longer than this are cut to this many elements (and the model says so).
    std::optional<uint64_t> max_array;
    // Tensor bytes in an external data file even when the model would fit in one protobuf.
    bool external_data = false;
    // Largest .onnx written with the tensor bytes inside; above it they go to external data.
    // Protobuf cannot parse a message over 2 GiB - 1 (tests lower it to exercise the switch).
    uint64_t inline_limit = kProtobufLimit;
    // Lower DequantizePacked and Unpack to standard operators of this opset (17..26,
    // gguftool/lower.hpp) so that runtimes without opset 29 run the model; nullopt: opset 29.
    std::optional<int> opset;
    // Threads for decoding in dequantized mode and converting plain tensors (0: all cores).
    unsigned threads = 0;
    // Called as tensor bytes are written: bytes done so far and the total.
    std::function<void(uint64_t done, uint64_t total)> progress;
};

struct Result {
    std::string model_path;          // the .onnx written
    std::string data_path;           // the external data file, or empty
    size_t tensors = 0;              // GGUF tensors converted
    size_t unpacked = 0;             // of which in Unpack form (unpack mode)
    size_t packed = 0;               // of which decoded by DequantizePacked
    int opset = 0;                   // the default-domain opset the model imports
    size_t lowered_nodes = 0;        // standard-operator nodes written by the lowering
    uint64_t table_bytes = 0;        // bytes of the lowering's shared lookup tables
    uint64_t tensor_bytes = 0;       // bytes of tensor data written
    uint64_t model_bytes = 0;        // size of the .onnx file
    std::vector<std::string> notes;  // things the user should know (shortened metadata arrays)
};

// Converts `model` to ONNX at `output` (the external data file, if any, is `output` + ".data").
// Throws gguftool::Error: an invalid or unsupported tensor, no tensor matching the globs, an
// output path that is one of the input files, or a failed write (nothing is left behind).
Result export_model(const gguf::Model &model, const std::string &output, const Options &options);

// Suffix of the external data file's name.
inline constexpr std::string_view kDataSuffix = ".data";

}  // namespace gguftool::onnx_export
