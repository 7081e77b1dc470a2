// Quantized dot products (formats/dot.hpp): ggml-cpu's vec_dot kernels of x86 for the formats
// below, reading the weight blocks of formats/blocks.hpp in place.
//
// Compiled once per instruction set by Highway's foreach_target. On AVX2 and AVX-512 a block's
// codes are unpacked into 32 bytes per 32 elements, multiplied with the activations' int8 codes
// and summed in pairs by maddubs (unsigned codes times signed ones into int16) and madd (int16
// pairs into int32), as ggml does; a signed code is made unsigned by moving its sign onto the
// activation (sign_epi8). Each block's int32 sums are converted and scaled by the product of the
// scales into float accumulators. Every int16 pair sum stays below 2^15 for every code a block can
// hold (at most 2 * 128 * 127), so nothing saturates. The other targets have no kernels.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dot.cpp"
#include "dot.hpp"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#if HWY_ARCH_X86
#include <cpuid.h>
#endif

#include "blocks.hpp"
#include "codebooks/iq4_values.hpp"
#include "common.hpp"
#include "dispatch.hpp"
#include "e2m1_table.hpp"

// The formats with a dot kernel, X(type, act): kernel <type>_dots below, activations `act`.
// clang-format off
#define GGUFTOOL_DOT_FORMATS(X) \
    X(q4_0, q8_0)               \
    X(q4_1, q8_0)               \
    X(q5_0, q8_0)               \
    X(q5_1, q8_0)               \
    X(q8_0, q8_0)               \
    X(iq4_nl, q8_0)             \
    X(mxfp4, q8_0)              \
    X(q2_k, q8_K)               \
    X(q3_k, q8_K)               \
    X(q4_k, q8_K)               \
    X(q5_k, q8_K)               \
    X(q6_k, q8_K)               \
    X(iq4_xs, q8_K)
// clang-format on

#undef GGUFTOOL_DOT_X86
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#define GGUFTOOL_DOT_X86 1
#else
#define GGUFTOOL_DOT_X86 0
#endif

#ifndef GGUFTOOL_FORMATS_DOT_ONCE
#define GGUFTOOL_FORMATS_DOT_ONCE
namespace gguftool::formats {
// Whether the CPU has AVX512-VNNI (CPUID leaf 7, ECX bit 11); the AVX-512 target's OS check covers
// its registers.
bool cpu_has_avx512_vnni();
}  // namespace gguftool::formats
#endif

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {
namespace {

#if GGUFTOOL_DOT_X86

// The kernels (dot-inl.h), with maddubs and madd; on AVX-512 also with AVX512-VNNI's dpbusd.
namespace madd {
#define GGUFTOOL_DOT_VNNI 0
#include "dot-inl.h"  // NOLINT(build/include)
#undef GGUFTOOL_DOT_VNNI
}  // namespace madd
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Highway's target attributes replaced by the same and AVX512-VNNI (one push: clang applies only
// the outer of two), then put back.
HWY_POP_ATTRIBUTES
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni")
namespace vnni {
#define GGUFTOOL_DOT_VNNI 1
#include "dot-inl.h"  // NOLINT(build/include)
#undef GGUFTOOL_DOT_VNNI
}  // namespace vnni
HWY_POP_ATTRIBUTES
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR)
#endif

#endif  // GGUFTOOL_DOT_X86

}  // namespace

// This target's kernel for t, or nullptr.
const DotKernel *dot_kernel_here(GgmlType t) {
#if GGUFTOOL_DOT_X86
    std::span<const DotKernel> kernels = madd::kDotKernels;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if (cpu_has_avx512_vnni()) kernels = vnni::kDotKernels;
#endif
    for (const DotKernel &k : kernels)
        if (k.type == t) return &k;
#else
    (void)t;
#endif
    return nullptr;
}

}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gguftool::formats {

GGUFTOOL_EXPORT(dot_kernel_here);

bool cpu_has_avx512_vnni() {
#if HWY_ARCH_X86
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 11 & 1);
    }();
    return has;
#else
    return false;
#endif
}

const DotKernel *dot_kernel(GgmlType t) {
    return GGUFTOOL_DISPATCH(dot_kernel_here)(t);
}

namespace {

// Rounds to the nearest integer, ties to even, as ggml's nearest_int and x86's cvtps after
// round_ps do, for |v| < 2^22; any other value (and NaN) gives some int, without undefined
// behaviour.
int nearest_int(float v) {
    const float biased = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &biased, 4);
    return (i & 0x007fffff) - 0x00400000;
}

// ggml-cpu's x86 quantize_row_q8_0: d = amax / 127 stored as f16, codes round(x * (127 / amax)).
void quantize_q8_0(const float *x, size_t n, ActQ8_0 *out) {
    for (size_t b = 0; b < n / 32; ++b, x += 32) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            const int q = std::clamp(nearest_int(x[j] * id), -128, 127);
            out[b].qs[j] = int8_t(q);
            sum += q;
        }
        out[b].d = fp16_to_f32(f32_to_fp16(d));
        out[b].dsum = out[b].d * float(sum);
    }
}

// ggml's quantize_row_q8_K_ref: the scale from the element of largest magnitude, -127 / it, codes
// at most 127, the sums of each 16 codes in bsums.
void quantize_q8_K(const float *x, size_t n, BlockQ8_K *out) {
    for (size_t b = 0; b < n / 256; ++b, x += 256) {
        BlockQ8_K &y = out[b];
        float max = 0, amax = 0;
        for (int j = 0; j < 256; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            std::memset(&y, 0, sizeof(y));
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < 256; ++j)
            y.qs[j] = int8_t(std::clamp(nearest_int(iscale * x[j]), -128, 127));
        for (int j = 0; j < 16; ++j) {
            int sum = 0;
            for (int i = 0; i < 16; ++i) sum += y.qs[16 * j + i];
            y.bsums[j] = int16_t(sum);
        }
        y.d = 1 / iscale;
    }
}

}  // namespace

void quantize_activations(ActFormat f, const float *x, size_t n, uint8_t *out) {
    if (f == ActFormat::q8_0)
        quantize_q8_0(x, n, reinterpret_cast<ActQ8_0 *>(out));
    else
        quantize_q8_K(x, n, reinterpret_cast<BlockQ8_K *>(out));
}

}  // namespace gguftool::formats
#endif  // HWY_ONCE
