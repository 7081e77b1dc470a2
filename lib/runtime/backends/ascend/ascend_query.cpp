// What the Ascend backend runs, per operator and dtype, on the SoC it has: asked for every node
// before a session runs anything, so that work the device cannot do is refused up front with the
// node, the operator or format, the dtype and the SoC. The dtype lists are those of CANN's
// operator documentation (CANN-FACTS.md 2.2) for the aclnn operators each primitive uses.
#include <algorithm>
#include <initializer_list>

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

class Checker {
public:
    Checker(const Device &d, const OpQuery &q) : d_(d), q_(q) {}

    // The first problem found, if any.
    std::string problem;

    void need(std::initializer_list<std::pair<const char *, bool>> ops) {
        for (const auto &[name, present] : ops)
            if (!present && problem.empty())
                problem = fmt::format("{} is not exported by the CANN libraries ({})", name,
                                      d_.api().layout);
    }
    void dtype(DT t, bool ok, const char *how) {
        if (ok || !problem.empty()) return;
        problem = t == DT::bfloat16 && !has_bf16(d_.family())
                      ? fmt::format(
                            "{} has no bfloat16 operators (CANN's docs list none for its "
                            "SoC family); {} of bfloat16",
                            d_.soc(), q_.op_type)
                      : fmt::format("{} of {} is not supported on {} ({})", q_.op_type,
                                    dtype_name(t), d_.soc(), how);
    }
    void refuse(const std::string &why) {
        if (problem.empty()) problem = why;
    }
    DT input(size_t i) const { return i < q_.inputs.size() ? q_.inputs[i] : DT::undefined; }
    DT output(size_t i) const { return i < q_.outputs.size() ? q_.outputs[i] : DT::undefined; }

private:
    const Device &d_;
    const OpQuery &q_;
};

}  // namespace

Capability AscendBackend::query(const OpQuery &q) const {
    const Device &d = *device_;
    const Cann &a = d.api();
    const SocFamily f = d.family();
    Checker c(d, q);
    const std::string &op = q.op_type;
    const DT t = c.input(0);

    if (op == "DequantizePacked" || op == "Unpack") {
        // Lowered to standard operators; the output Cast decides what the SoC must have.
        const DT out = c.output(0);
        if (out == DT::bfloat16 && !has_bf16(f))
            c.refuse(fmt::format(
                "{}{} to bfloat16: {} has no bfloat16 Cast (CANN's docs list "
                "none for its SoC family)",
                op, q.format ? fmt::format(" ({})", type_name(*q.format)) : "", d.soc()));
        if (c.problem.empty()) return {Kind::lowered, {}};
    } else if (op == "Identity" || op == "Reshape" || op == "Unsqueeze" || op == "BitCast" ||
               op == "Shape" || op == "Constant") {
        return {};  // views and host-side values: no device operator
    } else if (op == "Cast") {
        c.dtype(t, storable(t, f), "aclnnCast");
        c.dtype(c.output(0), storable(c.output(0), f), "aclnnCast");
        c.need({{"aclnnCast", a.aclnnCast}, {"aclnnInplaceCopy", a.aclnnInplaceCopy}});
    } else if (op == "Add" || op == "Sub" || op == "Mul") {
        c.dtype(t, arithmetic(t, f),
                "aclnnAdd, aclnnSub and aclnnMul take no unsigned type wider "
                "than uint8");
        c.need({{"aclnnAdd", a.aclnnAdd}, {"aclnnSub", a.aclnnSub}, {"aclnnMul", a.aclnnMul}});
    } else if (op == "Div") {
        c.dtype(t, arithmetic(t, f), "aclnnDiv, aclnnFloorDivide and aclnnDivMod");
        c.need({{"aclnnDiv", a.aclnnDiv},
                {"aclnnFloorDivide", a.aclnnFloorDivide},
                {"aclnnDivMod", a.aclnnDivMod}});
    } else if (op == "Mod") {
        if (q.direction == "fmod")
            c.refuse(fmt::format("Mod with fmod=1 is not supported on {}", d.soc()));
        if (f == SocFamily::p310)
            c.refuse(
                fmt::format("Mod is not supported on {}: CANN's remainder operators list "
                            "no Atlas inference products",
                            d.soc()));
        c.dtype(t,
                in(t, {DT::int32, DT::int64, DT::float16, DT::float32, DT::float64}) ||
                    (t == DT::bfloat16 && has_bf16(f)),
                "aclnnRemainderTensorTensor");
        c.need({{"aclnnRemainderTensorTensor", a.aclnnRemainderTensorTensor}});
    } else if (op == "Min") {
        c.dtype(t, arithmetic(t, f), "aclnnMinimum");
        c.need({{"aclnnMinimum", a.aclnnMinimum}});
    } else if (op == "Equal") {
        c.dtype(t, arithmetic(t, f) || t == DT::bool_, "aclnnEqTensor");
        c.need({{"aclnnEqTensor", a.aclnnEqTensor}});
    } else if (op == "BitwiseAnd") {
        c.dtype(
            t, in(t, {DT::int8, DT::uint8, DT::int16, DT::uint16, DT::int32, DT::int64, DT::bool_}),
            "aclnnBitwiseAndTensor");
        c.need({{"aclnnBitwiseAndTensor", a.aclnnBitwiseAndTensor},
                {"aclnnBitwiseAndScalar", a.aclnnBitwiseAndScalar},
                {"aclnnCast", a.aclnnCast}});
    } else if (op == "BitShift") {
        c.dtype(t, in(t, {DT::uint8, DT::uint16, DT::uint32}),
                "shifts run as FloorDivide and Mul by powers of two; uint64 has no exact path");
        c.need({{"aclnnFloorDivide", a.aclnnFloorDivide},
                {"aclnnMul", a.aclnnMul},
                {"aclnnBitwiseAndScalar", a.aclnnBitwiseAndScalar},
                {"aclnnCast", a.aclnnCast}});
        if (f != SocFamily::p310) c.need({{"aclnnFloorDivides", a.aclnnFloorDivides}});
    } else if (op == "Neg") {
        c.dtype(t, arithmetic(t, f) && t != DT::uint8, "aclnnNeg");
        c.need({{"aclnnNeg", a.aclnnNeg}});
    } else if (op == "Where") {
        c.dtype(c.input(1), storable(c.input(1), f), "aclnnSWhere");
        c.need({{"aclnnSWhere", a.aclnnSWhere}});
    } else if (op == "Gather") {
        c.dtype(t, arithmetic(t, f) || t == DT::bool_, "aclnnGatherV2");
        c.dtype(c.input(1), in(c.input(1), {DT::int32, DT::int64}), "aclnnGatherV2 indices");
        c.need({{"aclnnGatherV2", a.aclnnGatherV2}});
    } else if (op == "Slice" || op == "Transpose") {
        c.dtype(t, storable(t, f), "aclnnInplaceCopy");
        c.need({{"aclnnInplaceCopy", a.aclnnInplaceCopy}});
    } else if (op == "Concat") {
        c.dtype(t, storable(t, f), "aclnnCat");
        c.need({{"aclnnCat", a.aclnnCat}, {"aclnnInplaceCopy", a.aclnnInplaceCopy}});
    } else if (op == "Range") {
        c.dtype(t, in(t, {DT::int16, DT::int32, DT::int64}),
                "aclnnArange computes start + i * step, not Range's running sum, for floats");
        c.need({{"aclnnArange", a.aclnnArange}});
    } else if (op == "OneHot") {
        c.dtype(t, arithmetic(t, f) || in(t, {DT::uint16, DT::uint32, DT::uint64}),
                "OneHot indices are cast to int64");
        c.dtype(c.input(2), storable(c.input(2), f), "aclnnSWhere");
        c.need({{"aclnnCast", a.aclnnCast},
                {"aclnnClamp", a.aclnnClamp},
                {"aclnnAdds", a.aclnnAdds},
                {"aclnnSWhere", a.aclnnSWhere}});
        if (!a.has_atb) c.need({{"aclnnOneHot (ATB absent)", a.aclnnOneHot}});
    } else {
        c.refuse(fmt::format("the ascend backend has no {}", op));
    }
    if (c.problem.empty()) return {};
    return {Kind::unsupported, c.problem};
}

}  // namespace gguftool::runtime::ascend
