// Elementwise operators on the device: Cast, the binary operators, Neg and Where, one aclnn call
// each where CANN has the operator for the dtype on AI Core; bit operations on 8-bit integers go
// through INT32 (BitwiseAnd on UINT8/INT8 is an AI CPU kernel, CANN-FACTS.md 2.2) and shifts by
// known amounts become floor divisions and multiplications by powers of two (RightShift is CANN
// 8.5's, absent on 310P, and an AI CPU kernel outside the 950).
#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {
namespace {

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

void AscendBackend::neg(const DeviceTensor &x, DeviceTensor &y) {
    if (empty(y)) return;
    const Desc in(*device_, x), out(*device_, y);
    GGUFTOOL_ACLNN(*device_, Neg, in, out);
}

void AscendBackend::where(const DeviceTensor &condition, const DeviceTensor &x,
                          const DeviceTensor &y, DeviceTensor &out) {
    if (empty(out)) return;
    Device &d = *device_;
    const Desc c(d, condition), a(d, x), b(d, y), o(d, out);
    GGUFTOOL_ACLNN(d, SWhere, c, a, b, o);
}

void AscendBackend::binary(BinaryOp op, const DeviceTensor &a, const DeviceTensor &b,
                           DeviceTensor &y) {
    if (empty(y)) return;
    Device &d = *device_;
    const DataType t = a.dtype;
    switch (op) {
        case BinaryOp::bitwise_and:
            bitwise_and(a, b, y);
            return;
        case BinaryOp::shift_left:
            shift(true, a, b, y);
            return;
        case BinaryOp::shift_right:
            shift(false, a, b, y);
            return;
        default:
            break;
    }
    const Desc da(d, a), db(d, b), dy(d, y);
    switch (op) {
        case BinaryOp::add: {
            const Scalar one(d, t, int64_t(1));
            GGUFTOOL_ACLNN(d, Add, da, db, one, dy);
            return;
        }
        case BinaryOp::sub: {
            const Scalar one(d, t, int64_t(1));
            GGUFTOOL_ACLNN(d, Sub, da, db, one, dy);
            return;
        }
        case BinaryOp::mul:
            GGUFTOOL_ACLNN(d, Mul, da, db, dy);
            return;
        case BinaryOp::div:
            if (is_floating(t))
                GGUFTOOL_ACLNN(d, Div, da, db, dy);
            else if (is_unsigned(t))
                GGUFTOOL_ACLNN(d, FloorDivide, da, db, dy);  // floor is truncation for these
            else
                GGUFTOOL_ACLNN(d, DivMod, da, db, cann::kDivModTrunc, dy);
            return;
        case BinaryOp::mod:
            GGUFTOOL_ACLNN(d, RemainderTensorTensor, da, db, dy);
            return;
        case BinaryOp::min:
            GGUFTOOL_ACLNN(d, Minimum, da, db, dy);
            return;
        case BinaryOp::equal:
            GGUFTOOL_ACLNN(d, EqTensor, da, db, dy);
            return;
        default:
            throw Error(fmt::format("the ascend backend has no {} operator for {}",
                                    op == BinaryOp::fmod ? "fmod" : "such", dtype_name(t)));
    }
}

// a & b. INT16, INT32 and INT64 run as they are; 8-bit integers in INT32 (cast there and back),
// with a known single-valued mask as a scalar and other known masks widened once and kept.
void AscendBackend::bitwise_and(const DeviceTensor &a, const DeviceTensor &b, DeviceTensor &y) {
    Device &d = *device_;
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
    const DeviceTensor wa = converted(a, DataType::int32);
    DeviceTensor wy = allocate(DataType::int32, y.shape);
    if (buffer_of(b).shadow && b.elements() == 1 && a.elements() == y.elements()) {
        const Tensor m = widen(host_values(b));
        const Desc da(d, wa), dy(d, wy, a.shape, dense_strides(a.shape), 0);
        const Scalar mask(d, DataType::int32, int64_t(m.data_as<int32_t>()[0]));
        GGUFTOOL_ACLNN(d, BitwiseAndScalar, da, mask, dy);
    } else {
        const DeviceTensor wb =
            buffer_of(b).shadow ? derived(b, "int32", widen) : converted(b, DataType::int32);
        const Desc da(d, wa), db(d, wb), dy(d, wy);
        GGUFTOOL_ACLNN(d, BitwiseAndTensor, da, db, dy);
    }
    cast(wy, y);
}

// a << b and a >> b of unsigned integers (UINT8, UINT16, UINT32). With the amounts known on the
// host (constants, as the lowering writes them): a right shift is a floor division by 2^b, a left
// shift a multiplication by 2^b in a wider type masked back to the width. Right shifts of UINT8
// stay in UINT8 (FloorDivide(s) has it on AI Core); the rest compute in INT32 (from UINT8) or
// INT64. One amount is a scalar (FloorDivides, Muls; 310P has no FloorDivides); several are a
// tensor of factors made once and kept with b. An amount of the width or more gives 0. Amounts
// computed on the device need aclnnRightShift.
void AscendBackend::shift(bool left, const DeviceTensor &a, const DeviceTensor &b,
                          DeviceTensor &y) {
    Device &d = *device_;
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
            full = allocate(t, y.shape);
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
    const Tensor amounts = host_values(b);
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
    const DeviceTensor wa = converted(a, w);
    DeviceTensor wy = w == t ? y : allocate(w, y.shape);
    if (n.size() == 1 && a.elements() == y.elements() && (left || d.family() != SocFamily::p310)) {
        const Desc da(d, wa), dy(d, wy, a.shape, dense_strides(a.shape), 0);
        const Scalar f(d, w, factor(n[0]));
        if (left)
            GGUFTOOL_ACLNN(d, Muls, da, f, dy);
        else
            GGUFTOOL_ACLNN(d, FloorDivides, da, f, dy);
    } else {
        const DeviceTensor factors =
            derived(b, fmt::format("shift-{}-{}", left ? "left" : "right", dtype_name(w)),
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
        DeviceTensor masked = allocate(w, y.shape);
        const Desc dw(d, wy), dm(d, masked);
        const Scalar mask(d, w, int64_t((uint64_t(1) << width) - 1));
        GGUFTOOL_ACLNN(d, BitwiseAndScalar, dw, mask, dm);
        wy = masked;
    }
    cast(wy, y);
}

}  // namespace gguftool::runtime::ascend
