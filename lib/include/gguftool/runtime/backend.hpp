// The seam between the graph code and a device: a Backend allocates tensors in its memory, copies
// them to and from the host, and runs operators through the kernels it registers, one row per
// operator (register_kernel): the kernel, and the backend's capability rule for the operator. The
// session asks the backend about every node before anything runs (query: the row's rule; an
// operator without a row is unsupported), then refuses, lowers or places elsewhere what it will
// not run. A backend author includes this header (and tensor.hpp, which it brings) and nothing
// else of the runtime; what each operator hands its kernel (inputs, outputs, attributes) is said
// once, above the operator's run function in lib/runtime/op_*.cpp.
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

#include "gguftool/error.hpp"
#include "gguftool/runtime/tensor.hpp"
#include "gguftool/types.hpp"

namespace gguftool::runtime {

// Memory owned by a backend: host memory for the CPU, device memory for an accelerator.
class DeviceBuffer {
public:
    virtual ~DeviceBuffer() = default;
};

// A dense row-major tensor in a backend's memory. Reshape, Unsqueeze, Squeeze, Identity and
// BitCast produce views sharing the buffer (BitCast with another dtype of the same size); buffers
// are never written after the operator that made them.
struct DeviceTensor {
    DataType dtype = DataType::undefined;
    Shape shape;
    std::shared_ptr<DeviceBuffer> buffer;

    uint64_t elements() const;  // product of shape (already validated)
    size_t nbytes() const { return size_t(elements()) * dtype_size(dtype); }
};

// A node's attributes, typed: INT, FLOAT, STRING and INTS values by name (other kinds, such as
// Constant's tensors, are left out). What a backend is asked about (OpQuery: the node's own) and
// what a kernel is given (KernelArgs: what its operator checked and derived). Each getter gives
// nullopt when the attribute is absent or of another kind; at() is for a kernel reading what its
// operator always sets.
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
    // The attribute `name` of type T (int64_t, double, std::string or std::vector<int64_t>);
    // throws Error naming it when it is absent or of another kind.
    template <class T>
    const T &at(std::string_view name) const {
        const auto it = values_.find(name);
        if (it == values_.end() || !std::holds_alternative<T>(it->second))
            throw Error("kernel attribute '" + std::string(name) + "' is missing");
        return std::get<T>(it->second);
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

// A kernel's call: the node's inputs (nullptr for an absent optional input), its outputs already
// allocated with their final dtypes and shapes, and the attributes its operator checked and
// derived (a normalized axis, Slice's starts and steps, ...).
struct KernelArgs {
    std::span<const DeviceTensor *const> inputs;
    std::span<DeviceTensor> outputs;
    const Attributes &attributes;
};
// A backend's implementation of one operator.
using OpKernel = std::function<void(const KernelArgs &)>;

// A backend's answer: it runs the node itself, wants it lowered to standard operators first
// (gguftool lower: DequantizePacked and Unpack), or cannot run it (`reason` says why, naming the
// device and the dtype).
struct Capability {
    enum class Kind { native, lowered, unsupported };
    Kind kind = Kind::native;
    std::string reason;
};
// A backend's capability rule for one operator: its answer for a node of it.
using CapabilityRule = std::function<Capability(const OpQuery &)>;

// What a backend is made with.
struct BackendOptions {
    unsigned threads = 0;  // CPU threads (0 = all cores)
    int device = 0;        // device number, for backends that have devices
};

// Graph code checks attributes, dtypes and shapes and allocates each output with its final dtype
// and shape before calling a kernel; a kernel checks only what depends on data values (index
// ranges) and throws gguftool::Error (the graph adds the node's name).
class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // One line on what runs the graph ("cpu, 2 threads"; a device's name and what drives it).
    virtual std::string description() const { return name(); }

    // Whether this backend runs `q` (asked for every node of a model before a session runs it):
    // the rule of its row for q.op_type, native when the row has none; unsupported ("the <name>
    // backend has no <op_type>") when it has no row.
    Capability query(const OpQuery &q) const;
    // The kernel registered for `op_type`, or nullptr (no row, or a row without a kernel).
    const OpKernel *kernel(std::string_view op_type) const;
    // The operators this backend has rows for, by name (a backend that wraps another registers
    // rows for them).
    std::vector<std::string> op_types() const;

    // Waits until every operator issued so far has finished (timings are taken after it).
    virtual void synchronize() {}
    // Device operator launches issued so far (0 for a backend that launches none).
    virtual uint64_t device_calls() const { return 0; }

    // Memory.
    virtual DeviceTensor allocate(DataType dtype, const Shape &shape) = 0;
    virtual DeviceTensor upload(const Tensor &host) = 0;  // may alias host memory
    virtual Tensor download(const DeviceTensor &t) = 0;   // may alias device memory

protected:
    // This backend's row for the operator `op_type`: its kernel (none for an operator that needs
    // none here: a view, a host-side value, or one the rule answers `lowered` for) and its
    // capability rule (none: native).
    void register_kernel(std::string op_type, OpKernel kernel, CapabilityRule capability = {});

private:
    struct Row {
        OpKernel kernel;
        CapabilityRule capability;
    };
    std::map<std::string, Row, std::less<>> rows_;
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
