// float <-> half/bfloat16/double array conversions, compiled per instruction set by Highway.
//
// Highway 1.0.3's own DemoteTo(bfloat16) truncates, so bfloat16 rounding is done here with integer
// ops. Its emulated half conversions (EMU128, and SSE4, which has no F16C) truncate and mishandle
// inf/NaN, so those targets use the scalar code of gguftool/half.hpp; AVX2 and AVX3 use F16C
// (vcvtps2ph/vcvtph2ps), which rounds to nearest even and quiets NaNs the same way.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "convert.cpp"
#include "convert.hpp"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "formats/common.hpp"
#include "formats/dispatch.hpp"
#include "gguftool/half.hpp"

HWY_BEFORE_NAMESPACE();
namespace gguftool::quant::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr bool kNativeHalf =
    HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_SSE4;

void F32ToF16(const float *HWY_RESTRICT in, uint16_t *HWY_RESTRICT out, size_t n) {
    size_t i = 0;
    if constexpr (kNativeHalf) {
        const hn::ScalableTag<float> df;
        const hn::Rebind<hwy::float16_t, decltype(df)> dh;
        const size_t lanes = hn::Lanes(df);
        auto *half = reinterpret_cast<hwy::float16_t *>(out);
        for (; i + lanes <= n; i += lanes)
            hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, in + i)), dh, half + i);
    }
    for (; i < n; ++i) out[i] = f32_to_fp16(in[i]);
}

void F32ToBF16(const float *HWY_RESTRICT in, uint16_t *HWY_RESTRICT out, size_t n) {
    const hn::ScalableTag<float> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const hn::RebindToSigned<decltype(df)> di;
    const hn::Rebind<uint16_t, decltype(df)> du16;
    const size_t lanes = hn::Lanes(df);
    const auto round_bias = hn::Set(du, 0x7FFF);
    const auto one = hn::Set(du, 1);
    const auto quiet = hn::Set(du, 0x0040);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        const auto v = hn::LoadU(df, in + i);
        const auto bits = hn::BitCast(du, v);
        const auto high = hn::ShiftRight<16>(bits);
        const auto rounded =
            hn::ShiftRight<16>(hn::Add(bits, hn::Add(round_bias, hn::And(high, one))));
        const auto result =
            hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(high, quiet), rounded);
        hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di, result)), du16, out + i);  // values <= 0xFFFF
    }
    // Qualified: quant::f32_to_bf16 is the array conversion.
    for (; i < n; ++i) out[i] = gguftool::f32_to_bf16(in[i]);
}

void F32ToF64(const float *HWY_RESTRICT in, double *HWY_RESTRICT out, size_t n) {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const size_t lanes = hn::Lanes(dd);
    size_t i = 0;
    for (; i + lanes <= n; i += lanes)
        hn::StoreU(hn::PromoteTo(dd, hn::LoadU(df, in + i)), dd, out + i);
    for (; i < n; ++i) out[i] = double(in[i]);
}

void F16ToF32(const uint8_t *HWY_RESTRICT in, float *HWY_RESTRICT out, size_t n) {
    size_t i = 0;
    if constexpr (kNativeHalf) {
        const hn::ScalableTag<float> df;
        const hn::Rebind<hwy::float16_t, decltype(df)> dh;
        const size_t lanes = hn::Lanes(df);
        const auto *half = reinterpret_cast<const hwy::float16_t *>(in);
        for (; i + lanes <= n; i += lanes)
            hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, half + i)), df, out + i);
    }
    for (; i < n; ++i) out[i] = formats::load_f16(in + 2 * i);
}

}  // namespace gguftool::quant::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gguftool::quant {

GGUFTOOL_EXPORT(F32ToF16);
GGUFTOOL_EXPORT(F32ToBF16);
GGUFTOOL_EXPORT(F32ToF64);
GGUFTOOL_EXPORT(F16ToF32);

void f32_to_f16(const float *in, uint16_t *out, size_t n) {
    GGUFTOOL_DISPATCH(F32ToF16)(in, out, n);
}
void f32_to_bf16(const float *in, uint16_t *out, size_t n) {
    GGUFTOOL_DISPATCH(F32ToBF16)(in, out, n);
}
void f32_to_f64(const float *in, double *out, size_t n) {
    GGUFTOOL_DISPATCH(F32ToF64)(in, out, n);
}
void f16_to_f32(const uint8_t *in, float *out, size_t n) {
    GGUFTOOL_DISPATCH(F16ToF32)(in, out, n);
}

}  // namespace gguftool::quant
#endif  // HWY_ONCE
