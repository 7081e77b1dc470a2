// The field decoders every format lowering shares: f16 and binary32 scales, little-endian words,
// e8m0 and ue4m3 scales, nibbles.
//
// Below opset 26 ONNX has no BitCast, so a 16-bit pattern becomes a float by a lookup in one shared
// table of all 65536 f16 values (256 KiB per model, exact by construction, NaN payloads included)
// and a binary32 pattern by exact integer and power-of-two arithmetic. From opset 26, BitCast.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats.hpp"
#include "formats/common.hpp"
#include "gguftool/half.hpp"

namespace gguftool::lower::detail {
namespace {

std::string float_bytes(const std::vector<float> &v) {
    return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

// The little-endian word formed from `width` bytes per word of `count` words at `offset`, in
// `dtype` (INT32 for 16 bits, INT64 for 32): sum of byte k times 256^k, exact.
Value words(LoweringBuilder &b, const Value &blocks, size_t offset, size_t count, size_t width,
            DataType dtype) {
    const Value raw =
        b.reshape(b.bytes(blocks, offset, count * width), {-1, int64_t(count), int64_t(width)});
    Value sum;
    for (size_t k = 0; k < width; ++k) {
        Value byte = b.cast(b.slice(raw, 2, int64_t(k), int64_t(k + 1)), dtype);
        // The constant has byte's rank 3 (see LoweringBuilder::scalar: a rank-0 one is ~30x
        // slower).
        if (k) byte = b.mul(byte, b.scalar(dtype, double(uint64_t{1} << (8 * k)), 3));
        sum = k ? b.add(sum, byte) : byte;
    }
    return b.reshape(sum, {-1, int64_t(count)});
}

}  // namespace

Value float_table(LoweringBuilder &b, const std::string &name, const std::vector<int64_t> &dims,
                  const std::vector<float> &values) {
    return b.table(name, DataType::float32, dims, [&] { return float_bytes(values); });
}

Value u16_words(LoweringBuilder &b, const Value &blocks, size_t offset, size_t count) {
    return words(b, blocks, offset, count, 2, DataType::int32);
}

Value u32_words(LoweringBuilder &b, const Value &blocks, size_t offset, size_t count) {
    return words(b, blocks, offset, count, 4, DataType::int64);
}

Value f16_from_int32(LoweringBuilder &b, const Value &bits) {
    if (b.opset() >= 26) {
        const Value h =
            b.op("BitCast", {b.cast(bits, DataType::uint16)},
                 {LoweringBuilder::attr("to", int64_t(onnx_number(DataType::float16)))});
        return b.cast(h, DataType::float32);
    }
    const Value table = b.table("f16_to_f32", DataType::float32, {65536}, [] {
        std::vector<float> v(65536);
        for (uint32_t i = 0; i < 65536; ++i) v[i] = fp16_to_f32(uint16_t(i));
        return float_bytes(v);
    });
    return b.gather(table, bits);
}

Value f16_field(LoweringBuilder &b, const Value &blocks, size_t offset) {
    return f16_from_int32(b, u16_words(b, blocks, offset, 1));
}

Value f32_field(LoweringBuilder &b, const Value &blocks, size_t offset) {
    const Value bits = u32_words(b, blocks, offset, 1);  // INT64 [nb, 1]
    if (b.opset() >= 26)
        return b.op("BitCast", {b.cast(bits, DataType::uint32)},
                    {LoweringBuilder::attr("to", int64_t(onnx_number(DataType::float32)))});
    // sign s, exponent e, mantissa m; |value| = (m + implicit[e]) * scale[e], exact: an integer
    // below 2^24 times a power of two, which is the float itself. e = 255 gives inf via scale, and
    // `nan[2e + min(m, 1)]` adds NaN for a non-zero mantissa (0 otherwise, which keeps +0 as +0
    // because the sign comes last, as a multiplication by +-1).
    const DataType i64 = DataType::int64;
    const Value m = b.op("Mod", {bits, b.scalar(i64, double(1u << 23))});
    const Value e = b.op("Mod", {b.div(bits, b.scalar(i64, double(1u << 23))), b.scalar(i64, 256)});
    const Value s = b.div(bits, b.scalar(i64, double(1u << 31)));
    const Value implicit = float_table(b, "f32_implicit_bit", {256}, [] {
        std::vector<float> v(256, float(1u << 23));
        v[0] = 0;
        return v;
    }());
    const Value scale = float_table(b, "f32_exponent_scale", {256}, [] {
        std::vector<float> v(256);
        for (int e = 0; e < 256; ++e)
            v[size_t(e)] = e == 255 ? INFINITY : std::ldexp(1.0f, std::max(e, 1) - 150);
        return v;
    }());
    const Value nan = float_table(b, "f32_nan_mantissa", {512}, [] {
        std::vector<float> v(512, 0.0f);
        v[511] = NAN;
        return v;
    }());
    const Value sign = float_table(b, "f32_sign", {2}, {1.0f, -1.0f});
    const Value magnitude =
        b.mul(b.add(b.cast(m, DataType::float32), b.gather(implicit, e)), b.gather(scale, e));
    const Value nan_key = b.add(b.mul(e, b.scalar(i64, 2)), b.op("Min", {m, b.scalar(i64, 1)}));
    return b.mul(b.add(magnitude, b.gather(nan, nan_key)), b.gather(sign, s));
}

Value nibbles(LoweringBuilder &b, const Value &bytes, int64_t axis) {
    return b.concat(
        {b.low_bits(bytes, DataType::uint8, 4), b.shift_right(bytes, DataType::uint8, 4)}, axis);
}

Value nibble_pair_values(LoweringBuilder &b, const Value &codes, int64_t n, const std::string &name,
                         const float (&book)[16]) {
    const DataType u8 = DataType::uint8;
    std::vector<float> pairs;
    for (int key = 0; key < 256; ++key) pairs.insert(pairs.end(), {book[key & 15], book[key >> 4]});
    const Value table = float_table(b, name, {256, 2}, pairs);
    const Value rows = b.reshape(codes, {-1, n / 2, 2});
    const Value even = b.reshape(b.slice(rows, 2, 0, 1), {-1, n / 2});
    const Value odd = b.reshape(b.slice(rows, 2, 1, 2), {-1, n / 2});
    // The nibbles are disjoint bits, so their sum is their OR; the left shift drops the high ones.
    const Value low = b.add(b.low_bits(even, u8, 4), b.shift_left(odd, u8, 4));
    const Value high =
        b.add(b.shift_right(even, u8, 4), b.shift_left(b.shift_right(odd, u8, 4), u8, 4));
    const Value keys =
        b.concat({b.reshape(low, {-1, 1, n / 2}), b.reshape(high, {-1, 1, n / 2})}, 1);
    return b.gather(table, as_index(b, keys));
}

Value e8m0_half(LoweringBuilder &b, const Value &codes) {
    const Value table = float_table(b, "e8m0_half", {256}, [] {
        std::vector<float> v(256);
        for (int i = 0; i < 256; ++i) v[size_t(i)] = formats::e8m0_to_f32_half(uint8_t(i));
        return v;
    }());
    return b.gather(table, as_index(b, codes));
}

Value ue4m3_half(LoweringBuilder &b, const Value &codes) {
    const Value table =
        float_table(b, "ue4m3_half", {256},
                    std::vector<float>(formats::kUe4m3Half.begin(), formats::kUe4m3Half.end()));
    return b.gather(table, as_index(b, codes));
}

}  // namespace gguftool::lower::detail
