// The Ascend NPU backend: tensors live in device memory; every operator is one or a few aclnn
// calls (or ATB's OnehotOperation) issued on one stream; DequantizePacked and Unpack run as their
// lowering (Backend::query answers `lowered`), so the device executes only standard-operator
// primitives (internal to lib/runtime).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ascend_device.hpp"
#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::ascend {

// Device memory of one tensor. Small tensors uploaded from the host keep a host copy (`shadow`):
// shift amounts, masks and OneHot values are then known without a device round trip, and the
// constants derived from them (powers of two, widened copies) are made once and kept in `derived`.
struct AscendBuffer final : DeviceBuffer {
    AscendBuffer(std::shared_ptr<Device> device, size_t bytes);
    ~AscendBuffer() override;
    std::shared_ptr<Device> device;
    void *data = nullptr;  // device address; nullptr when empty
    size_t bytes = 0;
    std::optional<Tensor> shadow;
    std::map<std::string, DeviceTensor> derived;
};

// Largest tensor, in elements, that keeps a host shadow.
inline constexpr uint64_t kShadowElements = 64;

// An aclTensor descriptor over a tensor's buffer (destroyed with the object). A view: its own
// dims, strides and offset in elements; by default the tensor's own shape, dense. Rank 0 is
// described as [1].
class Desc {
public:
    Desc(const Device &device, const DeviceTensor &t);
    Desc(const Device &device, const DeviceTensor &t, const Shape &dims,
         const std::vector<int64_t> &strides, int64_t offset);
    ~Desc();
    Desc(const Desc &) = delete;
    Desc &operator=(const Desc &) = delete;
    operator cann::aclTensor *() const { return tensor_; }
    // Hands the descriptor to a tensor list, which destroys it (aclDestroyTensorList's doc).
    void release() { tensor_ = nullptr; }

private:
    const Device &device_;
    cann::aclTensor *tensor_ = nullptr;
};

// A host scalar (aclScalar) of `dtype` holding `value` (converted exactly when representable).
class Scalar {
public:
    Scalar(const Device &device, DataType dtype, double value);
    Scalar(const Device &device, DataType dtype, int64_t value);
    ~Scalar();
    Scalar(const Scalar &) = delete;
    Scalar &operator=(const Scalar &) = delete;
    operator cann::aclScalar *() const { return scalar_; }

private:
    void set_float(DataType dtype, double v);
    void set_integer(DataType dtype, int64_t v);
    void create(DataType dtype);
    const Device &device_;
    cann::aclScalar *scalar_ = nullptr;
    alignas(8) unsigned char value_[8] = {};
};

// Row-major strides (in elements) of `shape`.
std::vector<int64_t> dense_strides(const Shape &shape);

AscendBuffer &buffer_of(const DeviceTensor &t);

class AscendBackend final : public Backend {
public:
    explicit AscendBackend(int device);
    std::string name() const override { return "ascend"; }
    std::string description() const override;
    Capability query(const OpQuery &q) const override;
    void synchronize() override { device_->synchronize(); }
    uint64_t device_calls() const override { return device_->calls(); }

    DeviceTensor allocate(DataType dtype, const Shape &shape) override;
    DeviceTensor upload(const Tensor &host) override;
    Tensor download(const DeviceTensor &t) override;

    // DequantizePacked and Unpack have no kernel here: query() answers `lowered` for them.
    void one_hot(const OneHotParams &p, const DeviceTensor &indices, const DeviceTensor &values,
                 DeviceTensor &y) override;
    void cast(const DeviceTensor &x, DeviceTensor &y) override;
    void binary(BinaryOp op, const DeviceTensor &a, const DeviceTensor &b,
                DeviceTensor &y) override;
    void slice(std::span<const int64_t> starts, std::span<const int64_t> steps,
               const DeviceTensor &x, DeviceTensor &y) override;
    void transpose(std::span<const size_t> perm, const DeviceTensor &x, DeviceTensor &y) override;
    void range(const DeviceTensor &start, const DeviceTensor &delta, DataType accumulate,
               DeviceTensor &y) override;
    void gather(size_t axis, bool negative_indices, const DeviceTensor &data,
                const DeviceTensor &indices, DeviceTensor &y) override;
    void concat(size_t axis, std::span<const DeviceTensor> inputs, DeviceTensor &y) override;

    Device &device() { return *device_; }

private:
    // The host values of a small tensor: its shadow, or a download.
    Tensor host_values(const DeviceTensor &t);
    // A device constant derived from `t`'s host values, made once per buffer under `key`.
    DeviceTensor derived(const DeviceTensor &t, const std::string &key,
                         const std::function<Tensor(const Tensor &)> &make);
    // x converted to `to` (the same tensor when it already is).
    DeviceTensor converted(const DeviceTensor &x, DataType to);
    // The registered kernels (Backend::register_kernel), by operator.
    void neg(const DeviceTensor &x, DeviceTensor &y);
    void where(const DeviceTensor &condition, const DeviceTensor &x, const DeviceTensor &y,
               DeviceTensor &out);
    void shift(bool left, const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y);
    void bitwise_and(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y);
    void copy(const DeviceTensor &src, const Shape &dims, const std::vector<int64_t> &strides,
              int64_t offset, DeviceTensor &y);
    // A [1] device tensor holding `value`, made once.
    DeviceTensor constant(DataType dtype, int64_t value);

    std::shared_ptr<Device> device_;
    std::map<std::string, DeviceTensor> constants_;
};

// The macro that launches aclnn operator `name` with the loader's typed pointers.
#define GGUFTOOL_ACLNN(device, name, ...)                                \
    (device).launch(#name, (device).api().aclnn##name##GetWorkspaceSize, \
                    (device).api().aclnn##name, __VA_ARGS__)

}  // namespace gguftool::runtime::ascend
