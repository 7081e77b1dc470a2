// Unpack-29 -> standard operators, for any axis, both spellings, UINT8 and UINT32 words and a
// `count` known only at run time (a graph input): code i of a row starts at bit p(i) of the row;
// the two words that hold its bits are gathered along the axis and combined in INT64, then
// shifted (Div by a power of two) and masked (Mod). Grouped codes read their W-bit group index in
// chunks of at most 8 bits the same way, then take digit i mod G in base R (Div, Mod).
//
// Only opset-17 operators are used (Range, Shape, Gather, Min, Div, Mod, Mul, Add, Sub, Cast,
// Reshape), so the same lowering is Unpack's function body for ONNX 1.12.
#include <fmt/format.h>

#include "gguftool/opset29.hpp"
#include "lowerings.hpp"

namespace gguftool::lower::detail {
namespace {

constexpr DataType kI64 = DataType::int64;

struct Rows {
    Value words;       // X as INT64
    Value last;        // index of the last word along the axis (-1 when there are none)
    int64_t axis;      // as given when the rank is unknown (negative), else non-negative
    int64_t trailing;  // dimensions after the axis
    unsigned word_bits;
};

// Per-code values of shape [count] reshaped to broadcast along the axis: [count, 1, ..., 1].
Value along_axis(LoweringBuilder &b, const Rows &r, const Value &v) {
    if (r.trailing == 0) return v;
    std::vector<int64_t> shape(size_t(r.trailing) + 1, 1);
    shape[0] = -1;
    return b.reshape(v, shape);
}

// `width` (<= 8) bits from bit positions `pos` ([count], INT64) of every row, as INT64 codes.
Value read_bits(LoweringBuilder &b, const Rows &r, const Value &pos, unsigned width) {
    const Value wb = b.scalar(kI64, r.word_bits);
    const Value word = b.div(pos, wb);
    const Value offset = b.sub(pos, b.mul(word, wb));
    const Value next = b.op("Min", {b.add(word, b.scalar(kI64, 1)), r.last});
    const Value lo = b.gather(r.words, word, r.axis);
    // Only the low 8 bits of the next word can be needed (offset + width <= word_bits + 7).
    const Value hi = b.op("Mod", {b.gather(r.words, next, r.axis), b.scalar(kI64, 256)});
    const Value both = b.add(lo, b.mul(hi, b.scalar(kI64, double(uint64_t{1} << r.word_bits))));
    const Value pow2 = b.table("int64_powers_of_2", kI64, {63}, [] {
        std::string bytes;
        for (int k = 0; k < 63; ++k) {
            const int64_t v = int64_t{1} << k;
            bytes.append(reinterpret_cast<const char *>(&v), 8);
        }
        return bytes;
    });
    const Value shifted = b.div(both, along_axis(b, r, b.gather(pow2, offset)));
    return b.op("Mod", {shifted, b.scalar(kI64, double(1u << width))});
}

}  // namespace

void lower_unpack(LoweringBuilder &b, const onnx::NodeProto &node, DataType x_type,
                  std::optional<int64_t> x_rank) {
    std::optional<int64_t> bits, radix, group_size;
    int64_t axis = -1;
    for (const onnx::AttributeProto &a : node.attribute()) {
        if (a.type() != onnx::AttributeProto::INT)
            throw Error(fmt::format("attribute '{}' must be an int", a.name()));
        if (a.name() == "bits")
            bits = a.i();
        else if (a.name() == "radix")
            radix = a.i();
        else if (a.name() == "group_size")
            group_size = a.i();
        else if (a.name() == "axis")
            axis = a.i();
        else
            throw Error(fmt::format("unexpected attribute '{}'", a.name()));
    }
    if (node.input_size() != 2 || node.output_size() != 1)
        throw Error("Unpack takes inputs X and count and one output");
    const opset29::Unpack u = opset29::check_unpack(bits, radix, group_size);
    Rows r;
    r.word_bits = opset29::unpack_word_bits(x_type);
    if (x_rank) {
        if (*x_rank < 1) throw Error("input X must have rank at least 1");
        r.axis = opset29::check_unpack_axis(axis, *x_rank);
        r.trailing = *x_rank - 1 - r.axis;
    } else if (axis < 0) {
        r.axis = axis;  // Gather and the shape lookup take the negative axis as it is
        r.trailing = -axis - 1;
    } else {
        throw Error(
            fmt::format("the rank of input X '{}' is not declared and axis {} is not "
                        "negative, so the axis cannot be placed",
                        node.input(0), axis));
    }
    const Value &x = node.input(0), &count = node.input(1);
    r.words = b.cast(x, kI64);
    const Value words_on_axis = b.gather(b.op("Shape", {x}), b.int64s({r.axis}));
    r.last = b.sub(words_on_axis, b.int64s({1}));

    const Value i = b.op("Range", {b.scalar(kI64, 0), count, b.scalar(kI64, 1)});
    Value code;
    if (!u.grouped) {
        code = read_bits(b, r, b.mul(i, b.scalar(kI64, u.group_bits)), u.group_bits);
    } else {
        const Value group = b.div(i, b.scalar(kI64, u.group_size));
        const Value digit = b.sub(i, b.mul(group, b.scalar(kI64, u.group_size)));
        const Value start = b.mul(group, b.scalar(kI64, u.group_bits));
        Value index;
        for (unsigned c = 0; c * 8 < u.group_bits; ++c) {
            const unsigned width = std::min(8u, u.group_bits - 8 * c);
            Value chunk = read_bits(b, r, c ? b.add(start, b.scalar(kI64, 8 * c)) : start, width);
            if (c) chunk = b.mul(chunk, b.scalar(kI64, double(uint64_t{1} << (8 * c))));
            index = c ? b.add(index, chunk) : chunk;
        }
        // digit d of the group index in base R: (index / R^d) mod R
        const Value powers = b.table(fmt::format("int64_powers_of_{}_{}", u.radix, u.group_size),
                                     kI64, {int64_t(u.group_size)}, [&] {
                                         std::string bytes;
                                         int64_t p = 1;
                                         for (uint32_t d = 0; d < u.group_size; ++d) {
                                             bytes.append(reinterpret_cast<const char *>(&p), 8);
                                             if (d + 1 < u.group_size) p *= u.radix;
                                         }
                                         return bytes;
                                     });
        const Value scaled = b.div(index, along_axis(b, r, b.gather(powers, digit)));
        code = b.op("Mod", {scaled, b.scalar(kI64, u.radix)});
    }
    b.op_into(node.output(0), "Cast", {code},
              {LoweringBuilder::attr("to", int64_t(onnx_number(DataType::uint8)))});
}

}  // namespace gguftool::lower::detail
