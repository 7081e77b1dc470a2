// MatMulNBits and GatherBlockQuantized (com.microsoft) on the CPU: the codes decoded to float,
// (code - zero_point) · scale, in parallel; MatMulNBits then multiplies with OpenBLAS
// (sgemm_abt). The operators checked shapes and types (lib/runtime/op_contrib.cpp).
#include <cstring>
#include <vector>

#include "cpu_backend.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// Code j of a block's blob.
inline int code(const uint8_t *blob, int64_t j, int64_t bits) {
    return bits == 8 ? blob[j] : (blob[j / 2] >> ((j & 1) * 4)) & 15;
}

// Row n of dequant(B): K values.
void decode_row(const uint8_t *b, const float *scales, const DeviceTensor *zp, int64_t n, int64_t K,
                int64_t bits, int64_t block, float *out) {
    const int64_t blocks = (K + block - 1) / block, blob = block * bits / 8;
    const int default_zp = 1 << (bits - 1);
    for (int64_t kb = 0; kb < blocks; ++kb) {
        const uint8_t *q = b + (n * blocks + kb) * blob;
        const float s = scales[n * blocks + kb];
        const int64_t len = std::min(block, K - kb * block);
        float *o = out + kb * block;
        if (zp && zp->dtype == DataType::float32) {
            const float z = reinterpret_cast<const float *>(bytes(*zp))[n * blocks + kb];
            for (int64_t j = 0; j < len; ++j) o[j] = (float(code(q, j, bits)) - z) * s;
        } else {
            int z = default_zp;
            if (zp) {  // packed like the codes, per row
                const int64_t per_row = (blocks * bits + 7) / 8;
                z = code(bytes(*zp) + n * per_row, kb, bits);
            }
            for (int64_t j = 0; j < len; ++j) o[j] = float(code(q, j, bits) - z) * s;
        }
    }
}

void matmul_nbits(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1], &scales = *args.inputs[2];
    const DeviceTensor *zp = args.inputs.size() > 3 ? args.inputs[3] : nullptr;
    const DeviceTensor *bias = args.inputs.size() > 5 ? args.inputs[5] : nullptr;
    DeviceTensor &y = args.outputs[0];
    const int64_t K = *args.attributes.get_int("K"), N = *args.attributes.get_int("N");
    const int64_t bits = *args.attributes.get_int("bits");
    const int64_t block = *args.attributes.get_int("block_size");
    const uint64_t M = a.elements() / uint64_t(K);
    std::vector<float> w(size_t(N * K));
    const uint8_t *pb = bytes(b);
    const float *ps = reinterpret_cast<const float *>(bytes(scales));
    parallel_for(uint64_t(N), cpu.threads(), std::max<uint64_t>(1, kGrain / uint64_t(K)),
                 [&](uint64_t r0, uint64_t r1) {
                     for (uint64_t n = r0; n < r1; ++n)
                         decode_row(pb, ps, zp, int64_t(n), K, bits, block,
                                    w.data() + n * uint64_t(K));
                 });
    float *py = reinterpret_cast<float *>(mutable_bytes(y));
    if (M == 0) return;
    sgemm_abt(reinterpret_cast<const float *>(bytes(a)), w.data(), py, M, uint64_t(N), uint64_t(K),
              cpu.threads());
    if (bias) {
        const float *pbias = reinterpret_cast<const float *>(bytes(*bias));
        for (uint64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) py[m * uint64_t(N) + uint64_t(n)] += pbias[n];
    }
}

void gather_block_quantized(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &data = *args.inputs[0], &indices = *args.inputs[1],
                       &scales = *args.inputs[2];
    DeviceTensor &y = args.outputs[0];
    const int64_t bits = *args.attributes.get_int("bits");
    const int64_t block = *args.attributes.get_int("block_size");
    const int64_t rows = data.shape[0], width = data.shape[1] * 8 / bits;
    const uint64_t n = indices.elements();
    const uint8_t *pd = bytes(data);
    const float *ps = reinterpret_cast<const float *>(bytes(scales));
    float *py = reinterpret_cast<float *>(mutable_bytes(y));
    const uint8_t *pi = bytes(indices);
    const bool wide = indices.dtype == DataType::int64;
    for (uint64_t i = 0; i < n; ++i) {
        int64_t r = 0;
        if (wide)
            std::memcpy(&r, pi + i * 8, 8);
        else {
            int32_t v;
            std::memcpy(&v, pi + i * 4, 4);
            r = v;
        }
        if (r < 0) r += rows;
        float *out = py + i * uint64_t(width);
        if (r < 0 || r >= rows) {  // out of range: zeros (onnxruntime's behaviour)
            std::fill_n(out, width, 0.0f);
            continue;
        }
        // A row is K = width values in blocks: MatMulNBits' layout with one row.
        decode_row(pd + r * data.shape[1], ps + r * (width / block), nullptr, 0, width, bits, block,
                   out);
    }
    (void)cpu;
}

}  // namespace

std::span<const CpuKernelRow> nbits_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"MatMulNBits", matmul_nbits},
        {"GatherBlockQuantized", gather_block_quantized},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
