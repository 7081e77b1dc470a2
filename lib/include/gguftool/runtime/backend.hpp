// The seam between the graph code and a device: a Backend allocates tensors in its memory, copies
// them to and from the host, and runs the operators it has kernels for: the typed functions below
// (the first operators'), and the kernels it registers by operator name (register_kernel: every
// operator added since). What a backend does not run it reports unsupported before anything runs
// (query; an operator with no registered kernel is unsupported without asking), and the session
// refuses or lowers the node. A backend author includes this header (and tensor.hpp, which it
// brings) and nothing else of the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gguftool/opset29.hpp"
#include "gguftool/runtime/tensor.hpp"
#include "gguftool/types.hpp"

namespace gguftool::runtime {

// Memory owned by a backend: host memory for the CPU, device memory for an accelerator.
class DeviceBuffer {
public:
    virtual ~DeviceBuffer() = default;
};

// A dense row-major tensor in a backend's memory. Reshape, Unsqueeze, Identity and BitCast produce
// views sharing the buffer (BitCast with another dtype of the same size); buffers are never written
// after the operator that made them.
struct DeviceTensor {
    DataType dtype = DataType::undefined;
    Shape shape;
    std::shared_ptr<DeviceBuffer> buffer;

    uint64_t elements() const;  // product of shape (already validated)
    size_t nbytes() const { return size_t(elements()) * dtype_size(dtype); }
};

// An Unpack node's checked code layout (gguftool/opset29.hpp), its axis and its count.
struct UnpackParams : opset29::Unpack {
    size_t axis = 0;     // 0 <= axis < rank
    uint64_t count = 0;  // output codes per row
};

// The elementwise binary operators: a and b of one type broadcast (NumPy rules) to y, which has
// that type too, except for `equal` (BOOL). float16 and bfloat16 compute in float and round once.
enum class BinaryOp {
    add,   // numeric; integers wrap modulo 2^n
    sub,   // numeric; integers wrap
    mul,   // numeric; integers wrap
    div,   // numeric; integers truncate toward zero (minimum / -1 wraps; / 0 is an error)
    mod,   // integers: the remainder with the divisor's sign (Python's %; % 0 is an error)
    fmod,  // the remainder with the dividend's sign (C's fmod; integers: exact, % 0 an error)
    min,   // numeric; NaN when either is NaN (that NaN), -0 below +0
    bitwise_and,  // integers
    shift_left,   // unsigned integers; shifting by the bit width or more gives 0
    shift_right,  // unsigned integers; likewise
    equal,        // any type; y is BOOL; floats compare as IEEE values (NaN unequal, -0 == +0)
};

struct OneHotParams {
    size_t axis = 0;                // position of the depth dimension in the output
    int64_t depth = 0;              // >= 0
    bool negative_indices = false;  // OneHot-11: index -k means depth - k
};

// A node's attributes, typed: INT, FLOAT, STRING and INTS values by name (other kinds, such as
// Constant's tensors, are left out). What a backend is asked about (OpQuery) and what a registered
// kernel is given (KernelArgs). Each getter gives nullopt when the attribute is absent or of
// another kind.
class Attributes {
public:
    using Value = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

    void set(std::string name, Value value) { values_[std::move(name)] = std::move(value); }
    bool empty() const { return values_.empty(); }
    std::optional<int64_t> get_int(std::string_view name) const { return get<int64_t>(name); }
    std::optional<double> get_float(std::string_view name) const { return get<double>(name); }
    std::optional<std::string> get_string(std::string_view name) const {
        return get<std::string>(name);
    }
    std::optional<std::vector<int64_t>> get_ints(std::string_view name) const {
        return get<std::vector<int64_t>>(name);
    }

private:
    template <class T>
    std::optional<T> get(std::string_view name) const {
        const auto it = values_.find(name);
        if (it == values_.end() || !std::holds_alternative<T>(it->second)) return std::nullopt;
        return std::get<T>(it->second);
    }
    std::map<std::string, Value, std::less<>> values_;
};

// One node as a backend is asked about it before anything runs: the operator, its ONNX version,
// the element types of its inputs and outputs (undefined for an absent optional input), and what
// selects the computation beyond them: its attributes (BitShift's "direction", Mod's "fmod").
struct OpQuery {
    std::string op_type;  // "Add"
    int version = 0;      // ONNX operator version ("Add-14": 14)
    std::vector<DataType> inputs;
    std::vector<DataType> outputs;
    std::optional<GgmlType> format;  // DequantizePacked's, when its "format" names one
    Attributes attributes;
};

// A registered kernel's call: the node's inputs (nullptr for an absent optional input), its
// outputs already allocated with their final dtypes and shapes, and the attributes the operator
// checked (and any it derived, such as a normalized axis).
struct KernelArgs {
    std::span<const DeviceTensor *const> inputs;
    std::span<DeviceTensor> outputs;
    const Attributes &attributes;
};
using Kernel = std::function<void(const KernelArgs &)>;

// A backend's answer: it runs the node itself, wants it lowered to standard operators first
// (gguftool lower: DequantizePacked and Unpack), or cannot run it (`reason` says why, naming the
// device and the dtype).
struct Capability {
    enum class Kind { native, lowered, unsupported };
    Kind kind = Kind::native;
    std::string reason;
};

// What a backend is made with.
struct BackendOptions {
    unsigned threads = 0;  // CPU threads (0 = all cores)
    int device = 0;        // device number, for backends that have devices
};

// Graph code checks attributes, dtypes and shapes and allocates each output with its final dtype
// and shape before calling an operator; a backend checks only what depends on data values
// (index ranges) and throws gguftool::Error (the graph adds the node's name).
class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // One line on what runs the graph ("cpu, 2 threads"; a device's name and what drives it).
    virtual std::string description() const { return name(); }

    // Whether this backend runs `q` (asked for every node of a model before a session runs it,
    // except nodes of an operator that needs a registered kernel this backend lacks: those are
    // unsupported). The default runs everything else.
    virtual Capability query(const OpQuery &q) const {
        (void)q;
        return {};
    }
    // The kernel registered for `op_type`, or nullptr.
    const Kernel *kernel(std::string_view op_type) const {
        const auto it = kernels_.find(op_type);
        return it == kernels_.end() ? nullptr : &it->second;
    }
    // Waits until every operator issued so far has finished (timings are taken after it).
    virtual void synchronize() {}
    // Device operator launches issued so far (0 for a backend that launches none).
    virtual uint64_t device_calls() const { return 0; }

    // Memory.
    virtual DeviceTensor allocate(DataType dtype, const Shape &shape) = 0;
    virtual DeviceTensor upload(const Tensor &host) = 0;  // may alias host memory
    virtual Tensor download(const DeviceTensor &t) = 0;   // may alias device memory

    // The typed operator functions of the first operators (Unsqueeze, Reshape, Identity and
    // BitCast are views and Shape is computed from the shape alone: they need none). Each throws
    // "the <backend> backend has no <function> kernel" unless the backend overrides it; a backend
    // that leaves one out answers `unsupported` (or `lowered`) for its operators in query().
    // DequantizePacked-29: x UINT8 holds exactly the blocks of y.elements() values of `format`;
    // y is FLOAT, FLOAT16, BFLOAT16 or DOUBLE.
    virtual void dequantize_packed(GgmlType format, const DeviceTensor &x, DeviceTensor &y);
    // Unpack-29: x UINT8 or UINT32 words; y UINT8 codes; group indices >= group_limit are errors.
    virtual void unpack(const UnpackParams &p, const DeviceTensor &x, DeviceTensor &y);
    // OneHot-9/11: indices of any numeric type (floats truncated toward zero); values [off, on] of
    // y's dtype; out-of-range indices give all-off rows.
    virtual void one_hot(const OneHotParams &p, const DeviceTensor &indices,
                         const DeviceTensor &values, DeviceTensor &y);
    // Cast: any supported type to any other (see the man page for the conversion rules).
    virtual void cast(const DeviceTensor &x, DeviceTensor &y);
    // Add, Sub, Mul, Div, Mod, Min, BitwiseAnd, BitShift, Equal (see BinaryOp).
    virtual void binary(BinaryOp op, const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y);
    void add(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) {
        binary(BinaryOp::add, a, b, y);
    }
    void sub(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) {
        binary(BinaryOp::sub, a, b, y);
    }
    void mul(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) {
        binary(BinaryOp::mul, a, b, y);
    }
    // Slice: y[i0, i1, ...] = x[starts[0] + i0 * steps[0], starts[1] + i1 * steps[1], ...], one
    // start and one non-zero step per axis of x, every index read in range.
    virtual void slice(std::span<const int64_t> starts, std::span<const int64_t> steps,
                       const DeviceTensor &x, DeviceTensor &y);
    // Transpose: axis i of y is axis perm[i] of x (perm a permutation of x's axes).
    virtual void transpose(std::span<const size_t> perm, const DeviceTensor &x, DeviceTensor &y);
    // Range: acc[0] = start, acc[i + 1] = acc[i] + delta, one rounded addition in `accumulate`
    // each (floats accumulate, as onnxruntime computes them), y[i] = acc[i] rounded once to y's
    // type. `accumulate` is y's dtype, or FLOAT or DOUBLE for FLOAT16 and BFLOAT16 y; start and
    // delta are one-element tensors of y's dtype; integers wrap.
    virtual void range(const DeviceTensor &start, const DeviceTensor &delta, DataType accumulate,
                       DeviceTensor &y);
    // Gather: indices INT32 or INT64, negative allowed when `negative_indices`; an index out of
    // range is an error.
    virtual void gather(size_t axis, bool negative_indices, const DeviceTensor &data,
                        const DeviceTensor &indices, DeviceTensor &y);
    virtual void concat(size_t axis, std::span<const DeviceTensor> inputs, DeviceTensor &y);

protected:
    // Makes `kernel` this backend's implementation of the operator `op_type` (an operator whose
    // row in the runtime's table says it runs a registered kernel).
    void register_kernel(std::string op_type, Kernel kernel) {
        kernels_[std::move(op_type)] = std::move(kernel);
    }

private:
    std::map<std::string, Kernel, std::less<>> kernels_;
};

// The CPU backend: the dequantization core and `threads` threads (0 = all cores).
std::unique_ptr<Backend> make_cpu_backend(unsigned threads = 0);
// The Ascend NPU backend: loads CANN at run time (backends/ascend); throws Error naming what it
// looked for and where when CANN is not found, or the device cannot be opened.
std::unique_ptr<Backend> make_ascend_backend(const BackendOptions &options);
// A backend by name ("cpu", "ascend"); throws Error for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &options = {});
std::vector<std::string> backend_names();

}  // namespace gguftool::runtime
