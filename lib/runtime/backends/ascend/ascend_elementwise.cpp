// Elementwise operators on the device: Cast, the binary operators, Neg and Where, one aclnn call
// each where CANN has the operator for the dtype on AI Core; bit operations on 8-bit integers go
// through INT32 (BitwiseAnd on UINT8/INT8 is an AI CPU kernel: the AI Core dtypes of
// hicann/ops-math's math/bitwise_and/op_api/aclnn_bitwise_and_tensor.cpp) and shifts by known
// amounts become floor divisions and multiplications by powers of two (aclnnRightShift first
// appears in hicann/ops-math v8.5.0, its doc lists no 310P, and its op_api code picks an AI CPU
// kernel outside the 950). DequantizePacked and Unpack are lowered; whether the SoC can run the
// lowering is decided by its last Cast, so their rows are here too.
#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {
namespace {

using DT = DataType;
using Kind = Capability::Kind;

bool empty(const DeviceTensor &t) {
    return t.elements() == 0;
}

unsigned bit_width(DataType t) {
    return unsigned(dtype_size(t) * 8);
}

// The type a shift of `t` is computed in: one whose products of a value and 2^(width-1) do not
// overflow (left shifts), and that FloorDivide takes (it has no UINT16/UINT32).
DataType wide_type(DataType t) {
    return t == DataType::uint8 ? DataType::int32 : DataType::int64;
}

}  // namespace

void AscendBackend::cast(const DeviceTensor &x, DeviceTensor &y) {
    if (empty(y)) return;
    Device &d = *device_;
    const Desc in(d, x), out(d, y);
    if (x.dtype == y.dtype)
        GGUFTOOL_ACLNN(d, InplaceCopy, static_cast<cann::aclTensor *>(out), in);
    else
        GGUFTOOL_ACLNN(d, Cast, in, acl_dtype(y.dtype), out);
}

namespace {

void cast_kernel(AscendBackend &b, const KernelArgs &args) {
    b.cast(*args.inputs[0], args.outputs[0]);
}

void neg(AscendBackend &b, const KernelArgs &args) {
    DeviceTensor &y = args.outputs[0];
    if (empty(y)) return;
    Device &d = b.device();
    const Desc in(d, *args.inputs[0]), out(d, y);
    GGUFTOOL_ACLNN(d, Neg, in, out);
}

void where(AscendBackend &b, const KernelArgs &args) {
    DeviceTensor &out = args.outputs[0];
    if (empty(out)) return;
    Device &d = b.device();
    const Desc c(d, *args.inputs[0]), x(d, *args.inputs[1]), y(d, *args.inputs[2]), o(d, out);
    GGUFTOOL_ACLNN(d, SWhere, c, x, y, o);
}

// The binary kernels of one aclnn call: a and b broadcast to y.
struct Binary {
    Device &d;
    const DeviceTensor &a, &b;
    DeviceTensor &y;
    Desc da{d, a}, db{d, b}, dy{d, y};

    Binary(AscendBackend &backend, const KernelArgs &args)
        : d(backend.device()), a(*args.inputs[0]), b(*args.inputs[1]), y(args.outputs[0]) {}
};

void add(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    const Scalar one(op.d, op.a.dtype, int64_t(1));
    GGUFTOOL_ACLNN(op.d, Add, op.da, op.db, one, op.dy);
}

void sub(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    const Scalar one(op.d, op.a.dtype, int64_t(1));
    GGUFTOOL_ACLNN(op.d, Sub, op.da, op.db, one, op.dy);
}

void mul(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    GGUFTOOL_ACLNN(op.d, Mul, op.da, op.db, op.dy);
}

void div(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    const DataType t = op.a.dtype;
    if (is_floating(t))
        GGUFTOOL_ACLNN(op.d, Div, op.da, op.db, op.dy);
    else if (is_unsigned(t))
        GGUFTOOL_ACLNN(op.d, FloorDivide, op.da, op.db, op.dy);  // floor is truncation for these
    else
        GGUFTOOL_ACLNN(op.d, DivMod, op.da, op.db, cann::kDivModTrunc, op.dy);
}

// Mod with fmod 0 (fmod 1 is refused by the rule).
void mod(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    if (args.attributes.at<int64_t>("fmod") != 0)
        throw Error(fmt::format("the ascend backend has no fmod operator for {}",
                                dtype_name(args.inputs[0]->dtype)));
    const Binary op(backend, args);
    GGUFTOOL_ACLNN(op.d, RemainderTensorTensor, op.da, op.db, op.dy);
}

void min(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    GGUFTOOL_ACLNN(op.d, Minimum, op.da, op.db, op.dy);
}

void equal(AscendBackend &backend, const KernelArgs &args) {
    if (empty(args.outputs[0])) return;
    const Binary op(backend, args);
    GGUFTOOL_ACLNN(op.d, EqTensor, op.da, op.db, op.dy);
}

// a & b. INT16, INT32 and INT64 run as they are; 8-bit integers in INT32 (cast there and back),
// with a known single-valued mask as a scalar and other known masks widened once and kept.
void bitwise_and(AscendBackend &backend, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    if (empty(y)) return;
    Device &d = backend.device();
    const DataType t = a.dtype;
    const bool narrow = t == DataType::uint8 || t == DataType::int8;
    if (!narrow) {
        const Desc da(d, a), db(d, b), dy(d, y);
        GGUFTOOL_ACLNN(d, BitwiseAndTensor, da, db, dy);
        return;
    }
    const auto widen = [t](const Tensor &h) {
        Tensor r = Tensor::allocate(DataType::int32, h.shape());
        for (uint64_t i = 0; i < h.elements(); ++i)
            r.mutable_data_as<int32_t>()[i] =
                t == DataType::uint8 ? h.data_as<uint8_t>()[i] : h.data_as<int8_t>()[i];
        return r;
    };
    const DeviceTensor wa = backend.converted(a, DataType::int32);
    DeviceTensor wy = backend.allocate(DataType::int32, y.shape);
    if (buffer_of(b).shadow && b.elements() == 1 && a.elements() == y.elements()) {
        const Tensor m = widen(backend.host_values(b));
        const Desc da(d, wa), dy(d, wy, a.shape, dense_strides(a.shape), 0);
        const Scalar mask(d, DataType::int32, int64_t(m.data_as<int32_t>()[0]));
        GGUFTOOL_ACLNN(d, BitwiseAndScalar, da, mask, dy);
    } else {
        const DeviceTensor wb = buffer_of(b).shadow ? backend.derived(b, "int32", widen)
                                                    : backend.converted(b, DataType::int32);
        const Desc da(d, wa), db(d, wb), dy(d, wy);
        GGUFTOOL_ACLNN(d, BitwiseAndTensor, da, db, dy);
    }
    backend.cast(wy, y);
}

// a << b and a >> b of unsigned integers (UINT8, UINT16, UINT32). With the amounts known on the
// host (constants, as the lowering writes them): a right shift is a floor division by 2^b, a left
// shift a multiplication by 2^b in a wider type masked back to the width. Right shifts of UINT8
// stay in UINT8 (FloorDivide(s) has it on AI Core); the rest compute in INT32 (from UINT8) or
// INT64. One amount is a scalar (FloorDivides, Muls; 310P has no FloorDivides); several are a
// tensor of factors made once and kept with b. An amount of the width or more gives 0. Amounts
// computed on the device need aclnnRightShift.
void bit_shift(AscendBackend &backend, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    if (empty(y)) return;
    const bool left = args.attributes.at<std::string>("direction") == "LEFT";
    Device &d = backend.device();
    const DataType t = a.dtype;
    const unsigned width = bit_width(t);
    if (!buffer_of(b).shadow) {
        if (left || !d.api().aclnnRightShift || d.family() == SocFamily::p310 ||
            d.family() == SocFamily::t910)
            throw Error(fmt::format(
                "BitShift {} by amounts computed on the device needs aclnnRightShift (CANN 8.5+, "
                "Atlas A2/A3/950); {} with the {} has none",
                left ? "LEFT" : "RIGHT", d.soc(), d.api().layout));
        // RightShift requires its input to have the output's shape: broadcast `a` first.
        DeviceTensor full = a;
        if (a.shape != y.shape) {
            full = backend.allocate(t, y.shape);
            const Desc src(d, a), dst(d, full);
            GGUFTOOL_ACLNN(d, InplaceCopy, static_cast<cann::aclTensor *>(dst), src);
        }
        const Desc da(d, full), db(d, b), dy(d, y);
        GGUFTOOL_ACLNN(d, RightShift, da, db, dy);
        return;
    }
    if (t == DataType::uint64)
        throw Error(
            fmt::format("BitShift of uint64 on {} needs aclnnRightShift/LeftShift", d.soc()));
    const Tensor amounts = backend.host_values(b);
    std::vector<unsigned> n(amounts.elements());
    for (size_t i = 0; i < n.size(); ++i) {
        const uint64_t k = t == DataType::uint8    ? amounts.data_as<uint8_t>()[i]
                           : t == DataType::uint16 ? amounts.data_as<uint16_t>()[i]
                                                   : amounts.data_as<uint32_t>()[i];
        n[i] = unsigned(std::min<uint64_t>(k, width));
    }
    const bool in_uint8 = !left && t == DataType::uint8 &&
                          std::all_of(n.begin(), n.end(), [](unsigned k) { return k < 8; });
    const DataType w = in_uint8 ? t : wide_type(t);
    // The factor for amount k: 2^k; at the width, 2^width when dividing (every quotient is 0)
    // and 0 when multiplying.
    const auto factor = [&](unsigned k) -> int64_t {
        return left && k >= width ? 0 : int64_t(1) << k;
    };
    const DeviceTensor wa = backend.converted(a, w);
    DeviceTensor wy = w == t ? y : backend.allocate(w, y.shape);
    if (n.size() == 1 && a.elements() == y.elements() && (left || d.family() != SocFamily::p310)) {
        const Desc da(d, wa), dy(d, wy, a.shape, dense_strides(a.shape), 0);
        const Scalar f(d, w, factor(n[0]));
        if (left)
            GGUFTOOL_ACLNN(d, Muls, da, f, dy);
        else
            GGUFTOOL_ACLNN(d, FloorDivides, da, f, dy);
    } else {
        const DeviceTensor factors =
            backend.derived(b, fmt::format("shift-{}-{}", left ? "left" : "right", dtype_name(w)),
                            [&](const Tensor &) {
                                Tensor p = Tensor::allocate(w, amounts.shape());
                                for (size_t i = 0; i < n.size(); ++i) {
                                    if (w == DataType::uint8)
                                        p.mutable_data_as<uint8_t>()[i] = uint8_t(factor(n[i]));
                                    else if (w == DataType::int32)
                                        p.mutable_data_as<int32_t>()[i] = int32_t(factor(n[i]));
                                    else
                                        p.mutable_data_as<int64_t>()[i] = factor(n[i]);
                                }
                                return p;
                            });
        const Desc da(d, wa), df(d, factors), dy(d, wy);
        if (left)
            GGUFTOOL_ACLNN(d, Mul, da, df, dy);
        else
            GGUFTOOL_ACLNN(d, FloorDivide, da, df, dy);
    }
    if (w == t) return;
    if (left) {  // keep the low `width` bits; the narrowing Cast is then exact
        DeviceTensor masked = backend.allocate(w, y.shape);
        const Desc dw(d, wy), dm(d, masked);
        const Scalar mask(d, w, int64_t((uint64_t(1) << width) - 1));
        GGUFTOOL_ACLNN(d, BitwiseAndScalar, dw, mask, dm);
        wy = masked;
    }
    backend.cast(wy, y);
}

// DequantizePacked and Unpack are lowered to standard operators; the output Cast decides what the
// SoC must have.
std::string lowered_refusal(const OpQuery &q, const Device &d) {
    const DT out = q.outputs.empty() ? DT::undefined : q.outputs[0];
    if (out != DT::bfloat16 || has_bf16(d.family())) return {};
    return fmt::format(
        "{}{} to bfloat16: {} has no bfloat16 Cast (CANN's docs list "
        "none for its SoC family)",
        q.op_type, q.format ? fmt::format(" ({})", type_name(*q.format)) : "", d.soc());
}

std::string fmod_refusal(const OpQuery &q, const Device &d) {
    if (q.attributes.get_int("fmod") != 1) return {};
    return fmt::format("Mod with fmod=1 is not supported on {}", d.soc());
}

}  // namespace

std::span<const AscendKernelRow> elementwise_kernels() {
    const AscendRule lowered = {.kind = Kind::lowered, .refuse = lowered_refusal};
    const AscendRule add_sub_mul = {
        .dtypes = {{0, arithmetic,
                    "aclnnAdd, aclnnSub and aclnnMul take no unsigned type wider than uint8"}},
        .needs = {{"aclnnAdd"}, {"aclnnSub"}, {"aclnnMul"}},
    };
    static const AscendKernelRow rows[] = {
        {"DequantizePacked", nullptr, lowered},
        {"Unpack", nullptr, lowered},
        {"Cast",
         cast_kernel,
         {.dtypes = {{0, storable, "aclnnCast"}, {kOutput, storable, "aclnnCast"}},
          .needs = {{"aclnnCast"}, {"aclnnInplaceCopy"}}}},
        {"Add", add, add_sub_mul},
        {"Sub", sub, add_sub_mul},
        {"Mul", mul, add_sub_mul},
        {"Div",
         div,
         {.dtypes = {{0, arithmetic, "aclnnDiv, aclnnFloorDivide and aclnnDivMod"}},
          .needs = {{"aclnnDiv"}, {"aclnnFloorDivide"}, {"aclnnDivMod"}}}},
        {"Mod",
         mod,
         {.refuse = fmod_refusal,
          .dtypes = {{0,
                      [](DT t, SocFamily f) {
                          return in(t, {DT::int32, DT::int64, DT::float16, DT::float32,
                                        DT::float64}) ||
                                 (t == DT::bfloat16 && has_bf16(f));
                      },
                      "aclnnRemainderTensorTensor"}},
          .needs = {{"aclnnRemainderTensorTensor"}}}},
        {"Min", min, {.dtypes = {{0, arithmetic, "aclnnMinimum"}}, .needs = {{"aclnnMinimum"}}}},
        {"Equal",
         equal,
         {.dtypes = {{0, arithmetic_or_bool, "aclnnEqTensor"}}, .needs = {{"aclnnEqTensor"}}}},
        {"BitwiseAnd",
         bitwise_and,
         {.dtypes = {{0,
                      [](DT t, SocFamily) {
                          return in(t, {DT::int8, DT::uint8, DT::int16, DT::uint16, DT::int32,
                                        DT::int64, DT::bool_});
                      },
                      "aclnnBitwiseAndTensor"}},
          .needs = {{"aclnnBitwiseAndTensor"}, {"aclnnBitwiseAndScalar"}, {"aclnnCast"}}}},
        {"BitShift",
         bit_shift,
         {.dtypes = {{0,
                      [](DT t, SocFamily) {
                          return in(t, {DT::uint8, DT::uint16, DT::uint32});
                      },
                      "shifts run as FloorDivide and Mul by powers of two; uint64 has no exact "
                      "path"}},
          .needs = {{"aclnnFloorDivide"},
                    {"aclnnMul"},
                    {"aclnnBitwiseAndScalar"},
                    {"aclnnCast"},
                    {"aclnnFloorDivides",
                     [](const Cann &, SocFamily f) { return f != SocFamily::p310; }}}}},
        {"Neg",
         neg,
         {.dtypes = {{0, [](DT t, SocFamily f) { return arithmetic(t, f) && t != DT::uint8; },
                      "aclnnNeg"}},
          .needs = {{"aclnnNeg"}}}},
        {"Where", where, {.dtypes = {{1, storable, "aclnnSWhere"}}, .needs = {{"aclnnSWhere"}}}},
    };
    return rows;
}

}  // namespace gguftool::runtime::ascend
