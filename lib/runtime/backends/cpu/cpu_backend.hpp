// The CPU backend: tensors are host memory (uploads and downloads alias, never copy); kernels run
// on all threads; DequantizePacked is the dequantization core (internal to lib/runtime).
#pragma once

#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::cpu {

class CpuBackend;

// One row of the CPU backend (Backend::register_kernel): an operator and its kernel (none for an
// operator that needs none: a view or a host-side value). Each cpu_*.cpp file lists the rows of
// the kernels it holds; CpuBackend's constructor registers them all. The CPU runs every operator
// it has a row for: its rows have no capability rule.
struct CpuKernelRow {
    const char *op_type;
    void (*run)(CpuBackend &cpu, const KernelArgs &args) = nullptr;
};
std::span<const CpuKernelRow> view_rows();  // Identity, Reshape, ..., Shape, Constant: no kernel
std::span<const CpuKernelRow> binary_kernels();  // Add, ..., Equal, Greater, ..., And, Or
std::span<const CpuKernelRow> cast_kernels();
std::span<const CpuKernelRow> dequantize_packed_kernels();
std::span<const CpuKernelRow> index_kernels();   // OneHot, Gather, Concat
std::span<const CpuKernelRow> layout_kernels();  // Slice, Transpose, Expand
std::span<const CpuKernelRow> matmul_kernels();  // MatMul, Gemm (OpenBLAS)
std::span<const CpuKernelRow> nbits_kernels();   // com.microsoft MatMulNBits, GatherBlockQuantized
std::span<const CpuKernelRow> range_kernels();
std::span<const CpuKernelRow> reduce_kernels();  // Softmax, ReduceMean, ReduceSum
std::span<const CpuKernelRow> select_kernels();  // TopK, NonZero, ScatterND, Loop (no kernel)
std::span<const CpuKernelRow> unary_kernels();   // Sqrt, Tanh, Sigmoid, Exp, Reciprocal, Not
std::span<const CpuKernelRow> unpack_kernels();
std::span<const CpuKernelRow> where_neg_kernels();  // Where, Neg

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(unsigned threads);
    std::string name() const override { return "cpu"; }
    std::string description() const override;  // "cpu, 2 threads"

    DeviceTensor allocate(DataType dtype, const Shape &shape) override;
    DeviceTensor upload(const Tensor &host) override;
    Tensor download(const DeviceTensor &t) override;

    unsigned threads() const { return threads_; }

private:
    unsigned threads_;
};

// Host bytes of a CPU tensor (throws if the tensor belongs to another backend).
const uint8_t *bytes(const DeviceTensor &t);
uint8_t *mutable_bytes(DeviceTensor &t);

// Makes OpenBLAS single-threaded and ends its threads, once per process (cpu_matmul.cpp).
void single_threaded_blas();

// C [m, n] = A [m, k] · B [n, k]ᵀ, float32, row major, on `threads` threads (cpu_matmul.cpp).
void sgemm_abt(const float *a, const float *b, float *c, uint64_t m, uint64_t n, uint64_t k,
               unsigned threads);

// Minimum work per thread, in elements, for the elementwise kernels.
inline constexpr uint64_t kGrain = 1 << 16;

}  // namespace gguftool::runtime::cpu
