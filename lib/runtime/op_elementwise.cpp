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

void run_binary(OpContext &ctx, BinaryOp op, Types types) {
    const DeviceTensor &a = ctx.input(0);
    const DeviceTensor &b = ctx.input(1);
    if (a.dtype != b.dtype)
        throw Error(fmt::format("inputs A ({}) and B ({}) must have the same type",
                                dtype_name(a.dtype), dtype_name(b.dtype)));
    check_types(a.dtype, types, "inputs");
    const Shape shape = broadcast(a.shape, b.shape);
    shape_elements(shape, "output");
    DeviceTensor &y = ctx.allocate_output(ctx.output_dtype(), shape);
    ctx.backend().binary(op, a, b, y);
}

void run_add(OpContext &ctx) {
    run_binary(ctx, BinaryOp::add, Types::numeric);
}
void run_sub(OpContext &ctx) {
    run_binary(ctx, BinaryOp::sub, Types::numeric);
}
void run_mul(OpContext &ctx) {
    run_binary(ctx, BinaryOp::mul, Types::numeric);
}
void run_div(OpContext &ctx) {
    run_binary(ctx, BinaryOp::div, Types::numeric);
}

// Mod-10/13: fmod 0 is Python's % (integers only), fmod 1 C's fmod.
void run_mod(OpContext &ctx) {
    const int64_t fmod = ctx.attr_int("fmod", 0);
    if (fmod != 0 && fmod != 1)
        throw Error(fmt::format("attribute 'fmod' must be 0 or 1, not {}", fmod));
    const DataType t = ctx.input(0).dtype;
    if (fmod == 0 && is_floating(t))
        throw Error(fmt::format("{} inputs need attribute 'fmod' 1 (fmod 0 is the integer mod)",
                                dtype_name(t)));
    run_binary(ctx, fmod ? BinaryOp::fmod : BinaryOp::mod, Types::numeric);
}

void run_bitwise_and(OpContext &ctx) {
    run_binary(ctx, BinaryOp::bitwise_and, Types::integers);
}

void run_bit_shift(OpContext &ctx) {
    const std::optional<std::string> direction = ctx.attr_string("direction");
    if (!direction) throw Error("attribute 'direction' is required");
    if (*direction != "LEFT" && *direction != "RIGHT")
        throw Error(fmt::format("attribute 'direction' must be \"LEFT\" or \"RIGHT\", not \"{}\"",
                                *direction));
    run_binary(ctx, *direction == "LEFT" ? BinaryOp::shift_left : BinaryOp::shift_right,
               Types::unsigned_integers);
}

void run_equal(OpContext &ctx) {
    run_binary(ctx, BinaryOp::equal, Types::any);
}

// Greater, Less, GreaterOrEqual, LessOrEqual: numeric inputs of one type, broadcast; BOOL out.
// And, Or: BOOL inputs. Registered kernels (cpu_binary.cpp), named by the operator.
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

// Sqrt, Tanh, Sigmoid, Exp, Reciprocal: float32, float64, float16 and bfloat16 (the halves
// computed in float and rounded once). Registered kernels (cpu_unary.cpp).
void run_float_unary(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (!is_floating(x.dtype))
        throw Error(fmt::format("input must be float, double, float16 or bfloat16, not {}",
                                dtype_name(x.dtype)));
    ctx.allocate_output(x.dtype, x.shape);
    ctx.run_kernel();
}

void run_not(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (x.dtype != DataType::bool_)
        throw Error(fmt::format("input must be bool, not {}", dtype_name(x.dtype)));
    ctx.allocate_output(x.dtype, x.shape);
    ctx.run_kernel();
}

// Expand-8/13: the input broadcast (NumPy rules, both ways) with `shape`, a 1-D INT64 input whose
// dims of 1 keep the input's.
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

// Min-8/12/13: any number of inputs, folded left to right.
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
        const DeviceTensor &t = ctx.input(i);
        const Shape s = broadcast(acc.shape, t.shape);
        DeviceTensor out = i + 1 == ctx.input_count() ? ctx.allocate_output(first.dtype, s)
                                                      : ctx.backend().allocate(first.dtype, s);
        ctx.backend().binary(BinaryOp::min, acc, t, out);
        acc = std::move(out);
    }
}

void run_neg(OpContext &ctx) {
    const DeviceTensor &x = ctx.input(0);
    if (!is_floating(x.dtype) && !(is_integer(x.dtype) && !is_unsigned(x.dtype)))
        throw Error(fmt::format("input must be a signed integer or floating type, not {}",
                                dtype_name(x.dtype)));
    ctx.allocate_output(ctx.output_dtype(), x.shape);
    ctx.run_kernel();
}

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
        {"Add", 7, {13, 14}, 2, 2, 1, 1, {}, run_add},
        {"Sub", 7, {13, 14}, 2, 2, 1, 1, {}, run_sub},
        {"Mul", 7, {13, 14}, 2, 2, 1, 1, {}, run_mul},
        {"Div", 7, {13, 14}, 2, 2, 1, 1, {}, run_div},
        {"Mod", 10, {13}, 2, 2, 1, 1, {"fmod"}, run_mod},
        {"Min", 8, {12, 13}, 1, kMany, 1, 1, {}, run_min},
        {"BitwiseAnd", 18, {}, 2, 2, 1, 1, {}, run_bitwise_and},
        {"BitShift", 11, {}, 2, 2, 1, 1, {"direction"}, run_bit_shift},
        {"Equal", 7, {11, 13, 19}, 2, 2, 1, 1, {}, run_equal, bool_output},
        {"Neg", 6, {13}, 1, 1, 1, 1, {}, run_neg, same_as_input0, /*view=*/false, /*kernel=*/true},
        // Greater-7 and Less-7 took floats, -9 added integers, -13 bfloat16; GreaterOrEqual-16
        // and LessOrEqual-16 added bfloat16.
        {"Greater", 7, {9, 13}, 2, 2, 1, 1, {}, run_compare, bool_output, false, true},
        {"Less", 7, {9, 13}, 2, 2, 1, 1, {}, run_compare, bool_output, false, true},
        {"GreaterOrEqual", 12, {16}, 2, 2, 1, 1, {}, run_compare, bool_output, false, true},
        {"LessOrEqual", 12, {16}, 2, 2, 1, 1, {}, run_compare, bool_output, false, true},
        {"And", 7, {}, 2, 2, 1, 1, {}, run_logical, bool_output, false, true},
        {"Or", 7, {}, 2, 2, 1, 1, {}, run_logical, bool_output, false, true},
        {"Not", 1, {}, 1, 1, 1, 1, {}, run_not, bool_output, false, true},
        // The -6 versions dropped consumed_inputs; -13 added bfloat16.
        {"Sqrt", 6, {13}, 1, 1, 1, 1, {}, run_float_unary, same_as_input0, false, true},
        {"Tanh", 6, {13}, 1, 1, 1, 1, {}, run_float_unary, same_as_input0, false, true},
        {"Sigmoid", 6, {13}, 1, 1, 1, 1, {}, run_float_unary, same_as_input0, false, true},
        {"Exp", 6, {13}, 1, 1, 1, 1, {}, run_float_unary, same_as_input0, false, true},
        {"Reciprocal", 6, {13}, 1, 1, 1, 1, {}, run_float_unary, same_as_input0, false, true},
        {"Expand", 8, {13}, 2, 2, 1, 1, {}, run_expand, same_as_input0, false, true},
        {"Where",
         9,
         {16},
         3,
         3,
         1,
         1,
         {},
         run_where,
         where_dtype,
         /*view=*/false,
         /*kernel=*/true},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
