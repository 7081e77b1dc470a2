// CPU backend: memory (host tensors wrapped, never copied, so views need no kernel), and the
// constructor that registers every cpu_*.cpp file's rows.
#include "cpu_backend.hpp"

#include <fmt/format.h>

#include <cstring>

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

const Tensor &CacheView::dense() const {
    std::call_once(made_, [this] {
        const CacheStorage &s = *storage;
        const size_t row = size_t(s.inner) * dtype_size(s.storage.dtype());
        if (length == s.capacity && !s.transposed) {
            dense_ = s.storage;  // every position of every slice: dense already
            return;
        }
        dense_ = Tensor::allocate(s.storage.dtype(), {s.outer, length, s.inner});
        const size_t es = dtype_size(s.storage.dtype());
        for (int64_t o = 0; o < s.outer; ++o) {
            uint8_t *out = dense_.mutable_data() + size_t(o * length) * row;
            const uint8_t *in = s.storage.data() + size_t(o * s.capacity) * row;
            if (!s.transposed) {
                std::memcpy(out, in, size_t(length) * row);
                continue;
            }
            for (int64_t t = 0; t < length; ++t)
                for (int64_t i = 0; i < s.inner; ++i)
                    std::memcpy(out + size_t(t * s.inner + i) * es,
                                in + size_t(i * s.capacity + t) * es, es);
        }
    });
    return dense_;
}

const CacheView *cache_view(const DeviceTensor &t) {
    return dynamic_cast<const CacheView *>(t.buffer.get());
}

const uint8_t *bytes(const DeviceTensor &t) {
    if (const CacheView *c = cache_view(t)) return c->dense().data();
    return buffer_of(t).tensor.data();
}
uint8_t *mutable_bytes(DeviceTensor &t) {
    if (cache_view(t)) throw Error("a KV cache is written by its appends only");
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
    const Tensor &host = cache_view(t) ? cache_view(t)->dense() : buffer_of(t).tensor;
    if (host.dtype() == t.dtype && host.shape() == t.shape) return host;
    return host.viewed_as(t.dtype, t.shape);  // a view made by Reshape, Unsqueeze or BitCast
}

}  // namespace gguftool::runtime::cpu

namespace gguftool::runtime {

std::unique_ptr<Backend> make_cpu_backend(unsigned threads) {
    return std::make_unique<cpu::CpuBackend>(threads);
}

}  // namespace gguftool::runtime
