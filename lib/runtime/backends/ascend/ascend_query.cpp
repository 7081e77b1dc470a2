// What the Ascend backend's capability rules share (each rule is in its kernel's row): the dtype
// sets of CANN's operator documentation (the "supported dtypes" and product lists of the aclnn
// pages in hicann/ops-math and hicann/ops-nn, math/<op>/docs/aclnn<Op>.md) for the aclnn
// operators the kernels launch, and the walk that answers a query by a rule on the device it has.
#include <algorithm>
#include <string_view>

#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {
namespace {

// Whether the CANN libraries export the aclnn operator `name` ("aclnnAdd").
bool exported(const Cann &a, std::string_view name) {
#define GGUFTOOL_ASCEND_EXPORTED(op, library, params) \
    if (name == "aclnn" #op) return a.aclnn##op != nullptr;
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ASCEND_EXPORTED)
#undef GGUFTOOL_ASCEND_EXPORTED
    return false;
}

// The first problem with running `q` by `rule` on `d`, or "".
std::string problem(const AscendRule &rule, const OpQuery &q, const Device &d) {
    const SocFamily f = d.family();
    if (rule.refuse)
        if (std::string why = rule.refuse(q, d); !why.empty()) return why;
    for (const DtypeRule &r : rule.dtypes) {
        const std::vector<DataType> &list = r.tensor == kOutput ? q.outputs : q.inputs;
        const size_t i = r.tensor == kOutput ? 0 : size_t(r.tensor);
        const DataType t = i < list.size() ? list[i] : DataType::undefined;
        if (r.ok(t, f)) continue;
        if (t == DataType::bfloat16 && !has_bf16(f))
            return fmt::format(
                "{} has no bfloat16 operators (CANN's docs list none for its "
                "SoC family); {} of bfloat16",
                d.soc(), q.op_type);
        return fmt::format("{} of {} is not supported on {} ({})", q.op_type, dtype_name(t),
                           d.soc(), r.how);
    }
    for (const Need &n : rule.needs)
        if ((!n.when || n.when(d.api(), f)) && !exported(d.api(), n.op))
            return fmt::format("{} is not exported by the CANN libraries ({})",
                               n.label ? n.label : n.op, d.api().layout);
    return {};
}

}  // namespace

Capability answer(const AscendRule &rule, const OpQuery &q, const Device &d) {
    std::string why = problem(rule, q, d);
    if (why.empty()) return {rule.kind, {}};
    return {Capability::Kind::unsupported, std::move(why)};
}

bool has_bf16(SocFamily f) {
    return f == SocFamily::a2 || f == SocFamily::a950;
}

bool in(DataType t, std::initializer_list<DataType> set) {
    return t == DataType::undefined || std::find(set.begin(), set.end(), t) != set.end();
}

bool arithmetic(DataType t, SocFamily f) {
    using DT = DataType;
    if (t == DT::bfloat16) return has_bf16(f);
    return in(t, {DT::float32, DT::float16, DT::float64, DT::int8, DT::uint8, DT::int16, DT::int32,
                  DT::int64});
}

bool arithmetic_or_bool(DataType t, SocFamily f) {
    return arithmetic(t, f) || t == DataType::bool_;
}

bool storable(DataType t, SocFamily f) {
    if (t == DataType::bfloat16) return has_bf16(f);
    return t == DataType::undefined || acl_dtype(t) != cann::ACL_DT_UNDEFINED;
}

}  // namespace gguftool::runtime::ascend
