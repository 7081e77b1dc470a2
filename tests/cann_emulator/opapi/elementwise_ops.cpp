// The elementwise aclnn operators (ops-math; libopapi.so in CANN 8.1, libopapi_math.so in 8.5):
// Add, Adds, Sub, Mul, Muls, Div, DivMod, FloorDivide, FloorDivides, RemainderTensorTensor,
// BitwiseAndTensor, BitwiseAndScalar, EqTensor, Minimum, Neg, Clamp, SWhere. What each computes:
// opapi/operator_rules.hpp.
#include "core/abi_declarations.hpp"
#include "core/errors.hpp"
#include "opapi/arithmetic.hpp"
#include "opapi/kernels.hpp"
#include "opapi/phase_one.hpp"

GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_EMU_DECLARE_OPERATOR)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace rules = gguftool::cann_emulator::rules;
namespace arith = gguftool::cann_emulator::arith;

namespace {

// self (op) other -> out: dtypes, the promoted type (one `compute` has; integers and BOOL as FLOAT
// when `to_float`), castable to out, and the broadcast.
aclDataType binary_checks(PhaseOne &p, const View &a, const View &b, const View &o,
                          const rules::PerFamily &in, const rules::PerFamily &out_types,
                          DtypeSet compute, bool to_float = false) {
    p.dtype_in(a.dtype, "self", in);
    p.dtype_in(b.dtype, "other", in);
    p.dtype_in(o.dtype, "out", out_types);
    aclDataType t = promote_types(a.dtype, b.dtype);
    if (to_float && t != ACL_DT_UNDEFINED && !is_floating(t)) t = ACL_FLOAT;
    t = p.promote(t, "self and other", compute);
    p.castable(t, o.dtype);
    p.broadcasts_to({{&a, "self"}, {&b, "other"}}, o);
    return t;
}

// self (op) scalar -> out, out's shape self's.
aclDataType scalar_checks(PhaseOne &p, const View &a, const ScalarValue &s, const char *name,
                          const View &o, const rules::PerFamily &in, DtypeSet scalar_types,
                          const rules::PerFamily &out_types, DtypeSet compute) {
    p.dtype_in(a.dtype, "self", in);
    p.dtype_in(s.dtype, name, scalar_types);
    p.dtype_in(o.dtype, "out", out_types);
    const aclDataType t =
        p.promote(promote_tensor_scalar(a.dtype, s.dtype), str("self and ", name), compute);
    p.castable(t, o.dtype);
    p.same_shape(a, "self", o, "out");
    return t;
}

// Add's and Sub's alpha must convert to the promoted type (integers take no floating alpha).
void check_alpha(PhaseOne &p, const ScalarValue &alpha, aclDataType promoted) {
    if (!p) return;
    const bool ok = promoted == ACL_BOOL ? alpha.dtype == ACL_BOOL || is_integral(alpha.dtype)
                                         : can_cast(alpha.dtype, promoted);
    p.check(ok, str("alpha's dtype ", dtype_name(alpha.dtype),
                    " cannot be cast to the promoted type ", dtype_name(promoted)));
}

bool add_mul_on_aicore(const PhaseOne &p, aclDataType promoted) {
    return rules::kAddMulAicore.on(p.family()).contains(promoted);
}

// out = self + sign * alpha * other, for Add and Sub.
aclnnStatus add_or_sub(const char *op, bool subtract, const aclTensor *self, const aclTensor *other,
                       const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize,
                       aclOpExecutor **executor) {
    PhaseOne p(op, workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other");
    const ScalarValue s = p.scalar(alpha, "alpha");
    const View o = p.tensor(out, "out", true);
    const DtypeSet types = rules::kArithmetic.on(p.family());
    const aclDataType t = binary_checks(p, a, b, o, rules::kArithmetic, rules::kArithmetic, types);
    check_alpha(p, s, t);
    return p.finish(
        contiguous_copies({&a, &b, &o}), add_mul_on_aicore(p, t),
        binary_kernel(a, b, o, t, [s, subtract](auto tag, auto x, auto y, std::string &) {
            using N = typename decltype(tag)::type;
            const auto scaled = arith::mul(scalar_as<N>(s), y);
            return subtract ? arith::sub(x, scaled) : arith::add(x, scaled);
        }));
}

}  // namespace

extern "C" {

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                     const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    return add_or_sub("aclnnAdd", false, self, other, alpha, out, workspaceSize, executor);
}
GGUFTOOL_EMU_PHASE_TWO(Add)

aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                     const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    return add_or_sub("aclnnSub", true, self, other, alpha, out, workspaceSize, executor);
}
GGUFTOOL_EMU_PHASE_TWO(Sub)

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                      const aclScalar *alpha, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnAdds", workspaceSize, executor);
    const View a = p.tensor(self, "self");
    const ScalarValue s = p.scalar(other, "other"), al = p.scalar(alpha, "alpha");
    const View o = p.tensor(out, "out", true);
    const DtypeSet types = rules::kArithmetic.on(p.family());
    aclDataType t =
        scalar_checks(p, a, s, "other", o, rules::kArithmetic, types, rules::kArithmetic, types);
    // Adds' own rule: an integral tensor with a DOUBLE scalar into a FLOAT out computes in FLOAT.
    if (!is_floating(a.dtype) && s.dtype == ACL_DOUBLE && o.dtype == ACL_FLOAT) t = ACL_FLOAT;
    check_alpha(p, al, t);
    return p.finish(contiguous_copies({&a, &o}), add_mul_on_aicore(p, t),
                    unary_kernel(a, o, t, [s, al](auto tag, auto x, std::string &) {
                        using N = typename decltype(tag)::type;
                        return arith::add(x, arith::mul(scalar_as<N>(al), scalar_as<N>(s)));
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Adds)

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnMul", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    const DtypeSet types = rules::kArithmetic.on(p.family());
    const aclDataType t = binary_checks(p, a, b, o, rules::kArithmetic, rules::kArithmetic, types);
    return p.finish(contiguous_copies({&a, &b, &o}), add_mul_on_aicore(p, t),
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) {
                        return arith::mul(x, y);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Mul)

aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnMuls", workspaceSize, executor);
    const View a = p.tensor(self, "self");
    const ScalarValue s = p.scalar(other, "other");
    const View o = p.tensor(out, "out", true);
    const DtypeSet types = rules::kArithmetic.on(p.family());
    const aclDataType t =
        scalar_checks(p, a, s, "other", o, rules::kArithmetic, types, rules::kArithmetic, types);
    return p.finish(contiguous_copies({&a, &o}), add_mul_on_aicore(p, t),
                    unary_kernel(a, o, t, [s](auto tag, auto x, std::string &) {
                        using N = typename decltype(tag)::type;
                        return arith::mul(x, scalar_as<N>(s));
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Muls)

aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnDiv", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    const DtypeSet types = rules::kArithmetic.on(p.family());
    const aclDataType t =
        binary_checks(p, a, b, o, rules::kArithmetic, rules::kArithmetic, types, true);
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) {
                        if constexpr (std::is_floating_point_v<decltype(x)>)
                            return decltype(x)(x / y);
                        else
                            return x;  // not reached: integers divide as FLOAT
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Div)

aclnnStatus aclnnDivModGetWorkspaceSize(const aclTensor *self, const aclTensor *other, int mode,
                                        aclTensor *out, uint64_t *workspaceSize,
                                        aclOpExecutor **executor) {
    PhaseOne p("aclnnDivMod", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    p.check(mode >= 0 && mode <= kDivModFloor,
            str("mode ", mode, " is not 0 (true division), 1 (truncate) or 2 (floor)"));
    const DtypeSet types = rules::kArithmetic.on(p.family());
    const aclDataType t =
        binary_checks(p, a, b, o, rules::kArithmetic, rules::kArithmetic, types, mode == 0);
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [mode](auto, auto x, auto y, std::string &error) {
                        using C = decltype(x);
                        if constexpr (std::is_floating_point_v<C>)
                            if (mode == 0) return C(x / y);
                        return arith::divide(x, y, mode == kDivModFloor, error);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(DivMod)

aclnnStatus aclnnFloorDivideGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                             aclTensor *out, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    PhaseOne p("aclnnFloorDivide", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    const aclDataType t = binary_checks(p, a, b, o, rules::kFloorDivideIn, rules::kFloorDivideOut,
                                        rules::kFloorDivideIn.on(p.family()));
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &error) {
                        return arith::divide(x, y, true, error);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(FloorDivide)

aclnnStatus aclnnFloorDividesGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                              aclTensor *out, uint64_t *workspaceSize,
                                              aclOpExecutor **executor) {
    PhaseOne p("aclnnFloorDivides", workspaceSize, executor);
    const View a = p.tensor(self, "self");
    const ScalarValue s = p.scalar(other, "other");
    const View o = p.tensor(out, "out", true);
    p.available(rules::kFloorDivides);
    const DtypeSet types = rules::kFloorDivides.on(p.family());
    const aclDataType t = scalar_checks(p, a, s, "other", o, rules::kFloorDivides, types,
                                        rules::kFloorDivides, types);
    return p.finish(contiguous_copies({&a, &o}),
                    rules::kFloorDividesAicore.on(p.family()).contains(t),
                    unary_kernel(a, o, t, [s](auto tag, auto x, std::string &error) {
                        using N = typename decltype(tag)::type;
                        return arith::divide(x, scalar_as<N>(s), true, error);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(FloorDivides)

aclnnStatus aclnnRemainderTensorTensorGetWorkspaceSize(const aclTensor *self,
                                                       const aclTensor *other, aclTensor *out,
                                                       uint64_t *workspaceSize,
                                                       aclOpExecutor **executor) {
    PhaseOne p("aclnnRemainderTensorTensor", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    p.available(rules::kRemainderIn);
    const aclDataType t = binary_checks(p, a, b, o, rules::kRemainderIn, rules::kRemainderIn,
                                        rules::kRemainderPromoted.on(p.family()));
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &error) {
                        return arith::remainder(x, y, error);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(RemainderTensorTensor)

aclnnStatus aclnnBitwiseAndTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    PhaseOne p("aclnnBitwiseAndTensor", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    const aclDataType t = binary_checks(
        p, a, b, o, {rules::kBitwiseAndTensorIn, rules::kBitwiseAndTensorIn},
        {rules::kBitwiseAndTensorOut, rules::kBitwiseAndTensorOut}, rules::kBitwiseAndTensorIn);
    return p.finish(contiguous_copies({&a, &b, &o}),
                    rules::kBitwiseAndAicore.on(p.family()).contains(t),
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) {
                        return arith::bitwise_and(x, y);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(BitwiseAndTensor)

aclnnStatus aclnnBitwiseAndScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
    PhaseOne p("aclnnBitwiseAndScalar", workspaceSize, executor);
    const View a = p.tensor(self, "self");
    const ScalarValue s = p.scalar(other, "other");
    const View o = p.tensor(out, "out", true);
    const aclDataType t = scalar_checks(
        p, a, s, "other", o, {rules::kBitwiseAndScalarIn, rules::kBitwiseAndScalarIn},
        rules::kBitwiseAndScalarIn, rules::kBitwiseAndScalarOut, rules::kBitwiseAndScalarIn);
    return p.finish(contiguous_copies({&a, &o}),
                    rules::kBitwiseAndAicore.on(p.family()).contains(t),
                    unary_kernel(a, o, t, [s](auto tag, auto x, std::string &) {
                        using N = typename decltype(tag)::type;
                        return arith::bitwise_and(x, scalar_as<N>(s));
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(BitwiseAndScalar)

aclnnStatus aclnnEqTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                          aclTensor *out, uint64_t *workspaceSize,
                                          aclOpExecutor **executor) {
    PhaseOne p("aclnnEqTensor", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    p.dtype_in(a.dtype, "self", rules::kEqIn);
    p.dtype_in(b.dtype, "other", rules::kEqIn);
    p.dtype_in(o.dtype, "out", rules::kEqOut);
    const aclDataType t =
        p.promote(promote_types(a.dtype, b.dtype), "self and other", rules::kEqIn.on(p.family()));
    p.broadcasts_to({{&a, "self"}, {&b, "other"}}, o);
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) -> bool {
                        return x == y;
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(EqTensor)

aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                         aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    PhaseOne p("aclnnMinimum", workspaceSize, executor);
    const View a = p.tensor(self, "self"), b = p.tensor(other, "other"),
               o = p.tensor(out, "out", true);
    const aclDataType t =
        binary_checks(p, a, b, o, rules::kMinimum, rules::kMinimum, rules::kMinimum.on(p.family()));
    return p.finish(contiguous_copies({&a, &b, &o}), true,
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) {
                        return arith::minimum(x, y);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Minimum)

aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    PhaseOne p("aclnnNeg", workspaceSize, executor);
    const View a = p.tensor(self, "self"), o = p.tensor(out, "out", true);
    p.dtype_in(a.dtype, "self", rules::kNeg);
    p.dtype_in(o.dtype, "out", rules::kNeg);
    p.castable(a.dtype, o.dtype);
    p.same_shape(a, "self", o, "out");
    return p.finish(
        contiguous_copies({&a, &o}), true,
        unary_kernel(a, o, a.dtype, [](auto, auto x, std::string &) { return arith::neg(x); }));
}
GGUFTOOL_EMU_PHASE_TWO(Neg)

aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor *self, const aclScalar *clipValueMin,
                                       const aclScalar *clipValueMax, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnClamp", workspaceSize, executor);
    const View a = p.tensor(self, "self");
    ScalarValue lo, hi;
    const bool has_lo = p.optional_scalar(clipValueMin, "clipValueMin", lo);
    const bool has_hi = p.optional_scalar(clipValueMax, "clipValueMax", hi);
    if (p && !has_lo && !has_hi)
        return fail(kAclnnErrParamNullptr, "aclnnClampGetWorkspaceSize",
                    "clipValueMin and clipValueMax are both null");
    const View o = p.tensor(out, "out", true);
    p.dtype_in(a.dtype, "self", rules::kClampTensor);
    if (has_lo) p.dtype_in(lo.dtype, "clipValueMin", rules::kClampScalar);
    if (has_hi) p.dtype_in(hi.dtype, "clipValueMax", rules::kClampScalar);
    p.dtype_in(o.dtype, "out", rules::kClampTensor);
    aclDataType t = a.dtype;
    if (has_lo) t = promote_tensor_scalar(t, lo.dtype);
    if (has_hi) t = promote_tensor_scalar(t, hi.dtype);
    t = p.promote(t, "self and the bounds", rules::kClampScalar.on(p.family()));
    p.castable(t, o.dtype);
    p.same_shape(a, "self", o, "out");
    return p.finish(contiguous_copies({&a, &o}), true,
                    unary_kernel(a, o, t, [=](auto tag, auto x, std::string &) {
                        using N = typename decltype(tag)::type;
                        auto r = x;
                        if (has_lo && r < scalar_as<N>(lo)) r = scalar_as<N>(lo);
                        if (has_hi && r > scalar_as<N>(hi)) r = scalar_as<N>(hi);
                        return r;
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(Clamp)

aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition, const aclTensor *self,
                                        const aclTensor *other, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnSWhere", workspaceSize, executor);
    const View c = p.tensor(condition, "condition"), a = p.tensor(self, "self"),
               b = p.tensor(other, "other"), o = p.tensor(out, "out", true);
    p.dtype_in(c.dtype, "condition", rules::kSWhereCondition);
    p.dtype_in(a.dtype, "self", rules::kSWhereValues);
    p.dtype_in(b.dtype, "other", rules::kSWhereValues);
    p.dtype_in(o.dtype, "out", rules::kSWhereValues);
    const aclDataType t = p.promote(promote_types(a.dtype, b.dtype), "self and other",
                                    rules::kSWhereValues.on(p.family()));
    p.castable(t, o.dtype);
    p.broadcasts_to({{&c, "condition"}, {&a, "self"}, {&b, "other"}}, o);
    StreamTask k = [=](const DeviceMemory &m) -> std::string {
        const std::vector<bool> pick = read_as<bool>(m, c, o.dims);
        visit_dtype(t, [&]<class N>(std::type_identity<N>) {
            const auto x = read_as<N>(m, a, o.dims), y = read_as<N>(m, b, o.dims);
            std::vector<N> r(pick.size());
            for (size_t i = 0; i < r.size(); ++i) r[i] = convert<N>(pick[i] ? x[i] : y[i]);
            write_as(m, o, r);
        });
        return "";
    };
    return p.finish(contiguous_copies({&c, &a, &b, &o}), rules::kSWhereAicore.contains(t),
                    std::move(k));
}
GGUFTOOL_EMU_PHASE_TWO(SWhere)

}  // extern "C"
