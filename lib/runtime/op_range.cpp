// Range-11 and Range-27: start, limit and delta scalars; max(ceil((limit - start) / delta), 0)
// elements.
//
// The count: integers exactly; float and double as onnxruntime computes it (limit - start rounded
// in the type, then divided in double); float16 and bfloat16 (Range-27) in the stash type, as
// Range-27's function body does (Sub, Div and Ceil in float or double).
#include <fmt/format.h>

#include <cmath>

#include "gguftool/half.hpp"
#include "op.hpp"

namespace gguftool::runtime::detail {
namespace {

// A finite count from a floating ceil(...), or an error.
uint64_t float_count(double n) {
    if (std::isnan(n)) throw Error("the element count ceil((limit - start) / delta) is NaN");
    if (n <= 0) return 0;
    if (!(n <= double(kMaxElements)))
        throw Error(fmt::format("the output would have {} elements (more than 2^56)", n));
    return uint64_t(n);
}

template <class T>
uint64_t int_count(T start, T limit, T delta) {
    const __int128 diff = __int128(limit) - __int128(start);
    const __int128 d = delta;
    __int128 n = 0;
    if (d > 0 && diff > 0) n = (diff + d - 1) / d;
    if (d < 0 && diff < 0) n = (-diff + (-d) - 1) / (-d);
    if (n > __int128(kMaxElements))
        throw Error(fmt::format("the output would have {} elements (more than 2^56)", uint64_t(n)));
    return uint64_t(n);
}

template <class S>
uint64_t stash_count(S start, S limit, S delta) {
    const S diff = limit - start;
    return float_count(double(std::ceil(diff / delta)));
}

double half_value(DataType t, const Tensor &v) {
    const uint16_t bits = v.data_as<uint16_t>()[0];
    return t == DataType::float16 ? fp16_to_f32(bits) : bf16_to_f32(bits);
}

// Kernel: start, limit and delta one-element tensors of y's type; acc[0] = start, acc[i + 1] =
// acc[i] + delta, one rounded addition in attribute "accumulate" (an ONNX type number: y's type,
// or FLOAT or DOUBLE for FLOAT16 and BFLOAT16 y) each, y[i] = acc[i] rounded once to y's type
// (floats accumulate, as onnxruntime computes them; integers wrap).
void run_range(OpContext &ctx) {
    static const char *const kNames[] = {"start", "limit", "delta"};
    const DataType t = ctx.input(0).dtype;
    const bool halves = t == DataType::float16 || t == DataType::bfloat16;
    if (t != DataType::float32 && t != DataType::float64 && t != DataType::int16 &&
        t != DataType::int32 && t != DataType::int64 && !(halves && ctx.version() >= 27))
        throw Error(fmt::format("inputs must be float, double, int16, int32 or int64{}, not {}",
                                ctx.version() >= 27 ? ", float16 or bfloat16" : "", dtype_name(t)));
    Tensor v[3];
    for (size_t i = 0; i < 3; ++i) {
        const DeviceTensor &x = ctx.input(i);
        if (x.dtype != t)
            throw Error(fmt::format("input {} is {} but input start is {}", kNames[i],
                                    dtype_name(x.dtype), dtype_name(t)));
        if (x.shape.size() > 1 || x.elements() != 1)
            throw Error(fmt::format("input {} must be a scalar, not of shape {}", kNames[i],
                                    shape_string(x.shape)));
        v[i] = ctx.host_input(i);
    }
    DataType accumulate = t;
    if (halves) {
        const int64_t stash = ctx.attr_int("stash_type", int64_t(DataType::float32));
        if (stash != int64_t(DataType::float32) && stash != int64_t(DataType::float64))
            throw Error(
                fmt::format("attribute 'stash_type' must be 1 (float) or 11 (double), not "
                            "{}",
                            stash));
        accumulate = DataType(stash);
    }

    uint64_t count = 0;
    bool zero_delta = false;
    switch (t) {
        case DataType::int16:
        case DataType::int32:
        case DataType::int64: {
            const auto at = [&](const Tensor &x) -> int64_t {
                if (t == DataType::int16) return x.data_as<int16_t>()[0];
                if (t == DataType::int32) return x.data_as<int32_t>()[0];
                return x.data_as<int64_t>()[0];
            };
            zero_delta = at(v[2]) == 0;
            if (!zero_delta) count = int_count(at(v[0]), at(v[1]), at(v[2]));
            break;
        }
        case DataType::float32: {
            const float s = v[0].data_as<float>()[0], l = v[1].data_as<float>()[0],
                        d = v[2].data_as<float>()[0];
            zero_delta = d == 0;
            if (!zero_delta) count = float_count(std::ceil(double(l - s) / double(d)));
            break;
        }
        case DataType::float64: {
            const double s = v[0].data_as<double>()[0], l = v[1].data_as<double>()[0],
                         d = v[2].data_as<double>()[0];
            zero_delta = d == 0;
            if (!zero_delta) count = float_count(std::ceil((l - s) / d));
            break;
        }
        default: {  // float16, bfloat16 in the stash type
            const double s = half_value(t, v[0]), l = half_value(t, v[1]), d = half_value(t, v[2]);
            zero_delta = d == 0;
            if (zero_delta) break;
            count = accumulate == DataType::float64 ? stash_count(s, l, d)
                                                    : stash_count(float(s), float(l), float(d));
        }
    }
    if (zero_delta) throw Error("input delta is 0");
    ctx.allocate_output(t, {int64_t(count)});
    Attributes attributes;
    attributes.set("accumulate", int64_t(accumulate));
    ctx.run_kernel(attributes);
}

}  // namespace

std::span<const OpDef> range_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "Range", .since = 11, .inputs = {3, 3}, .run = run_range},
        {.op_type = "Range",
         .since = 27,
         .inputs = {3, 3},
         .attributes = {"stash_type"},
         .run = run_range},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
