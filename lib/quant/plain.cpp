#include "plain.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "convert.hpp"
#include "formats/common.hpp"
#include "gguftool/half.hpp"

namespace gguftool::quant {
namespace {

template <class T>
T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T, class Out>
void widen(const uint8_t *in, size_t n, Out *out) {
    for (size_t i = 0; i < n; ++i) out[i] = Out(load<T>(in + i * sizeof(T)));
}

// Types whose every value a float holds exactly: converting through float rounds only once.
bool exact_in_f32(GgmlType t) {
    return t == GgmlType::f32 || t == GgmlType::f16 || t == GgmlType::bf16 || t == GgmlType::i8 ||
           t == GgmlType::i16;
}

bool same_format(GgmlType t, DataType o) {
    return (t == GgmlType::f32 && o == DataType::float32) ||
           (t == GgmlType::f16 && o == DataType::float16) ||
           (t == GgmlType::bf16 && o == DataType::bfloat16) ||
           (t == GgmlType::f64 && o == DataType::float64);
}

// Plain values to float or double: exact, except f64 -> float (cvtsd2ss) and i32/i64 -> float,
// i64 -> double (cvtsi2ss/sd), which round once.
template <class Out>
void widen_plain(GgmlType t, const uint8_t *in, size_t n, Out *out) {
    switch (t) {
        case GgmlType::f32:
            if constexpr (std::is_same_v<Out, float>)
                std::memcpy(out, in, n * 4);
            else
                widen<float>(in, n, out);
            break;
        case GgmlType::f16:
            if constexpr (std::is_same_v<Out, float>)
                f16_to_f32(in, out, n);
            else
                for (size_t i = 0; i < n; ++i) out[i] = formats::load_f16(in + 2 * i);
            break;
        case GgmlType::bf16:
            for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(load<uint16_t>(in + 2 * i));
            break;
        case GgmlType::f64:
            if constexpr (std::is_same_v<Out, double>)
                std::memcpy(out, in, n * 8);
            else
                widen<double>(in, n, out);
            break;
        case GgmlType::i8:
            widen<int8_t>(in, n, out);
            break;
        case GgmlType::i16:
            widen<int16_t>(in, n, out);
            break;
        case GgmlType::i32:
            widen<int32_t>(in, n, out);
            break;
        case GgmlType::i64:
            widen<int64_t>(in, n, out);
            break;
        default:
            break;
    }
}

// f64, i32 and i64 to half/bfloat16 in one rounding (going through float would round twice).
template <uint16_t (*narrow)(double)>
void to_narrow_directly(GgmlType t, const uint8_t *in, size_t n, uint16_t *out) {
    for (size_t i = 0; i < n; ++i) {
        if (t == GgmlType::f64)
            out[i] = narrow(load<double>(in + 8 * i));
        else if (t == GgmlType::i32)
            out[i] = narrow(double(load<int32_t>(in + 4 * i)));  // exact in a double
        else
            out[i] = narrow(i64_to_double_odd(load<int64_t>(in + 8 * i)));
    }
}

}  // namespace

void decode_plain(GgmlType t, const uint8_t *in, size_t n, void *out, DataType out_type) {
    const size_t in_size = traits(t).type_size;
    if (same_format(t, out_type)) {
        std::memcpy(out, in, n * in_size);
        return;
    }
    switch (out_type) {
        case DataType::float32:
            widen_plain(t, in, n, static_cast<float *>(out));
            return;
        case DataType::float64:
            widen_plain(t, in, n, static_cast<double *>(out));
            return;
        default:  // float16 and bfloat16 (decode() accepts only the four floating types)
            break;
    }
    auto *dst = static_cast<uint16_t *>(out);
    const bool half = out_type == DataType::float16;
    if (!exact_in_f32(t)) {
        if (half)
            to_narrow_directly<f64_to_fp16>(t, in, n, dst);
        else
            to_narrow_directly<f64_to_bf16>(t, in, n, dst);
        return;
    }
    constexpr size_t kChunk = 4096;
    alignas(64) float buf[kChunk];
    for (size_t i = 0; i < n; i += kChunk) {
        const size_t m = std::min(kChunk, n - i);
        widen_plain(t, in + i * in_size, m, buf);
        if (half)
            f32_to_f16(buf, dst + i, m);
        else
            f32_to_bf16(buf, dst + i, m);
    }
}

}  // namespace gguftool::quant
