// The elementwise operators: Add, Sub, Mul, Div, Mod, Min, BitwiseAnd, BitShift, Equal, Greater,
// Less, GreaterOrEqual, LessOrEqual, And, Or (NumPy broadcasting of two inputs, Min of any
// number), Neg, Not, Sqrt, Tanh, Sigmoid, Exp, Reciprocal (one input), Where (three inputs) and
// Expand (an input broadcast to a shape): type checks and output shapes.
#include <fmt/format.h>

#include "op.hpp"

namespace gguftool::runtime::detail {

Shape broadcast(const Shape &a, const Shape &b) {
    const size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1)
            throw Error(fmt::format("shapes {} and {} cannot be broadcast together",
                                    shape_string(a), shape_string(b)));
        out[i] = da == 1 ? db : da;
    }
    return out;
}

namespace {

// The element types an operator takes (as ONNX lists them, within the runtime's types).
enum class Types { numeric, integers, unsigned_integers, any };

void check_types(DataType t, Types types, const char *what) {
    switch (types) {
        case Types::numeric:
            if (is_integer(t) || is_floating(t)) return;
            throw Error(fmt::format("{} must be numeric, not {}", what, dtype_name(t)));
        case Types::integers:
            if (is_integer(t)) return;
            throw Error(fmt::format("{} must be integers, not {}", what, dtype_name(t)));
        case Types::unsigned_integers:
            if (is_unsigned(t)) return;
            throw Error(fmt::format("{} must be uint8, uint16, uint32 or uint64, not {}", what,
                                    dtype_name(t)));
        case Types::any:
            return;
    }
}

// The checks of a binary operator: a and b of one type among `types`, broadcast (NumPy rules).
void run_binary(OpContext &ctx, Types types, const Attributes &attributes = {}) {
    const DeviceTensor &a = ctx.input(0);
    const DeviceTensor &b = ctx.input(1);
    if (a.dtype != b.dtype)
        throw Error(fmt::format("inputs A ({}) and B ({}) must have the same type",
                                dtype_name(a.dtype), dtype_name(b.dtype)));
    check_types(a.dtype, types, "inputs");
    const Shape shape = broadcast(a.shape, b.shape);
    shape_elements(shape, "output");
    ctx.allocate_output(ctx.output_dtype(), shape);
    ctx.run_kernel(attributes);
}

// Add, Sub, Mul, Div. Kernel: inputs a and b of one numeric type, broadcast (NumPy rules) to y
// of that type; integers wrap modulo 2^n, Div's truncate toward zero (the minimum divided by -1
// wraps; an integer division by 0 is an error); float16 and bfloat16 compute in float and round
// once.
void run_arithmetic(OpContext &ctx) {
    run_binary(ctx, Types::numeric);
}

// Mod-10/13: fmod 0 is Python's % (integers only), fmod 1 C's fmod. Kernel: a and b numeric,
// broadcast to y; attribute "fmod" (0: the remainder with the divisor's sign; 1: with the
// dividend's, exact for integers); an integer modulo by 0 is an error.
void run_mod(OpContext &ctx) {
    const int64_t fmod = ctx.attr_int("fmod", 0);
    if (fmod != 0 && fmod != 1)
        throw Error(fmt::format("attribute 'fmod' must be 0 or 1, not {}", fmod));
    const DataType t = ctx.input(0).dtype;
    if (fmod == 0 && is_floating(t))
        throw Error(fmt::format("{} inputs need attribute 'fmod' 1 (fmod 0 is the integer mod)",
                                dtype_name(t)));
    Attributes attributes;
    attributes.set("fmod", fmod);
    run_binary(ctx, Types::numeric, attributes);
}

// BitwiseAnd-18. Kernel: a and b integers, broadcast to y.
void run_bitwise_and(OpContext &ctx) {
    run_binary(ctx, Types::integers);
}

// BitShift-11. Kernel: a and b unsigned integers, broadcast to y; attribute "direction" ("LEFT"
// or "RIGHT"); shifting by the bit width or more gives 0.
void run_bit_shift(OpContext &ctx) {
    const std::optional<std::string> direction = ctx.attr_string("direction");
    if (!direction) throw Error("attribute 'direction' is required");
    if (*direction != "LEFT" && *direction != "RIGHT")
        throw Error(fmt::format("attribute 'direction' must be \"LEFT\" or \"RIGHT\", not \"{}\"",
                                *direction));
    Attributes attributes;
    attributes.set("direction", *direction);
    run_binary(ctx, Types::unsigned_integers, attributes);
}

// Equal. Kernel: a and b of one type (any), broadcast to the BOOL y; floats compare as IEEE
// values (NaN unequal, -0 == +0).
void run_equal(OpContext &ctx) {
    run_binary(ctx, Types::any);
}

// Greater, Less, GreaterOrEqual, LessOrEqual. Kernel: a and b of one numeric type, broadcast to
// the BOOL y (NaN compares false). And, Or. Kernel: a and b BOOL, broadcast to the BOOL y.
void run_comparison(OpContext &ctx, bool logical) {
    const DeviceTensor &a = ctx.input(0);
    const DeviceTensor &b = ctx.input(1);
    if (a.dtype != b.dtype)
        throw Error(fmt::format("inputs A ({}) and B ({}) must have the same type",
                                dtype_name(a.dtype), dtype_name(b.dtype)));
    if (logical && a.dtype != DataType::bool_)
        throw Error(fmt::format("inputs must be bool, not {}", dtype_name(a.dtype)));
    if (!logical) check_types(a.dtype, Types::numeric, "inputs");
    const Shape shape = broadcast(a.shape, b.shape);
    shape_elements(shape, "output");
    ctx.allocate_output(DataType::bool_, shape);
    ctx.run_kernel();
}
void run_compare(OpContext &ctx) {
    run_comparison(ctx, false);
}
void run_logical(OpContext &ctx) {
    run_comparison(ctx, true);
}

// Sqrt, Tanh, Sigmoid, Exp, Reciprocal. Kernel: x float, double, float16 or bfloat16; y of its
// type and shape.
void run_float_unary(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (!is_floating(x.dtype))
        throw Error(fmt::format("input must be float, double, float16 or bfloat16, not {}",
                                dtype_name(x.dtype)));
    ctx.allocate_output(x.dtype, x.shape);
    ctx.run_kernel();
}

// Not. Kernel: x BOOL (any non-zero byte is true); y BOOL of its shape.
void run_not(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (x.dtype != DataType::bool_)
        throw Error(fmt::format("input must be bool, not {}", dtype_name(x.dtype)));
    ctx.allocate_output(x.dtype, x.shape);
    ctx.run_kernel();
}

// Expand-8/13: the input broadcast (NumPy rules, both ways) with `shape`, a 1-D INT64 input whose
// dims of 1 keep the input's. Kernel: input 0 broadcast to y (of its type); input 1 is the shape.
void run_expand(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    const std::vector<int64_t> target = ctx.index_list(1, "shape", false, false);
    for (const int64_t d : target)
        if (d < 0)
            throw Error(
                fmt::format("input shape {} has negative dimension {}", shape_string(target), d));
    const Shape shape = broadcast(x.shape, target);
    shape_elements(shape, "output");
    ctx.allocate_output(x.dtype, shape);
    ctx.run_kernel();
}

// Min-8/12/13: any number of inputs, folded left to right. Kernel: two inputs a and b of one
// numeric type, broadcast to y; NaN when either is NaN (that NaN), -0 below +0.
void run_min(OpContext &ctx) {
    const DeviceTensor &first = ctx.input(0);
    check_types(first.dtype, Types::numeric, "inputs");
    Shape shape = first.shape;
    for (size_t i = 1; i < ctx.input_count(); ++i) {
        const DeviceTensor &t = ctx.input(i);
        if (t.dtype != first.dtype)
            throw Error(fmt::format("input {} is {} but input 0 is {}", i, dtype_name(t.dtype),
                                    dtype_name(first.dtype)));
        shape = broadcast(shape, t.shape);
    }
    shape_elements(shape, "output");
    if (ctx.input_count() == 1) return ctx.set_output(0, first);
    DeviceTensor acc = first;
    for (size_t i = 1; i < ctx.input_count(); ++i) {
        const DeviceTensor *pair[] = {&acc, &ctx.input(i)};
        const Shape s = broadcast(acc.shape, pair[1]->shape);
        DeviceTensor out = i + 1 == ctx.input_count() ? ctx.allocate_output(first.dtype, s)
                                                      : ctx.backend().allocate(first.dtype, s);
        ctx.run_kernel(pair, std::span(&out, 1));
        acc = std::move(out);
    }
}

// Neg. Kernel: x a signed integer or floating type; y of its type and shape (integers wrap,
// floats flip the sign bit).
void run_neg(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (!is_floating(x.dtype) && !(is_integer(x.dtype) && !is_unsigned(x.dtype)))
        throw Error(fmt::format("input must be a signed integer or floating type, not {}",
                                dtype_name(x.dtype)));
    ctx.allocate_output(ctx.output_dtype(), x.shape);
    ctx.run_kernel();
}

// Where-9/16. Kernel: condition BOOL, x and y of one type, the three broadcast to the output
// (of x's type), which copies the selected element.
void run_where(OpContext &ctx) {
    const DeviceTensor &c = ctx.input(0);
    const DeviceTensor &x = ctx.input(1);
    const DeviceTensor &y = ctx.input(2);
    if (c.dtype != DataType::bool_)
        throw Error(fmt::format("input condition must be bool, not {}", dtype_name(c.dtype)));
    if (x.dtype != y.dtype)
        throw Error(fmt::format("inputs X ({}) and Y ({}) must have the same type",
                                dtype_name(x.dtype), dtype_name(y.dtype)));
    const Shape shape = broadcast(broadcast(c.shape, x.shape), y.shape);
    shape_elements(shape, "output");
    ctx.allocate_output(ctx.output_dtype(), shape);
    ctx.run_kernel();
}

// Where's output has the type of x (input 1).
DataType where_dtype(const onnx::NodeProto &, std::span<const DataType> in) {
    return in.size() > 1 ? in[1] : DataType::undefined;
}

}  // namespace

std::span<const OpDef> elementwise_ops() {
    static const std::vector<OpDef> rows = {
        {.op_type = "Add",
         .since = 7,
         .same_as_later = {13, 14},
         .inputs = {2, 2},
         .run = run_arithmetic},
        {.op_type = "Sub",
         .since = 7,
         .same_as_later = {13, 14},
         .inputs = {2, 2},
         .run = run_arithmetic},
        {.op_type = "Mul",
         .since = 7,
         .same_as_later = {13, 14},
         .inputs = {2, 2},
         .run = run_arithmetic},
        {.op_type = "Div",
         .since = 7,
         .same_as_later = {13, 14},
         .inputs = {2, 2},
         .run = run_arithmetic},
        {.op_type = "Mod",
         .since = 10,
         .same_as_later = {13},
         .inputs = {2, 2},
         .attributes = {"fmod"},
         .run = run_mod},
        {.op_type = "Min",
         .since = 8,
         .same_as_later = {12, 13},
         .inputs = {1, kMany},
         .run = run_min},
        {.op_type = "BitwiseAnd", .since = 18, .inputs = {2, 2}, .run = run_bitwise_and},
        {.op_type = "BitShift",
         .since = 11,
         .inputs = {2, 2},
         .attributes = {"direction"},
         .run = run_bit_shift},
        {.op_type = "Equal",
         .since = 7,
         .same_as_later = {11, 13, 19},
         .inputs = {2, 2},
         .run = run_equal,
         .output_dtype = bool_output},
        {.op_type = "Neg", .since = 6, .same_as_later = {13}, .run = run_neg},
        // Greater-7 and Less-7 took floats, -9 added integers, -13 bfloat16; GreaterOrEqual-16
        // and LessOrEqual-16 added bfloat16.
        {.op_type = "Greater",
         .since = 7,
         .same_as_later = {9, 13},
         .inputs = {2, 2},
         .run = run_compare,
         .output_dtype = bool_output},
        {.op_type = "Less",
         .since = 7,
         .same_as_later = {9, 13},
         .inputs = {2, 2},
         .run = run_compare,
         .output_dtype = bool_output},
        {.op_type = "GreaterOrEqual",
         .since = 12,
         .same_as_later = {16},
         .inputs = {2, 2},
         .run = run_compare,
         .output_dtype = bool_output},
        {.op_type = "LessOrEqual",
         .since = 12,
         .same_as_later = {16},
         .inputs = {2, 2},
         .run = run_compare,
         .output_dtype = bool_output},
        {.op_type = "And",
         .since = 7,
         .inputs = {2, 2},
         .run = run_logical,
         .output_dtype = bool_output},
        {.op_type = "Or",
         .since = 7,
         .inputs = {2, 2},
         .run = run_logical,
         .output_dtype = bool_output},
        {.op_type = "Not", .since = 1, .run = run_not, .output_dtype = bool_output},
        // The -6 versions dropped consumed_inputs; -13 added bfloat16.
        {.op_type = "Sqrt", .since = 6, .same_as_later = {13}, .run = run_float_unary},
        {.op_type = "Tanh", .since = 6, .same_as_later = {13}, .run = run_float_unary},
        {.op_type = "Sigmoid", .since = 6, .same_as_later = {13}, .run = run_float_unary},
        {.op_type = "Exp", .since = 6, .same_as_later = {13}, .run = run_float_unary},
        {.op_type = "Reciprocal", .since = 6, .same_as_later = {13}, .run = run_float_unary},
        {.op_type = "Expand",
         .since = 8,
         .same_as_later = {13},
         .inputs = {2, 2},
         .run = run_expand},
        {.op_type = "Where",
         .since = 9,
         .same_as_later = {16},
         .inputs = {3, 3},
         .run = run_where,
         .output_dtype = where_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
