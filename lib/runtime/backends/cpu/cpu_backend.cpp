// CPU backend: memory (host tensors wrapped, never copied) and DequantizePacked via the core.
#include "cpu_backend.hpp"

#include <fmt/format.h>

#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"

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

CpuBackend::CpuBackend(unsigned threads) : threads_(threads) {
    for (const std::span<const CpuKernel> rows :
         {where_neg_kernels(), compare_kernels(), unary_kernels(), expand_kernels(),
          matmul_kernels(), reduce_kernels(), nbits_kernels()})
        for (const CpuKernel &k : rows)
            register_kernel(k.op_type, [this, run = k.run](const KernelArgs &a) { run(*this, a); });
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

void CpuBackend::dequantize_packed(GgmlType format, const DeviceTensor &x, DeviceTensor &y) {
    const std::span<const uint8_t> in(bytes(x), x.nbytes());
    quant::decode(format, in, y.elements(), y.elements() ? mutable_bytes(y) : nullptr,
                  static_cast<DataType>(int32_t(y.dtype)), threads_);
}

void CpuBackend::cast(const DeviceTensor &x, DeviceTensor &y) {
    cpu::cast(x, y, threads_);
}

}  // namespace gguftool::runtime::cpu

namespace gguftool::runtime {

std::unique_ptr<Backend> make_cpu_backend(unsigned threads) {
    return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace gguftool::runtime
