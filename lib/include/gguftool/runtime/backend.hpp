// The seam between the graph code and a device: a Backend allocates tensors in its memory, copies
// them to and from the host, and implements one function per computing operator. A backend author
// includes this header (and tensor.hpp, which it brings) and nothing else of the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
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

// A dense row-major tensor in a backend's memory. Reshape, Unsqueeze and Identity produce views
// sharing the buffer; buffers are never written after the operator that made them.
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

}  // namespace gguftool::runtime
