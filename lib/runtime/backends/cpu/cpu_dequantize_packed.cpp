// DequantizePacked-29 on the CPU: gguftool's dequantization core (bit-identical to llama.cpp's
// dequantize_row_* functions) on the backend's threads.
#include "cpu_backend.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::runtime::cpu {
namespace {

void dequantize_packed(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const GgmlType format = GgmlType(args.attributes.at<int64_t>("format"));
    const std::span<const uint8_t> in(bytes(x), x.nbytes());
    quant::decode(format, in, y.elements(), y.elements() ? mutable_bytes(y) : nullptr,
                  static_cast<DataType>(int32_t(y.dtype)), cpu.threads());
}

}  // namespace

std::span<const CpuKernelRow> dequantize_packed_kernels() {
    static constexpr CpuKernelRow rows[] = {{"DequantizePacked", dequantize_packed}};
    return rows;
}

}  // namespace gguftool::runtime::cpu
