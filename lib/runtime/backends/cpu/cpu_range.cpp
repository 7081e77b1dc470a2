// Range on the CPU. Integers: start + i * delta modulo 2^n, in parallel (the same as accumulating).
// Floats: accumulated one addition at a time, as onnxruntime does, so each element carries the
// rounding of the sums before it; float16 and bfloat16 accumulate in float or double and round
// each element once.
#include <type_traits>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "gguftool/half.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

template <class A, class T>
void accumulate(T start, T delta, T *y, uint64_t n) {
    A acc, step;
    if constexpr (std::is_same_v<T, F16>)
        acc = A(fp16_to_f32(start.bits)), step = A(fp16_to_f32(delta.bits));
    else if constexpr (std::is_same_v<T, BF16>)
        acc = A(bf16_to_f32(start.bits)), step = A(bf16_to_f32(delta.bits));
    else
        acc = start, step = delta;
    for (uint64_t i = 0; i < n; ++i, acc += step) {
        if constexpr (std::is_same_v<T, F16> && std::is_same_v<A, float>)
            y[i] = F16{f32_to_fp16(acc)};
        else if constexpr (std::is_same_v<T, F16>)
            y[i] = F16{f64_to_fp16(acc)};
        else if constexpr (std::is_same_v<T, BF16> && std::is_same_v<A, float>)
            y[i] = BF16{f32_to_bf16(acc)};
        else if constexpr (std::is_same_v<T, BF16>)
            y[i] = BF16{f64_to_bf16(acc)};
        else
            y[i] = acc;
    }
}

void range(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &start = *args.inputs[0], &delta = *args.inputs[2];
    DeviceTensor &y = args.outputs[0];
    const DataType accumulate_as = DataType(args.attributes.at<int64_t>("accumulate"));
    const uint64_t n = y.elements();
    if (n == 0) return;
    with_type(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T s = *reinterpret_cast<const T *>(bytes(start));
        const T d = *reinterpret_cast<const T *>(bytes(delta));
        T *out = reinterpret_cast<T *>(mutable_bytes(y));
        if constexpr (std::is_integral_v<T>) {
            parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
                for (uint64_t i = b; i < e; ++i) out[i] = T(uint64_t(s) + i * uint64_t(d));
            });
        } else if constexpr (std::is_floating_point_v<T>) {
            accumulate<T>(s, d, out, n);
        } else if constexpr (std::is_same_v<T, F16> || std::is_same_v<T, BF16>) {
            if (accumulate_as == DataType::float64)
                accumulate<double>(s, d, out, n);
            else
                accumulate<float>(s, d, out, n);
        } else {
            throw Error("Range does not take bool");
        }
    });
}

}  // namespace

std::span<const CpuKernelRow> range_kernels() {
    static constexpr CpuKernelRow rows[] = {{"Range", range}};
    return rows;
}

}  // namespace gguftool::runtime::cpu
