// The elementwise unary operators on the CPU: Sqrt, Tanh, Sigmoid, Exp and Reciprocal (every float
// type computed in double and rounded once: float32 results are the correctly rounded value but
// for the rare double-rounding tie), and Not (BOOL).
#include <cmath>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// y = f(x) elementwise over a floating tensor, in parallel.
template <class F>
void float_unary(CpuBackend &cpu, const KernelArgs &args, F f) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = x.elements();
    if (n == 0) return;
    const uint8_t *px = bytes(x);
    uint8_t *py = mutable_bytes(y);
    with_type(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (kFloatElement<T>) {
            const T *in = reinterpret_cast<const T *>(px);
            T *out = reinterpret_cast<T *>(py);
            parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
                for (uint64_t i = b; i < e; ++i) out[i] = narrow<T>(f(widen(in[i])));
            });
        } else {
            throw Error("a float kernel was given a non-float tensor");
        }
    });
}

// The logistic function without overflow: exp of a non-positive number only.
double sigmoid_of(double v) {
    if (v >= 0) return 1 / (1 + std::exp(-v));
    const double e = std::exp(v);
    return e / (1 + e);
}

void sqrt_kernel(CpuBackend &cpu, const KernelArgs &args) {
    float_unary(cpu, args, [](double v) { return std::sqrt(v); });
}
void tanh_kernel(CpuBackend &cpu, const KernelArgs &args) {
    float_unary(cpu, args, [](double v) { return std::tanh(v); });
}
void sigmoid_kernel(CpuBackend &cpu, const KernelArgs &args) {
    float_unary(cpu, args, [](double v) { return sigmoid_of(v); });
}
void exp_kernel(CpuBackend &cpu, const KernelArgs &args) {
    float_unary(cpu, args, [](double v) { return std::exp(v); });
}
void reciprocal_kernel(CpuBackend &cpu, const KernelArgs &args) {
    float_unary(cpu, args, [](double v) { return 1 / v; });
}

// Not: any non-zero byte is true.
void not_kernel(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = x.elements();
    if (n == 0) return;
    const uint8_t *in = bytes(x);
    uint8_t *out = mutable_bytes(y);
    parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
        for (uint64_t i = b; i < e; ++i) out[i] = in[i] == 0;
    });
}

}  // namespace

std::span<const CpuKernelRow> unary_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"Sqrt", sqrt_kernel},
        {"Tanh", tanh_kernel},
        {"Sigmoid", sigmoid_kernel},
        {"Exp", exp_kernel},
        {"Reciprocal", reciprocal_kernel},
        {"Not", not_kernel},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
