// The aclnn operators the emulation provides: what each computes, the dtypes each takes per SoC
// family, and which dtype combinations CANN runs on an AI CPU kernel instead of AI Core (the call
// log's aicore/aicpu: the AI Core dtype lists of the operators' op_api dispatch code in
// hicann/ops-math and hicann/ops-nn). Dtype lists are the operators' documented ones (the aclnn
// pages of hicann/ops-math and hicann/ops-nn, math/<op>/docs/aclnn<Op>.md); the 310P has no BF16
// anywhere.
//
// Every operator: phase one checks null pointers (161001), dtypes (161002, naming operator, dtype
// and SoC), shapes (161002), captures views and scalar values, and returns a workspace size;
// phase two checks the executor (single use), workspace and stream and enqueues the kernel, which
// runs at aclrtSynchronizeStream. Binary operators promote their inputs with PromoteType (a
// tensor with a scalar with CombineCategories), compute in the promoted type P, and cast the
// result to out's dtype (which CanCast must allow). "Broadcast" is NumPy's, and the broadcast
// shape must equal out's exactly. Views may have any strides, inputs and outputs alike.
//
// Arithmetic in P: integers wrap modulo 2^n; FLOAT16 and BF16 compute in float and round once to
// P; FLOAT in float; DOUBLE in double. An execution error fails aclrtSynchronizeStream with
// ACL_ERROR_RT_AICORE_EXCEPTION (507015).
//
// operator               computes (elementwise unless said)
// ---------------------- -------------------------------------------------------------------------
// Cast(self,dtype,out)   out = self converted (core/convert.hpp): C conversions; FLOAT16/BF16 round
//                        to nearest even; floating -> integer truncates toward zero, NaN -> 0,
//                        out of range saturates (undefined in C: the emulation's choice); integer
//                        -> integer modulo 2^n; -> BOOL is "nonzero". dtype must equal out's;
//                        shapes equal.
// InplaceCopy(ref,src)   ref = src, src broadcast to ref's shape; the same dtype required.
// Add(a,b,alpha,out)     a + alpha*b (alpha converted to P; the backend passes 1). BOOL: nonzero.
// Adds(a,s,alpha,out)    a + alpha*s; a's shape equals out's.
// Sub(a,b,alpha,out)     a - alpha*b.
// Mul(a,b,out), Muls     a * b, a * s.
// Div(a,b,out)           a / b, true division: integer or BOOL P computes in FLOAT (IEEE: x/0 is
//                        +-inf or NaN).
// DivMod(a,b,mode,out)   mode 0: as Div; 1: a / b truncated toward zero; 2: floored. Integers (and
//                        BOOL) divided by 0 are an execution error; INT_MIN / -1 wraps to INT_MIN.
//                        Floating: trunc(a / b), floor(a / b). Other modes: 161002.
// FloorDivide(a,b,out)   floor(a / b): integers exactly (divisor 0: execution error), floating
// FloorDivides(a,s,out)  as floor(a / b) in P. FloorDivides is not on the 310P (its doc).
// RemainderTensorTensor  a - floor(a / b) * b with the divisor's sign (Python's %): integers
// exactly
//   (a,b,out)            (divisor 0: execution error), floating as fmod(a, b) corrected to the
//                        divisor's sign. P must be INT32, INT64 or floating. Not on the 310P.
// BitwiseAndTensor(a,b), a & b on integral or BOOL P.
//   BitwiseAndScalar(a,s)
// RightShift(in,bits,out) in >> bits: `in`'s shape must equal out's (only bits broadcasts; CANN
//                        8.5's CheckShape). A negative count shifts by 0; a count of the width or
//                        more gives 0 (unsigned) or the sign (signed). Only Atlas A2 here (not the
//                        310P: 161002 "not supported on Ascend310P3"); absent from CANN 8.1.
// EqTensor(a,b,out)      a == b compared in P (IEEE: NaN is unequal to itself, -0 == +0) -> BOOL,
//                        cast to out.
// Minimum(a,b,out)       the smaller; NaN if either is NaN; min(-0, +0) is -0.
// Neg(self,out)          -self: floating flips the sign bit (NaN included), integers wrap.
// Clamp(self,lo,hi,out)  min(max(self, lo), hi) with either bound optional (not both); NaN stays
// NaN;
//                        lo > hi gives hi. P combines self with lo, then with hi.
// SWhere(c,a,b,out)      c ? a : b; c is BOOL or UINT8 (nonzero is true); all three broadcast.
// Cat(list,dim,out)      the tensors joined along dim (-rank..rank-1); the same dtype and rank as
//                        out, equal sizes off dim.
// Arange(start,end,step, out[i] = start + i*step in out's type (integers in INT64, floating in
//   out)                 double, rounded once); out is 1-D of length ceil((end - start) / step); a
//                        zero step or one pointing away from end is refused.
// OneHot(self,classes,   out has classes inserted at axis (-1..rank; -1 is last); out = on where
//   on,off,axis,out)     index == class, else off. on/off: element 0 of their tensors (read when
//   the
//                        kernel runs), of out's dtype. An index >= classes gives a row of off; a
//                        negative index is an execution error (undocumented).
// GatherV2(self,dim,     numpy.take(self, index, axis=dim): out's shape is self's with dim replaced
//   index,out)           by index's shape; out has self's dtype; an index outside [0, size) is an
//                        execution error.
// WeightQuantBatchMatmul y [m, n] = x [m, k] @ ((weight [k, n] + offset) * scale) + bias
//   V2(x,weight,scale,   (aclnn_weight_quant_batch_matmul_v2.h, CANN 8.1; the ops-nn page's rules):
//   offset,qscale,       weight INT8 or INT4 (two per byte, the even element in the low nibble);
//   qoffset,bias,group,  scale (and offset, same shape) per tensor [1] or [1, 1], per channel [n]
//   or y)                   [1, n], or per group [ceil(k / group), n] with group a multiple of 32
//   in
//                        [32, k - 1] (0 otherwise); x, scale, offset and y FLOAT16, or all BF16 on
//                        the A2; bias [n] or [1, n], FLOAT16 with FLOAT16 x and FLOAT with BF16.
//                        2-D only; k and n in [1, 65535]; no empty tensor; x, weight, scale and
//                        offset contiguous or transposed (strides [1, rows]), bias and y
//                        contiguous. The emulation's choices: each weight element is dequantized
//                        in float and rounded to x's dtype, products accumulate in float, y is
//                        rounded once; output quantization (quantScale, quantOffset) is not
//                        emulated (161002). The 310P: x FLOAT16 and weight INT8 only (its page).
#pragma once

#include "core/dtype.hpp"
#include "core/soc_profile.hpp"

namespace gguftool::cann_emulator::rules {

// A dtype set per SoC family.
struct PerFamily {
    DtypeSet ascend910b;
    DtypeSet ascend310p;
    constexpr DtypeSet on(SocFamily f) const {
        return f == SocFamily::ascend910b ? ascend910b : ascend310p;
    }
};

inline constexpr DtypeSet kBf16{ACL_BF16};
// The same list on both, plus BF16 on the Atlas A2 (the 310P has no BF16).
constexpr PerFamily with_bf16_on_a2(DtypeSet s) {
    return {s | kBf16, s};
}

// Add, Adds, Sub, Mul, Muls, Div, DivMod (their docs' lists without the complex types).
inline constexpr DtypeSet kNumeric{ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT32, ACL_INT64,
                                   ACL_INT16, ACL_INT8,    ACL_UINT8,  ACL_BOOL};
inline constexpr PerFamily kArithmetic = with_bf16_on_a2(kNumeric);

inline constexpr PerFamily kCast =
    with_bf16_on_a2({ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16,
                     ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_BOOL});
inline constexpr PerFamily kInplaceCopy =
    with_bf16_on_a2({ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8, ACL_FLOAT16, ACL_FLOAT,
                     ACL_BOOL, ACL_DOUBLE, ACL_UINT16, ACL_UINT32, ACL_UINT64});

inline constexpr PerFamily kFloorDivideIn = kArithmetic;
inline constexpr PerFamily kFloorDivideOut = {kArithmetic.ascend910b.without({ACL_BOOL}),
                                              kArithmetic.ascend310p.without({ACL_BOOL})};
inline constexpr PerFamily kFloorDivides = {kNumeric, {}};  // BF16 only on the 950; no 310P

// RemainderTensorTensor's doc lists the 310P too (without BF16); RemainderTensorScalar's does not.
inline constexpr PerFamily kRemainderIn = with_bf16_on_a2(
    {ACL_UINT8, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE});
inline constexpr PerFamily kRemainderPromoted =
    with_bf16_on_a2({ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE});

inline constexpr DtypeSet kBitwiseAndTensorIn{ACL_BOOL,  ACL_INT8,  ACL_INT16, ACL_INT32,
                                              ACL_INT64, ACL_UINT8, ACL_UINT16};
inline constexpr DtypeSet kBitwiseAndTensorOut =
    kBitwiseAndTensorIn | DtypeSet{ACL_UINT32, ACL_UINT64};
inline constexpr DtypeSet kBitwiseAndScalarIn{ACL_INT16, ACL_UINT16, ACL_INT32, ACL_INT64,
                                              ACL_INT8,  ACL_UINT8,  ACL_BOOL};
inline constexpr PerFamily kBitwiseAndScalarOut =
    with_bf16_on_a2({ACL_BOOL, ACL_INT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_INT64, ACL_UINT8,
                     ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE});

inline constexpr PerFamily kRightShift = {
    {ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8, ACL_UINT16, ACL_UINT32, ACL_UINT64}, {}};

inline constexpr PerFamily kEqIn =
    with_bf16_on_a2({ACL_DOUBLE, ACL_FLOAT16, ACL_FLOAT, ACL_INT64, ACL_INT32, ACL_INT8, ACL_UINT8,
                     ACL_BOOL, ACL_INT16, ACL_UINT32, ACL_UINT64});
inline constexpr PerFamily kEqOut = {kEqIn.ascend910b | DtypeSet{ACL_UINT16},
                                     kEqIn.ascend310p | DtypeSet{ACL_UINT16}};

inline constexpr PerFamily kMinimum = {kNumeric | kBf16, kNumeric.without({ACL_BOOL})};
inline constexpr PerFamily kNeg =
    with_bf16_on_a2({ACL_INT8, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE});

inline constexpr DtypeSet kClampBase{ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT8,
                                     ACL_UINT8,   ACL_INT16, ACL_INT32,  ACL_INT64};
inline constexpr PerFamily kClampTensor = {kClampBase | kBf16, kClampBase | DtypeSet{ACL_BOOL}};
inline constexpr PerFamily kClampScalar = with_bf16_on_a2(kClampBase | DtypeSet{ACL_BOOL});

inline constexpr DtypeSet kSWhereCondition{ACL_BOOL, ACL_UINT8};
inline constexpr PerFamily kSWhereValues =
    with_bf16_on_a2({ACL_FLOAT, ACL_INT32, ACL_UINT64, ACL_INT64, ACL_UINT32, ACL_FLOAT16,
                     ACL_UINT16, ACL_INT16, ACL_INT8, ACL_UINT8, ACL_DOUBLE, ACL_BOOL});

inline constexpr DtypeSet kCatCommon{ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64, ACL_INT16,
                                     ACL_INT8,  ACL_UINT8,   ACL_BOOL,  ACL_DOUBLE};
inline constexpr PerFamily kCat = {kCatCommon | kBf16,
                                   kCatCommon | DtypeSet{ACL_UINT16, ACL_UINT32, ACL_UINT64}};

inline constexpr PerFamily kArangeScalar =
    with_bf16_on_a2({ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_UINT8, ACL_INT8, ACL_INT16, ACL_INT32,
                     ACL_INT64, ACL_BOOL});
inline constexpr PerFamily kArangeOut =
    with_bf16_on_a2({ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT32, ACL_INT64});

inline constexpr DtypeSet kOneHotIndex{ACL_UINT8, ACL_INT32, ACL_INT64};
inline constexpr PerFamily kOneHotValues = {
    {ACL_FLOAT16, ACL_FLOAT, ACL_INT32, ACL_INT64},
    {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_UINT8, ACL_INT32, ACL_INT64}};

inline constexpr PerFamily kGatherSelf =
    with_bf16_on_a2({ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_INT32, ACL_INT16, ACL_INT8, ACL_UINT8,
                     ACL_BOOL, ACL_DOUBLE});
inline constexpr DtypeSet kGatherIndex{ACL_INT32, ACL_INT64};

// WeightQuantBatchMatmulV2: x (and antiquantScale, antiquantOffset, y, of x's dtype); weight.
inline constexpr PerFamily kWeightQuantX = {{ACL_FLOAT16, ACL_BF16}, {ACL_FLOAT16}};
inline constexpr PerFamily kWeightQuantWeight = {{ACL_INT8, ACL_INT4}, {ACL_INT8}};

// --- AI Core or AI CPU (the op_api dispatch code's AI Core lists; operators without one: AI Core)

// Add, Adds, Sub, Mul and Muls, by the promoted dtype.
inline constexpr PerFamily kAddMulAicore =
    with_bf16_on_a2({ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_BOOL, ACL_INT8, ACL_UINT8, ACL_INT64});
inline constexpr PerFamily kFloorDividesAicore = {
    {ACL_FLOAT16, ACL_FLOAT, ACL_INT32, ACL_INT8, ACL_UINT8, ACL_BF16, ACL_INT64},
    {ACL_FLOAT16, ACL_FLOAT, ACL_INT32, ACL_INT8, ACL_UINT8, ACL_BF16}};
// BitwiseAnd: INT8 and UINT8 (and BOOL) are AI CPU kernels, INT64 too on the 310P.
inline constexpr PerFamily kBitwiseAndAicore = {{ACL_INT16, ACL_UINT16, ACL_INT32, ACL_INT64},
                                                {ACL_INT16, ACL_UINT16, ACL_INT32}};
inline constexpr PerFamily kGatherAicore =
    with_bf16_on_a2({ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8, ACL_UINT8, ACL_INT64, ACL_INT16,
                     ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_BOOL});
inline constexpr DtypeSet kSWhereAicore{ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT8,
                                        ACL_UINT8, ACL_BF16,    ACL_INT64};
inline constexpr DtypeSet kOneHotAicoreIndex{ACL_INT32, ACL_INT64};

// Whether Cast from -> to has an AI Core kernel on the family (identity copies do).
bool cast_on_aicore(SocFamily family, aclDataType from, aclDataType to);

}  // namespace gguftool::cann_emulator::rules
