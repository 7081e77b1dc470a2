// Host tensors of the ONNX executor: shapes (ONNX row-major order), size limits, and Tensor, a
// dense row-major tensor in host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/error.hpp"

namespace gguftool::runtime {

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
    // The same bytes as another element type and shape of the same byte count (BitCast); copied
    // only when they are not aligned to the new element size.
    Tensor viewed_as(DataType dtype, Shape shape) const;
    const std::shared_ptr<const void> &owner() const { return owner_; }

private:
    DataType dtype_ = DataType::undefined;
    Shape shape_;
    uint64_t elements_ = 0;
    const uint8_t *data_ = nullptr;
    std::shared_ptr<const void> owner_;
    bool writable_ = false;
};

// `x` converted element by element to `to` by Cast's rules (the CPU backend's Cast kernel, on one
// thread; the man page gives the rules).
Tensor cast_tensor(const Tensor &x, DataType to);

}  // namespace gguftool::runtime
