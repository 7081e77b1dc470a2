// CPU backend: memory (host tensors wrapped, never copied, so views need no kernel), and the
// constructor that registers every cpu_*.cpp file's rows.
#include "cpu_backend.hpp"

#include <fmt/format.h>

#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

struct CpuBuffer final : DeviceBuffer {
    explicit CpuBuffer(Tensor t) : tensor(std::move(t)) {}
    Tensor tensor;
};

CpuBuffer &buffer_of(const DeviceTensor &t) {
    auto *b = dynamic_cast<CpuBuffer *>(t.buffer.get());
    if (!b) throw Error("tensor does not belong to the CPU backend");
    return *b;
}

}  // namespace

const uint8_t *bytes(const DeviceTensor &t) {
    return buffer_of(t).tensor.data();
}
uint8_t *mutable_bytes(DeviceTensor &t) {
    return buffer_of(t).tensor.mutable_data();
}

// The operators that read no element here: views of their input's buffer (download() reads
// them with their own dtype and shape) and host-side values (uploaded by the operator).
std::span<const CpuKernelRow> view_rows() {
    static constexpr CpuKernelRow rows[] = {
        {"Identity"}, {"Reshape"}, {"Unsqueeze"}, {"Squeeze"}, {"BitCast"}, {"Shape"}, {"Constant"},
    };
    return rows;
}

CpuBackend::CpuBackend(unsigned threads) : threads_(threads) {
    single_threaded_blas();
    for (const std::span<const CpuKernelRow> rows :
         {view_rows(), binary_kernels(), cast_kernels(), dequantize_packed_kernels(),
          index_kernels(), layout_kernels(), matmul_kernels(), nbits_kernels(), range_kernels(),
          reduce_kernels(), select_kernels(), unary_kernels(), unpack_kernels(),
          where_neg_kernels()})
        for (const CpuKernelRow &row : rows)
            register_kernel(
                row.op_type,
                row.run ? OpKernel([this, run = row.run](const KernelArgs &a) { run(*this, a); })
                        : OpKernel());
}

std::string CpuBackend::description() const {
    const unsigned n = thread_count(threads_);
    return fmt::format("cpu, {} {}", n, n == 1 ? "thread" : "threads");
}

DeviceTensor CpuBackend::allocate(DataType dtype, const Shape &shape) {
    Tensor t = Tensor::allocate(dtype, shape);
    return {dtype, shape, std::make_shared<CpuBuffer>(std::move(t))};
}

DeviceTensor CpuBackend::upload(const Tensor &host) {
    if (!host.defined()) throw Error("cannot upload an undefined tensor");
    return {host.dtype(), host.shape(), std::make_shared<CpuBuffer>(host)};
}

Tensor CpuBackend::download(const DeviceTensor &t) {
    const Tensor &host = buffer_of(t).tensor;
    if (host.dtype() == t.dtype && host.shape() == t.shape) return host;
    return host.viewed_as(t.dtype, t.shape);  // a view made by Reshape, Unsqueeze or BitCast
}

}  // namespace gguftool::runtime::cpu

namespace gguftool::runtime {

std::unique_ptr<Backend> make_cpu_backend(unsigned threads) {
    return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace gguftool::runtime
