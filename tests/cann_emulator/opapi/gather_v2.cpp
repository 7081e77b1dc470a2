// aclnnGatherV2 (ops-nn; libopapi.so in CANN 8.1, libopapi_nn.so in 8.5): numpy.take along dim.
// What it computes: opapi/operator_rules.hpp.
#include <cstring>

#include "core/abi_declarations.hpp"
#include "opapi/kernels.hpp"
#include "opapi/phase_one.hpp"

GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_EMU_DECLARE_OPERATOR)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace rules = gguftool::cann_emulator::rules;

extern "C" {

aclnnStatus aclnnGatherV2GetWorkspaceSize(const aclTensor *self, int64_t dim,
                                          const aclTensor *index, aclTensor *out,
                                          uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnGatherV2", workspaceSize, executor);
    const View s = p.tensor(self, "self"), i = p.tensor(index, "index"),
               o = p.tensor(out, "out", true);
    p.dtype_in(s.dtype, "self", rules::kGatherSelf);
    p.dtype_in(i.dtype, "index", rules::kGatherIndex);
    p.check(o.dtype == s.dtype,
            str("out's dtype ", dtype_name(o.dtype), " differs from self's ", dtype_name(s.dtype)));
    p.check(!s.dims.empty(), "self is a scalar (GatherV2 takes 1 to 8 dims)");
    const int64_t d = normalize_dim(dim, s.dims.size());
    p.check(d >= 0,
            str("dim ", dim, " is outside [-rank, rank) for self's shape ", shape_text(s.dims)));
    std::vector<int64_t> expected;
    if (p) {
        expected.assign(s.dims.begin(), s.dims.begin() + d);
        expected.insert(expected.end(), i.dims.begin(), i.dims.end());
        expected.insert(expected.end(), s.dims.begin() + d + 1, s.dims.end());
    }
    p.check(expected.size() <= kMaxRank,
            str("out would have rank ", expected.size(), " (at most 8)"));
    p.check(expected == o.dims,
            str("out's shape ", shape_text(o.dims), " is not ", shape_text(expected),
                " (self's with dim ", d, " replaced by index's shape)"));
    const bool aicore = rules::kGatherAicore.on(p.family()).contains(s.dtype);
    return p.finish(staging_bytes(o), aicore, [=](const DeviceMemory &m) -> std::string {
        const std::vector<int64_t> picks = read_as<int64_t>(m, i, i.dims);
        const int64_t size = s.dims[size_t(d)];
        for (size_t k = 0; k < picks.size(); ++k)
            if (picks[k] < 0 || picks[k] >= size)
                return str("index[", k, "] is ", picks[k], ", outside [0, ", size,
                           ") of self's dim ", d);
        // out = outer x picks x inner; the source element of each is self's view at
        // (outer index, picks[k], inner index).
        int64_t outer = 1, inner = 1;
        for (size_t k = 0; k < s.dims.size(); ++k)
            if (int64_t(k) < d)
                outer *= s.dims[k];
            else if (int64_t(k) > d)
                inner *= s.dims[k];
        View before = s, after = s;  // self's dims before and after `dim`, to enumerate offsets
        before.dims.assign(s.dims.begin(), s.dims.begin() + d);
        before.strides.assign(s.strides.begin(), s.strides.begin() + d);
        before.offset = 0;
        after.dims.assign(s.dims.begin() + d + 1, s.dims.end());
        after.strides.assign(s.strides.begin() + d + 1, s.strides.end());
        after.offset = 0;
        const std::vector<int64_t> outer_at = element_offsets(before, before.dims);
        const std::vector<int64_t> inner_at = element_offsets(after, after.dims);
        const size_t es = s.element_size();
        const std::byte *src = m.host(s.data);
        std::vector<std::byte> bytes(size_t(o.numel()) * es);
        std::byte *dst = bytes.data();
        for (int64_t u = 0; u < outer; ++u)
            for (int64_t pick : picks)
                for (int64_t n = 0; n < inner; ++n, dst += es)
                    std::memcpy(dst,
                                src + (s.offset + outer_at[size_t(u)] +
                                       pick * s.strides[size_t(d)] + inner_at[size_t(n)]) *
                                          es,
                                es);
        write_raw(m, o, bytes);
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(GatherV2)

}  // extern "C"
