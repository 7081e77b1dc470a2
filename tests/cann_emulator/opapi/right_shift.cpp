// aclnnRightShift (ops-math, from CANN 8.5: libopapi_math.so only; CANN 8.1's libopapi.so lacks
// it). What it computes: opapi/operator_rules.hpp.
#include "core/abi_declarations.hpp"
#include "opapi/arithmetic.hpp"
#include "opapi/kernels.hpp"
#include "opapi/phase_one.hpp"

GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_EMU_DECLARE_OPERATOR)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace rules = gguftool::cann_emulator::rules;

extern "C" {

aclnnStatus aclnnRightShiftGetWorkspaceSize(const aclTensor *input, const aclTensor *shiftBits,
                                            aclTensor *out, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    PhaseOne p("aclnnRightShift", workspaceSize, executor);
    const View a = p.tensor(input, "input"), b = p.tensor(shiftBits, "shiftBits"),
               o = p.tensor(out, "out", true);
    p.available(rules::kRightShift);
    p.dtype_in(a.dtype, "input", rules::kRightShift);
    p.dtype_in(b.dtype, "shiftBits", rules::kRightShift);
    p.dtype_in(o.dtype, "out", rules::kRightShift);
    p.check(a.dims == o.dims, str("input's shape ", shape_text(a.dims), " differs from out's ",
                                  shape_text(o.dims), " (only shiftBits broadcasts)"));
    p.broadcasts_to({{&a, "input"}, {&b, "shiftBits"}}, o);
    const aclDataType t = p.promote(promote_types(a.dtype, b.dtype), "input and shiftBits",
                                    rules::kRightShift.on(p.family()));
    p.castable(t, o.dtype);
    return p.finish(contiguous_copies({&a, &b, &o}), false,  // an AI CPU kernel outside the 950
                    binary_kernel(a, b, o, t, [](auto, auto x, auto y, std::string &) {
                        return gguftool::cann_emulator::arith::shift_right(x, y);
                    }));
}
GGUFTOOL_EMU_PHASE_TWO(RightShift)

}  // extern "C"
