// The ONNX graph executor behind `gguftool run`: load a model (external data included), run its
// graph on a backend, read and write tensors (.npy, serialized TensorProto), compare results, and
// run ONNX backend node tests.
//
// One call does it all:
//     auto outputs = gguftool::runtime::run_model("model.onnx");   // [(name, Tensor)...]
//
// The graph code validates attributes, dtypes and shapes and talks to a Backend through a narrow
// interface (allocation, host<->device copies, one function per computing operator), so an
// accelerator backend plugs in without touching the graph code. Every problem is a gguftool::Error
// naming the file and, for graph problems, the node ("node \"n\" (Unpack-29): ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/error.hpp"
#include "gguftool/opset29.hpp"
#include "gguftool/types.hpp"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace gguftool::runtime {

// ---------------------------------------------------------------------------------------------
// Tensors

using Shape = std::vector<int64_t>;  // ONNX (row-major) order

// Largest element count of any tensor: keeps every byte count far from 64-bit overflow.
inline constexpr uint64_t kMaxElements = uint64_t(1) << 56;

// Largest tensor the runtime allocates, in bytes: by default this machine's physical memory, so
// a model asking for more (say a OneHot of depth 2^40) gets an error rather than an allocation that
// would end in the out-of-memory killer. 0 restores the default. (The fuzzers set 256 MiB.)
void set_tensor_byte_limit(uint64_t bytes);
uint64_t tensor_byte_limit();

// Product of the dims; throws Error(what, ...) on a negative dim or more than kMaxElements.
uint64_t shape_elements(const Shape &shape, const std::string &what = "tensor");
std::string shape_string(const Shape &shape);  // "[2, 32]", "[]" for a scalar

// A dense row-major tensor in host memory. Copies share the bytes (cheap); tensors are immutable
// once computed, so views (reshape) and shared storage are safe.
class Tensor {
public:
    Tensor() = default;  // undefined: no dtype, no data

    // Uninitialised storage, 64-byte aligned. Throws Error when the size is invalid or too large.
    static Tensor allocate(DataType dtype, Shape shape);
    static Tensor zeros(DataType dtype, Shape shape);
    // The bytes of `bytes` (exactly elements * dtype_size long), copied.
    static Tensor copy_of(DataType dtype, Shape shape, std::span<const uint8_t> bytes);
    // A view of bytes kept alive by `owner` (e.g. a memory mapping); copied only when they are not
    // aligned to the element size.
    static Tensor view(DataType dtype, Shape shape, std::span<const uint8_t> bytes,
                       std::shared_ptr<const void> owner);
    template <class T>
    static Tensor from_values(DataType dtype, Shape shape, const std::vector<T> &values) {
        return copy_of(
            dtype, std::move(shape),
            {reinterpret_cast<const uint8_t *>(values.data()), values.size() * sizeof(T)});
    }

    bool defined() const { return dtype_ != DataType::undefined; }
    DataType dtype() const { return dtype_; }
    const Shape &shape() const { return shape_; }
    size_t rank() const { return shape_.size(); }
    uint64_t elements() const { return elements_; }
    size_t nbytes() const { return size_t(elements_) * dtype_size(dtype_); }

    const uint8_t *data() const { return data_; }
    std::span<const uint8_t> bytes() const { return {data_, nbytes()}; }
    template <class T>
    const T *data_as() const {
        return reinterpret_cast<const T *>(data_);
    }
    // Writable bytes: only for tensors made by allocate/zeros/copy_of (throws Error otherwise).
    uint8_t *mutable_data();
    template <class T>
    T *mutable_data_as() {
        return reinterpret_cast<T *>(mutable_data());
    }
    // The values as a vector of T (sizeof(T) must equal the element size).
    template <class T>
    std::vector<T> to_vector() const {
        std::vector<T> v(elements_);
        if (sizeof(T) == dtype_size(dtype_) && elements_) std::memcpy(v.data(), data_, nbytes());
        return v;
    }

    // The same bytes with another shape of the same element count.
    Tensor reshaped(Shape shape) const;
    const std::shared_ptr<const void> &owner() const { return owner_; }

private:
    DataType dtype_ = DataType::undefined;
    Shape shape_;
    uint64_t elements_ = 0;
    const uint8_t *data_ = nullptr;
    std::shared_ptr<const void> owner_;
    bool writable_ = false;
};

// ---------------------------------------------------------------------------------------------
// Reading and writing tensors

// NumPy .npy (format 1.0 to 3.0 read, 1.0 written; C order; little-endian written, either read).
// float16 is '<f2'. bfloat16, which NumPy lacks, is written as raw 16-bit words '<u2' with the
// header comment "# gguftool: bfloat16 stored as raw uint16 words" (NumPy ignores it); reading
// such a file gives a bfloat16 tensor again. bool is '|b1'.
Tensor read_npy(const std::string &path);
void write_npy(const std::string &path, const Tensor &t);
std::vector<uint8_t> encode_npy(const Tensor &t);
Tensor decode_npy(std::span<const uint8_t> bytes, const std::string &where);

// Serialized onnx.TensorProto (.pb); external data is resolved relative to the file's directory.
Tensor read_tensor_pb(const std::string &path);
// .npy or .pb, told apart by content (the NumPy magic).
Tensor read_tensor_file(const std::string &path);
// A TensorProto's value: raw_data or the typed fields, or external data (location relative to
// base_dir, which it may not leave). `where` names it in errors.
Tensor tensor_from_proto(const onnx::TensorProto &proto, const std::string &base_dir,
                         const std::string &where);
void tensor_to_proto(const Tensor &t, const std::string &name, onnx::TensorProto &out);

// ---------------------------------------------------------------------------------------------
// Backends

// Memory owned by a backend: host memory for the CPU, device memory for an accelerator.
class DeviceBuffer {
public:
    virtual ~DeviceBuffer() = default;
};

// A dense row-major tensor in a backend's memory. Reshape, Unsqueeze and Identity produce views
// sharing the buffer; buffers are never written after the operator that made them.
struct DeviceTensor {
    DataType dtype = DataType::undefined;
    Shape shape;
    std::shared_ptr<DeviceBuffer> buffer;

    uint64_t elements() const;  // product of shape (already validated)
    size_t nbytes() const { return size_t(elements()) * dtype_size(dtype); }
};

// Unpack-29 with both spellings normalised: bits b is radix 2^b with group_size 1.
// An Unpack node's checked code layout (gguftool/opset29.hpp), its axis and its count.
struct UnpackParams : opset29::Unpack {
    size_t axis = 0;     // 0 <= axis < rank
    uint64_t count = 0;  // output codes per row
};

struct OneHotParams {
    size_t axis = 0;                // position of the depth dimension in the output
    int64_t depth = 0;              // >= 0
    bool negative_indices = false;  // OneHot-11: index -k means depth - k
};

// Graph code checks attributes, dtypes and shapes and allocates each output with its final dtype
// and shape before calling an operator; a backend checks only what depends on data values
// (index ranges) and throws gguftool::Error (the graph adds the node's name).
class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;

    // Memory.
    virtual DeviceTensor allocate(DataType dtype, const Shape &shape) = 0;
    virtual DeviceTensor upload(const Tensor &host) = 0;  // may alias host memory
    virtual Tensor download(const DeviceTensor &t) = 0;   // may alias device memory

    // Operators (Unsqueeze, Reshape and Identity are views and need none).
    // DequantizePacked-29: x UINT8 holds exactly the blocks of y.elements() values of `format`;
    // y is FLOAT, FLOAT16, BFLOAT16 or DOUBLE.
    virtual void dequantize_packed(GgmlType format, const DeviceTensor &x, DeviceTensor &y) = 0;
    // Unpack-29: x UINT8 or UINT32 words; y UINT8 codes; group indices >= group_limit are errors.
    virtual void unpack(const UnpackParams &p, const DeviceTensor &x, DeviceTensor &y) = 0;
    // OneHot-9/11: indices of any numeric type (floats truncated toward zero); values [off, on] of
    // y's dtype; out-of-range indices give all-off rows.
    virtual void one_hot(const OneHotParams &p, const DeviceTensor &indices,
                         const DeviceTensor &values, DeviceTensor &y) = 0;
    // Cast: any supported type to any other (see the man page for the conversion rules).
    virtual void cast(const DeviceTensor &x, DeviceTensor &y) = 0;
    // Add, Sub, Mul: a, b and y of one numeric type; a and b broadcast (NumPy rules) to y.
    virtual void add(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) = 0;
    virtual void sub(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) = 0;
    virtual void mul(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) = 0;
    // Gather: indices INT32 or INT64, negative allowed when `negative_indices`; an index out of
    // range is an error.
    virtual void gather(size_t axis, bool negative_indices, const DeviceTensor &data,
                        const DeviceTensor &indices, DeviceTensor &y) = 0;
    virtual void concat(size_t axis, std::span<const DeviceTensor> inputs, DeviceTensor &y) = 0;
};

// The CPU backend: the dequantization core and `threads` threads (0 = all cores).
std::unique_ptr<Backend> make_cpu_backend(unsigned threads = 0);
// A backend by name ("cpu"); throws Error for a name this build lacks.
std::unique_ptr<Backend> make_backend(const std::string &name, unsigned threads = 0);
std::vector<std::string> backend_names();

// ---------------------------------------------------------------------------------------------
// Models and running them

// A graph input or output as declared: dtype (undefined if not declared) and dims (nullopt where
// symbolic or absent; `dims` empty and has_shape false when no shape is declared).
struct ValueInfo {
    std::string name;
    DataType dtype = DataType::undefined;
    bool has_shape = false;
    std::vector<std::optional<int64_t>> dims;
};

// A loaded, validated model: opsets resolved, every node's operator known, nodes in an execution
// order, initializers (external data memory-mapped, not copied) ready. Copies share the model.
class Model {
public:
    // Parses `path`; external data is found relative to its directory.
    static Model load(const std::string &path);
    // From a ModelProto built in memory (external data relative to base_dir).
    static Model from_proto(const onnx::ModelProto &proto, const std::string &base_dir = ".",
                            const std::string &name = "<model>");
    static Model from_bytes(std::span<const uint8_t> bytes, const std::string &base_dir,
                            const std::string &name);

    const std::string &name() const;               // the path, or the name given
    const std::vector<ValueInfo> &inputs() const;  // inputs to feed (initializers excluded)
    const std::vector<ValueInfo> &outputs() const;
    int64_t opset() const;  // version of the default domain ("" / "ai.onnx")
    size_t node_count() const;

    struct Impl;
    const Impl &impl() const { return *impl_; }

private:
    std::shared_ptr<const Impl> impl_;
};

// Time and traffic of one node in a profiled run.
struct NodeProfile {
    std::string node;  // node name, or "#index" when unnamed
    std::string op;    // "DequantizePacked-29"
    double seconds = 0;
    uint64_t bytes_read = 0;     // all inputs
    uint64_t bytes_written = 0;  // all outputs
};

struct RunOptions {
    std::string backend = "cpu";
    unsigned threads = 0;  // 0 = all cores
    bool profile = false;  // record a NodeProfile per node
};

using Inputs = std::map<std::string, Tensor>;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using OutputCallback = std::function<void(const std::string &name, const Tensor &value)>;

class Session {
public:
    explicit Session(Model model, const RunOptions &options = {});
    Session(Model model, std::unique_ptr<Backend> backend, bool profile = false);
    ~Session();
    Session(Session &&) noexcept;

    // Runs the graph; returns every graph output, in graph order. Inputs are checked against the
    // declared dtypes and dims; inputs the graph does not have are an error.
    NamedTensors run(const Inputs &inputs = {});
    // Streaming: hands each graph output to `on_output` as soon as it is computed, then frees it
    // unless a later node needs it, so memory stays bounded by what is live.
    void run(const Inputs &inputs, const OutputCallback &on_output);

    const std::vector<NodeProfile> &profile() const;  // of the last run (when profiling)
    const Model &model() const;
    Backend &backend();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Loads `model_path` and runs it: the graph outputs by name, in graph order.
NamedTensors run_model(const std::string &model_path, const Inputs &inputs = {},
                       const RunOptions &options = {});

// ---------------------------------------------------------------------------------------------
// Comparing tensors and running ONNX backend node tests

struct Comparison {
    bool equal = false;
    uint64_t mismatches = 0;
    double max_abs_diff = 0;  // floats only
    std::string message;      // why not equal: dtype, shape, or the first differing element
};

// Integers and bool: exact. Floats: |got - expected| <= atol + rtol * |expected| (NumPy's
// assert_allclose, ONNX's runner defaults), infinities must match; with `exact`, identical bits.
// NaN equals NaN in both modes.
Comparison compare(const Tensor &got, const Tensor &expected, bool exact, double rtol = 1e-3,
                   double atol = 1e-7);

struct NodeTestResult {
    std::string name;  // the test directory's name
    bool passed = false;
    std::string message;  // why it failed
};

// True when `dir` holds model.onnx (one node test).
bool is_node_test_dir(const std::string &dir);
// Runs one test directory (model.onnx + test_data_set_N/{input,output}_K.pb) or every test
// directory inside `dir` (sorted by name). input_K is bound to the K-th graph input that is not
// an initializer, output_K to the K-th graph output. Throws Error when `dir` holds no test.
std::vector<NodeTestResult> run_node_tests(const std::string &dir, bool exact,
                                           const RunOptions &options = {});

}  // namespace gguftool::runtime
