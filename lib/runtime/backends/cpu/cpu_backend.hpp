// The CPU backend: tensors are host memory (uploads and downloads alias, never copy); kernels run
// on all threads; DequantizePacked is the dequantization core (internal to lib/runtime).
#pragma once

#include <memory>
#include <mutex>

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

// A KV cache (the fused KvConcat, cpu_index.cpp): `outer` slices (batch times heads) of
// `capacity` positions of `inner` values each (the head size), of which the first `used` of every
// slice are written. Appending writes positions `used` onwards only, so a view of the first
// positions never changes: an append goes in place when it continues the newest view, else into
// a new cache.
struct CacheStorage {
    Tensor storage;  // [outer, capacity, inner], or [outer, inner, capacity] when `transposed`
    int64_t outer = 0, capacity = 0, inner = 0;
    // Kept transposed, each slice's positions as columns: what attention's key product reads
    // (KvMatMul with "transpose"), as the unfused graph's Transpose would give it.
    bool transposed = false;
    std::mutex mutex;
    int64_t used = 0;  // under `mutex`
};
// A tensor on a cache: its first `length` positions ([..., length, inner], the time axis second
// to last of its shape). Kernels that know caches read `storage` with its pitch; bytes() gives
// every other reader a dense copy, made once.
struct CacheView final : DeviceBuffer {
    CacheView(std::shared_ptr<CacheStorage> s, int64_t n) : storage(std::move(s)), length(n) {}
    std::shared_ptr<CacheStorage> storage;
    int64_t length;
    // [outer, length, inner], dense (the storage itself when it is full).
    const Tensor &dense() const;

private:
    mutable std::once_flag made_;
    mutable Tensor dense_;
};
// The cache view a tensor is, or nullptr for a plain one.
const CacheView *cache_view(const DeviceTensor &t);

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
