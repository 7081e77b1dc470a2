// What the Ascend backend runs, per operator and dtype, on the SoC it has: one table (a row per
// operator group: dtype rules, the aclnn operators needed) walked by query(), asked for every node
// before a session runs anything, so that work the device cannot do is refused up front with the
// node, the operator or format, the dtype and the SoC. The dtype lists are those of CANN's
// operator documentation (CANN-FACTS.md 2.2) for the aclnn operators each primitive uses. An
// operator with no row is not run here.
#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {
namespace {

using Kind = Capability::Kind;
using DT = DataType;

bool has_bf16(SocFamily f) {
    return f == SocFamily::a2 || f == SocFamily::a950;
}

bool in(DT t, std::initializer_list<DT> set) {
    return t == DT::undefined || std::find(set.begin(), set.end(), t) != set.end();
}

// The arithmetic types of Add, Sub, Mul, Minimum, EqTensor, Clamp (and GatherV2's data, SWhere).
bool arithmetic(DT t, SocFamily f) {
    if (t == DT::bfloat16) return has_bf16(f);
    return in(t, {DT::float32, DT::float16, DT::float64, DT::int8, DT::uint8, DT::int16, DT::int32,
                  DT::int64});
}

// Any type the device stores and copies (InplaceCopy, Cat, Cast, SWhere).
bool storable(DT t, SocFamily f) {
    if (t == DT::bfloat16) return has_bf16(f);
    return t == DT::undefined || acl_dtype(t) != cann::ACL_DT_UNDEFINED;
}

// Whether the CANN libraries export the aclnn operator `name` ("aclnnAdd").
bool exported(const Cann &a, std::string_view name) {
#define GGUFTOOL_ASCEND_EXPORTED(op, library, params) \
    if (name == "aclnn" #op) return a.aclnn##op != nullptr;
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ASCEND_EXPORTED)
#undef GGUFTOOL_ASCEND_EXPORTED
    return false;
}

// One dtype condition of a row: the element type of input `tensor` (kOutput: output 0) must
// satisfy `ok`; `how` says which device operators set the limit.
constexpr int kOutput = -1;
struct DtypeRule {
    int tensor;
    bool (*ok)(DT t, SocFamily f);
    const char *how;
};

// One aclnn operator a row's primitives launch, needed when `when` holds (always when null);
// `label` names it in the message (default: the operator).
struct Need {
    const char *op;
    bool (*when)(const Cann &a, SocFamily f) = nullptr;
    const char *label = nullptr;
};

// What the Ascend backend does with some operators: the answer when nothing is refused, a
// refusal that depends on more than dtypes (checked first), the dtype rules in order, and the
// aclnn operators that must be exported. The first problem found is the answer's reason.
struct AscendOp {
    std::vector<std::string_view> ops;
    Kind kind = Kind::native;
    std::string (*refuse)(const OpQuery &q, const Device &d) = nullptr;
    std::vector<DtypeRule> dtypes;
    std::vector<Need> needs;
};

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

bool arithmetic_or_bool(DT t, SocFamily f) {
    return arithmetic(t, f) || t == DT::bool_;
}

const std::vector<AscendOp> &table() {
    static const std::vector<AscendOp> ops = {
        {{"DequantizePacked", "Unpack"}, Kind::lowered, lowered_refusal, {}, {}},
        // Views and host-side values: no device operator.
        {{"Identity", "Reshape", "Unsqueeze", "BitCast", "Shape", "Constant"},
         Kind::native,
         nullptr,
         {},
         {}},
        {{"Cast"},
         Kind::native,
         nullptr,
         {{0, storable, "aclnnCast"}, {kOutput, storable, "aclnnCast"}},
         {{"aclnnCast"}, {"aclnnInplaceCopy"}}},
        {{"Add", "Sub", "Mul"},
         Kind::native,
         nullptr,
         {{0, arithmetic,
           "aclnnAdd, aclnnSub and aclnnMul take no unsigned type wider "
           "than uint8"}},
         {{"aclnnAdd"}, {"aclnnSub"}, {"aclnnMul"}}},
        {{"Div"},
         Kind::native,
         nullptr,
         {{0, arithmetic, "aclnnDiv, aclnnFloorDivide and aclnnDivMod"}},
         {{"aclnnDiv"}, {"aclnnFloorDivide"}, {"aclnnDivMod"}}},
        {{"Mod"},
         Kind::native,
         fmod_refusal,
         {{0,
           [](DT t, SocFamily f) {
               return in(t, {DT::int32, DT::int64, DT::float16, DT::float32, DT::float64}) ||
                      (t == DT::bfloat16 && has_bf16(f));
           },
           "aclnnRemainderTensorTensor"}},
         {{"aclnnRemainderTensorTensor"}}},
        {{"Min"}, Kind::native, nullptr, {{0, arithmetic, "aclnnMinimum"}}, {{"aclnnMinimum"}}},
        {{"Equal"},
         Kind::native,
         nullptr,
         {{0, arithmetic_or_bool, "aclnnEqTensor"}},
         {{"aclnnEqTensor"}}},
        {{"BitwiseAnd"},
         Kind::native,
         nullptr,
         {{0,
           [](DT t, SocFamily) {
               return in(t, {DT::int8, DT::uint8, DT::int16, DT::uint16, DT::int32, DT::int64,
                             DT::bool_});
           },
           "aclnnBitwiseAndTensor"}},
         {{"aclnnBitwiseAndTensor"}, {"aclnnBitwiseAndScalar"}, {"aclnnCast"}}},
        {{"BitShift"},
         Kind::native,
         nullptr,
         {{0,
           [](DT t, SocFamily) {
               return in(t, {DT::uint8, DT::uint16, DT::uint32});
           },
           "shifts run as FloorDivide and Mul by powers of two; uint64 has no exact path"}},
         {{"aclnnFloorDivide"},
          {"aclnnMul"},
          {"aclnnBitwiseAndScalar"},
          {"aclnnCast"},
          {"aclnnFloorDivides", [](const Cann &, SocFamily f) { return f != SocFamily::p310; }}}},
        {{"Neg"},
         Kind::native,
         nullptr,
         {{0, [](DT t, SocFamily f) { return arithmetic(t, f) && t != DT::uint8; }, "aclnnNeg"}},
         {{"aclnnNeg"}}},
        {{"Where"}, Kind::native, nullptr, {{1, storable, "aclnnSWhere"}}, {{"aclnnSWhere"}}},
        {{"Gather"},
         Kind::native,
         nullptr,
         {{0, arithmetic_or_bool, "aclnnGatherV2"},
          {1,
           [](DT t, SocFamily) {
               return in(t, {DT::int32, DT::int64});
           },
           "aclnnGatherV2 indices"}},
         {{"aclnnGatherV2"}}},
        {{"Slice", "Transpose"},
         Kind::native,
         nullptr,
         {{0, storable, "aclnnInplaceCopy"}},
         {{"aclnnInplaceCopy"}}},
        {{"Concat"},
         Kind::native,
         nullptr,
         {{0, storable, "aclnnCat"}},
         {{"aclnnCat"}, {"aclnnInplaceCopy"}}},
        {{"Range"},
         Kind::native,
         nullptr,
         {{0,
           [](DT t, SocFamily) {
               return in(t, {DT::int16, DT::int32, DT::int64});
           },
           "aclnnArange computes start + i * step, not Range's running sum, for floats"}},
         {{"aclnnArange"}}},
        {{"OneHot"},
         Kind::native,
         nullptr,
         {{0,
           [](DT t, SocFamily f) {
               return arithmetic(t, f) || in(t, {DT::uint16, DT::uint32, DT::uint64});
           },
           "OneHot indices are cast to int64"},
          {2, storable, "aclnnSWhere"}},
         {{"aclnnCast"},
          {"aclnnClamp"},
          {"aclnnAdds"},
          {"aclnnSWhere"},
          {"aclnnOneHot", [](const Cann &a, SocFamily) { return !a.has_atb; },
           "aclnnOneHot (ATB absent)"}}},
    };
    return ops;
}

// The first problem with running `q` by `row` on `d`, or "".
std::string problem(const AscendOp &row, const OpQuery &q, const Device &d) {
    const SocFamily f = d.family();
    if (row.refuse)
        if (std::string why = row.refuse(q, d); !why.empty()) return why;
    for (const DtypeRule &r : row.dtypes) {
        const std::vector<DT> &list = r.tensor == kOutput ? q.outputs : q.inputs;
        const size_t i = r.tensor == kOutput ? 0 : size_t(r.tensor);
        const DT t = i < list.size() ? list[i] : DT::undefined;
        if (r.ok(t, f)) continue;
        if (t == DT::bfloat16 && !has_bf16(f))
            return fmt::format(
                "{} has no bfloat16 operators (CANN's docs list none for its "
                "SoC family); {} of bfloat16",
                d.soc(), q.op_type);
        return fmt::format("{} of {} is not supported on {} ({})", q.op_type, dtype_name(t),
                           d.soc(), r.how);
    }
    for (const Need &n : row.needs)
        if ((!n.when || n.when(d.api(), f)) && !exported(d.api(), n.op))
            return fmt::format("{} is not exported by the CANN libraries ({})",
                               n.label ? n.label : n.op, d.api().layout);
    return {};
}

}  // namespace

Capability AscendBackend::query(const OpQuery &q) const {
    for (const AscendOp &row : table()) {
        if (std::find(row.ops.begin(), row.ops.end(), q.op_type) == row.ops.end()) continue;
        std::string why = problem(row, q, *device_);
        if (why.empty()) return {row.kind, {}};
        return {Kind::unsupported, std::move(why)};
    }
    return {Kind::unsupported, fmt::format("the ascend backend has no {}", q.op_type)};
}

}  // namespace gguftool::runtime::ascend
