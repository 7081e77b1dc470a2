// Lowering: rewrites the opset-29 operators DequantizePacked and Unpack into subgraphs of standard
// ONNX operators of an older opset (17 to 26), so that released runtimes (onnxruntime) run the
// models. Exact: FLOAT results are bit-identical to the operators' (llama.cpp's decoders), every
// other output type is one Cast of the FLOAT result.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gguftool::lower {

inline constexpr int kMinOpset = 17;      // below 17 onnxruntime's Reshape/Slice/Range forms differ
inline constexpr int kMaxOpset = 26;      // the newest opset onnxruntime 1.30 runs
inline constexpr int kDefaultOpset = 21;  // widely supported; has BitwiseAnd (18)

// The IR version a model of default-domain opset `opset` (17..26) needs, from ONNX's versioning
// table: 8 up to opset 18, 9 for 19-20, 10 for 21-22, 11 from 23.
constexpr int64_t ir_version(int opset) {
    return opset >= 23 ? 11 : opset >= 21 ? 10 : opset >= 19 ? 9 : 8;
}

struct Options {
    int opset = kDefaultOpset;
};

struct Report {
    int opset = 0;                           // the default-domain opset the model now imports
    size_t dequantize_packed = 0;            // nodes lowered
    size_t unpack = 0;                       // nodes lowered
    size_t nodes_added = 0;                  // standard-operator nodes written in their place
    size_t table_bytes = 0;                  // bytes of the shared lookup-table initializers added
    std::map<std::string, size_t> op_count;  // added nodes per operator type
};

// Lowers every DequantizePacked-29 and Unpack-29 node of the model's main graph in place and sets
// its default-domain opset import to `options.opset` (a model already below it keeps its opset:
// it has nothing to lower). Every other node, the graph's inputs,
// outputs, initializers (external data references included) and metadata are kept. Lookup tables
// and constants are initializers shared by all lowered nodes. Throws gguftool::Error naming the
// node for what cannot be lowered (bad attributes, an Unpack input of unknown rank, an operator
// whose meaning at the target opset is not known).
Report lower_model(onnx::ModelProto &model, const Options &options);

// The element type (TensorProto numbering) and rank of a value the graph does not declare, such as
// a payload initializer an exporter adds later. Unpack's lowering needs X's.
struct ValueType {
    int32_t elem_type = 0;
    int64_t rank = -1;  // -1: unknown
};
using ValueTypes = std::map<std::string, ValueType>;

// As lower_model, on a graph being built whose default-domain opset is `from_opset`: lowers to
// `opset`; `known` adds value types. The caller sets the model's opset import.
Report lower_graph(onnx::GraphProto &graph, int64_t from_opset, int opset,
                   const ValueTypes &known = {});

// The Unpack-29 function body (the schema's context-dependent function): the lowering at opset
// 17 (importing opset 29, the operator's own), with its constants as Constant nodes. Returns false
// when the attributes are invalid or the rank of X is needed (a non-negative axis) and unknown
// (rank < 0).
bool unpack_function_body(const onnx::NodeProto &node, int32_t x_elem_type, int64_t x_rank,
                          onnx::FunctionProto &function);

}  // namespace gguftool::lower

namespace gguftool::lower {

struct FileResult {
    Report report;
    std::vector<std::string> data_files;  // external data files copied beside the output
};

// `gguftool lower`: reads the model at `input`, lowers it (lower_model) and writes `output`
// atomically. Initializers in external data keep referring to their files: when `output` is in
// another directory, those files are copied beside it under the same relative names (atomically
// too). Throws gguftool::Error naming the file, or the node, and what is wrong.
FileResult lower_file(const std::string &input, const std::string &output, const Options &options);

}  // namespace gguftool::lower

namespace gguftool::lower {

// What ONNX 1.12's checker and shape inference (the ONNX linked here) could not check in a lowered
// model: the operators it has no schema for at the model's opset (it knows the default domain up
// to opset 17, so e.g. BitwiseAnd-18 and BitCast-26).
struct CheckResult {
    std::map<std::string, size_t> unchecked;  // operator type -> nodes
};

// Runs ONNX's node checker on every node whose operator ONNX 1.12 knows, and strict type-and-shape
// inference over the graph. Throws gguftool::Error with ONNX's message on a failure.
CheckResult check_with_onnx(const onnx::ModelProto &model);

}  // namespace gguftool::lower
