// Legacy 32-element formats: q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 (layouts in formats/SPEC.md).
//
// Compiled once per instruction set by Highway's foreach_target; the loops are written so the
// compiler vectorises them for each target. No fused multiply-add: ggml rounds twice.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "legacy.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "common.hpp"
#include "formats.hpp"

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {

// q4_0: f16 d, 16 bytes of nibbles. y[j] = d * ((q[j] & 15) - 8), y[j+16] = d * ((q[j] >> 4) - 8).
void decode_q4_0(const uint8_t *in, size_t nblocks, float *out) {
    for (size_t b = 0; b < nblocks; ++b, in += 18, out += 32) {
        const float d = load_f16(in);
        const uint8_t *q = in + 2;
        for (int j = 0; j < 16; ++j) {
            out[j] = float((q[j] & 0x0F) - 8) * d;
            out[j + 16] = float((q[j] >> 4) - 8) * d;
        }
    }
}

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gguftool::formats {

HWY_EXPORT(decode_q4_0);

static void q4_0(const uint8_t *in, size_t n, float *out) {
    HWY_DYNAMIC_DISPATCH(decode_q4_0)(in, n, out);
}

std::span<const Kernel> legacy_kernels() {
    static constexpr Kernel kKernels[] = {
        {GgmlType::q4_0, q4_0},
    };
    return kKernels;
}

}  // namespace gguftool::formats
#endif  // HWY_ONCE
