// The CPU backend: tensors are host memory (uploads and downloads alias, never copy); kernels run
// on all threads; DequantizePacked is the dequantization core (internal to lib/runtime).
#pragma once

#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

class CpuBackend;

// A CPU kernel registered by operator name (Backend::register_kernel): each cpu_*.cpp file lists
// its rows, CpuBackend's constructor registers them all.
struct CpuKernel {
    const char *op_type;
    void (*run)(CpuBackend &cpu, const KernelArgs &args);
};
std::span<const CpuKernel> where_neg_kernels();  // Where, Neg
std::span<const CpuKernel> compare_kernels();    // Greater, Less, ..., And, Or (cpu_binary.cpp)
std::span<const CpuKernel> unary_kernels();      // Sqrt, Tanh, Sigmoid, Exp, Reciprocal, Not
std::span<const CpuKernel> expand_kernels();     // Expand (cpu_layout.cpp)
std::span<const CpuKernel> matmul_kernels();
std::span<const CpuKernel>
nbits_kernels();  // com.microsoft MatMulNBits, GatherBlockQuantized     // MatMul, Gemm (OpenBLAS)
std::span<const CpuKernel> reduce_kernels();  // Softmax, ReduceMean, ReduceSum

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(unsigned threads);
    std::string name() const override { return "cpu"; }
    std::string description() const override;  // "cpu, 2 threads"

    DeviceTensor allocate(DataType dtype, const Shape &shape) override;
    DeviceTensor upload(const Tensor &host) override;
    Tensor download(const DeviceTensor &t) override;

    void dequantize_packed(GgmlType format, const DeviceTensor &x, DeviceTensor &y) override;
    void unpack(const UnpackParams &p, const DeviceTensor &x, DeviceTensor &y) override;
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

    unsigned threads() const { return threads_; }

private:
    unsigned threads_;
};

// Host bytes of a CPU tensor (throws if the tensor belongs to another backend).
const uint8_t *bytes(const DeviceTensor &t);
uint8_t *mutable_bytes(DeviceTensor &t);

// C [m, n] = A [m, k] · B [n, k]ᵀ, float32, row major, on `threads` threads (cpu_matmul.cpp).
void sgemm_abt(const float *a, const float *b, float *c, uint64_t m, uint64_t n, uint64_t k,
               unsigned threads);

// Cast (cpu_cast.cpp).
void cast(const DeviceTensor &x, DeviceTensor &y, unsigned threads);

// Minimum work per thread, in elements, for the elementwise kernels.
inline constexpr uint64_t kGrain = 1 << 16;

}  // namespace gguftool::runtime::cpu
