// The CPU backend: tensors are host memory (uploads and downloads alias, never copy); kernels run
// on all threads; DequantizePacked is the dequantization core (internal to lib/runtime).
#pragma once

#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(unsigned threads) : threads_(threads) {}
    std::string name() const override { return "cpu"; }

    DeviceTensor allocate(DataType dtype, const Shape &shape) override;
    DeviceTensor upload(const Tensor &host) override;
    Tensor download(const DeviceTensor &t) override;

    void dequantize_packed(GgmlType format, const DeviceTensor &x, DeviceTensor &y) override;
    void unpack(const UnpackParams &p, const DeviceTensor &x, DeviceTensor &y) override;
    void one_hot(const OneHotParams &p, const DeviceTensor &indices, const DeviceTensor &values,
                 DeviceTensor &y) override;
    void cast(const DeviceTensor &x, DeviceTensor &y) override;
    void add(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) override;
    void sub(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) override;
    void mul(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) override;
    void gather(size_t axis, bool negative_indices, const DeviceTensor &data,
                const DeviceTensor &indices, DeviceTensor &y) override;
    void concat(size_t axis, std::span<const DeviceTensor> inputs, DeviceTensor &y) override;

    unsigned threads() const { return threads_; }

private:
    unsigned threads_;
};

// Host bytes of a CPU tensor (throws if the tensor belongs to another backend).
const uint8_t *bytes(const DeviceTensor &t);
uint8_t *mutable_bytes(DeviceTensor &t);

// Elementwise kernels (cpu_binary.cpp, cpu_cast.cpp).
enum class BinaryOp { add, sub, mul };
void binary(BinaryOp op, const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y,
            unsigned threads);
void cast(const DeviceTensor &x, DeviceTensor &y, unsigned threads);

// Minimum work per thread, in elements, for the elementwise kernels.
inline constexpr uint64_t kGrain = 1 << 16;

}  // namespace gguftool::runtime::cpu
