// Where and Neg on the CPU: selection and sign flips, by element size (bits are copied, never
// converted).
#include <cstring>

#include "cpu_backend.hpp"
#include "cpu_broadcast.hpp"
#include "cpu_types.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// n outputs from condition, x and y runs, each contiguous (1) or fixed (0).
template <bool C, bool X, bool Y, class W>
void select(const uint8_t *c, const W *x, const W *y, W *out, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = c[C ? i : 0] ? x[X ? i : 0] : y[Y ? i : 0];
}

template <class W>
void where_rows(const BroadcastPlan<3> &p, const uint8_t *c, const W *x, const W *y, W *out,
                uint64_t begin, uint64_t end) {
    for_each_run(p, begin, end, [&](const std::array<uint64_t, 3> &off, uint64_t pos, uint64_t n) {
        const uint8_t *rc = c + off[0];
        const W *rx = x + off[1];
        const W *ry = y + off[2];
        W *ro = out + pos;
        if (!p.inner[0]) {
            // One condition for the whole run: a copy or a fill.
            const W *src = rc[0] ? rx : ry;
            if (rc[0] ? p.inner[1] : p.inner[2])
                std::memcpy(ro, src, size_t(n) * sizeof(W));
            else
                std::fill_n(ro, n, src[0]);
            return;
        }
        switch (p.inner[1] * 2 + p.inner[2]) {
            case 3:
                return select<true, true, true>(rc, rx, ry, ro, n);
            case 2:
                return select<true, true, false>(rc, rx, ry, ro, n);
            case 1:
                return select<true, false, true>(rc, rx, ry, ro, n);
            default:
                return select<true, false, false>(rc, rx, ry, ro, n);
        }
    });
}

// Where: condition BOOL (any non-zero byte is true), x, y and out of one type; the three
// broadcast (NumPy rules) to out.
void where(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &condition = *args.inputs[0], &x = *args.inputs[1], &y = *args.inputs[2];
    DeviceTensor &out = args.outputs[0];
    const uint64_t n = out.elements();
    if (n == 0) return;
    const BroadcastPlan<3> p = broadcast_plan<3>({&condition.shape, &x.shape, &y.shape}, out.shape);
    const uint8_t *pc = bytes(condition), *px = bytes(x), *py = bytes(y);
    uint8_t *po = mutable_bytes(out);
    with_word(dtype_size(out.dtype), [&](auto word) {
        using W = decltype(word);
        parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
            where_rows(p, pc, reinterpret_cast<const W *>(px), reinterpret_cast<const W *>(py),
                       reinterpret_cast<W *>(po), b, e);
        });
    });
}

// Neg: signed integers wrap (the minimum stays), floats flip the sign bit (NaNs too).
void neg(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const uint64_t n = x.elements();
    if (n == 0) return;
    const size_t es = dtype_size(x.dtype);
    // Floats flip the sign bit; integers wrap: 0 - x modulo 2^n.
    const bool floating = is_floating(x.dtype);
    const uint8_t *px = bytes(x);
    uint8_t *py = mutable_bytes(y);
    with_word(es, [&](auto word) {
        using W = decltype(word);
        const W *in = reinterpret_cast<const W *>(px);
        W *out = reinterpret_cast<W *>(py);
        const W sign = W(W(1) << (es * 8 - 1));
        parallel_for(n, cpu.threads(), kGrain, [&](uint64_t b, uint64_t e) {
            if (floating)
                for (uint64_t i = b; i < e; ++i) out[i] = W(in[i] ^ sign);
            else
                for (uint64_t i = b; i < e; ++i) out[i] = W(W(0) - in[i]);
        });
    });
}

}  // namespace

std::span<const CpuKernelRow> where_neg_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"Where", where},
        {"Neg", neg},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
