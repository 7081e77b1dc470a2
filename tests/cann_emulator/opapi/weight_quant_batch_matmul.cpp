// aclnnWeightQuantBatchMatmulV2 (ops-nn; libopapi.so in CANN 8.1, libopapi_nn.so in 8.5): a
// matrix product with an INT8 or INT4 weight dequantized on the fly. What it computes, and what it
// refuses: opapi/operator_rules.hpp.
#include <cmath>

#include "core/abi_declarations.hpp"
#include "opapi/kernels.hpp"
#include "opapi/phase_one.hpp"

GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_EMU_DECLARE_OPERATOR)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace rules = gguftool::cann_emulator::rules;

namespace {

constexpr int64_t kMaxKN = 65535;

// Dense, or the transpose of a dense [cols, rows] matrix (strides [1, rows]).
bool dense_or_transposed(const View &v) {
    return v.contiguous() || (v.dims.size() == 2 && v.strides[0] == 1 && v.strides[1] == v.dims[0]);
}

// The weight's values as float, [k, n] row-major (INT4: the nibble at element offset `at`,
// low nibble for even offsets, sign-extended).
std::vector<float> weight_values(const DeviceMemory &m, const View &w) {
    if (w.dtype != ACL_INT4) return read_as<float>(m, w, w.dims);
    std::vector<float> values(size_t(w.numel()));
    const std::byte *base = m.host(w.data);
    for_each_offset(w, w.dims, [&](size_t k, int64_t at) {
        const unsigned byte = unsigned(base[at / 2]);
        const int nibble = int(at % 2 ? byte >> 4 : byte & 0xF);
        values[k] = float(nibble >= 8 ? nibble - 16 : nibble);
    });
    return values;
}

// v rounded to dtype d (FLOAT16 or BF16) and back.
float rounded(aclDataType d, float v) {
    return d == ACL_BF16 ? convert<float>(convert<BFloat>(v)) : convert<float>(convert<Half>(v));
}

}  // namespace

extern "C" {

aclnnStatus aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(
    const aclTensor *x, const aclTensor *weight, const aclTensor *antiquantScale,
    const aclTensor *antiquantOffsetOptional, const aclTensor *quantScaleOptional,
    const aclTensor *quantOffsetOptional, const aclTensor *biasOptional, int antiquantGroupSize,
    const aclTensor *y, uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnWeightQuantBatchMatmulV2", workspaceSize, executor);
    const View xv = p.tensor(x, "x"), wv = p.tensor(weight, "weight"),
               sv = p.tensor(antiquantScale, "antiquantScale");
    View ov, bv;
    const bool has_offset = antiquantOffsetOptional != nullptr, has_bias = biasOptional != nullptr;
    if (has_offset) ov = p.tensor(antiquantOffsetOptional, "antiquantOffsetOptional");
    if (has_bias) bv = p.tensor(biasOptional, "biasOptional");
    const View yv = p.tensor(y, "y", true);
    p.check(!quantScaleOptional && !quantOffsetOptional,
            "quantScaleOptional and quantOffsetOptional (output quantization) are not emulated");
    p.dtype_in(xv.dtype, "x", rules::kWeightQuantX);
    p.dtype_in(wv.dtype, "weight", rules::kWeightQuantWeight);
    p.check(sv.dtype == xv.dtype, str("antiquantScale's dtype ", dtype_name(sv.dtype),
                                      " differs from x's ", dtype_name(xv.dtype)));
    if (has_offset)
        p.check(ov.dtype == xv.dtype, str("antiquantOffsetOptional's dtype ", dtype_name(ov.dtype),
                                          " differs from x's ", dtype_name(xv.dtype)));
    if (has_bias) {
        const aclDataType want = xv.dtype == ACL_BF16 ? ACL_FLOAT : ACL_FLOAT16;
        p.check(bv.dtype == want, str("biasOptional's dtype ", dtype_name(bv.dtype), " is not ",
                                      dtype_name(want), " (with x of ", dtype_name(xv.dtype), ")"));
    }
    p.check(yv.dtype == xv.dtype,
            str("y's dtype ", dtype_name(yv.dtype), " differs from x's ", dtype_name(xv.dtype)));
    p.check(xv.dims.size() == 2 && wv.dims.size() == 2 && yv.dims.size() == 2,
            str("x ", shape_text(xv.dims), ", weight ", shape_text(wv.dims), " and y ",
                shape_text(yv.dims), " must be 2-D"));
    if (!p) return p.status();
    const int64_t m = xv.dims[0], k = xv.dims[1], n = wv.dims[1];
    p.check(wv.dims[0] == k, str("weight ", shape_text(wv.dims), " has ", wv.dims[0],
                                 " rows but x ", shape_text(xv.dims), " has ", k, " columns"));
    p.check(m >= 1 && k >= 1 && n >= 1, "empty tensors are not supported");
    p.check(k <= kMaxKN && n <= kMaxKN, str("k ", k, " and n ", n, " must be in [1, 65535]"));
    p.check(yv.dims == std::vector<int64_t>{m, n},
            str("y's shape ", shape_text(yv.dims), " is not [", m, ", ", n, "]"));
    // INT4: the storage's inner axis (n, or k for a transposed view) must be even.
    const int64_t inner = wv.contiguous() ? n : k;
    p.check(wv.dtype != ACL_INT4 || inner % 2 == 0,
            str("an INT4 weight's inner axis (", inner, ") must be even"));
    const int64_t g = antiquantGroupSize;
    p.check(g == 0 || (g % 32 == 0 && g >= 32 && g <= k - 1),
            str("antiquantGroupSize ", g,
                " is neither 0 nor a multiple of 32 in [32, k - 1 = ", k - 1, "]"));
    const int64_t groups = g ? (k + g - 1) / g : 1;
    const std::vector<int64_t> &sd = sv.dims;
    const bool per_tensor = sv.numel() == 1 && sd.size() <= 2 && !g;
    const bool per_channel =
        !g && (sd == std::vector<int64_t>{n} || sd == std::vector<int64_t>{1, n});
    const bool per_group = g && sd == std::vector<int64_t>{groups, n};
    p.check(per_tensor || per_channel || per_group,
            str("antiquantScale's shape ", shape_text(sd), " is none of [1], [1, 1], [", n,
                "], [1, ", n, "] (group size 0) or [", groups, ", ", n, "] (group size ", g, ")"));
    if (has_offset)
        p.check(ov.dims == sd, str("antiquantOffsetOptional's shape ", shape_text(ov.dims),
                                   " differs from antiquantScale's ", shape_text(sd)));
    if (has_bias)
        p.check(bv.dims == std::vector<int64_t>{n} || bv.dims == std::vector<int64_t>{1, n},
                str("biasOptional's shape ", shape_text(bv.dims), " is neither [", n, "] nor [1, ",
                    n, "]"));
    for (const auto &[v, name] :
         {std::pair{&xv, "x"}, std::pair{&wv, "weight"}, std::pair{&sv, "antiquantScale"}})
        p.check(dense_or_transposed(*v),
                str(name, " (", v->describe(), ") is neither contiguous nor a transposed view"));
    if (has_offset)
        p.check(dense_or_transposed(ov), str("antiquantOffsetOptional (", ov.describe(),
                                             ") is neither contiguous nor a transposed view"));
    if (has_bias) p.check(bv.contiguous(), "biasOptional must be contiguous");
    p.check(yv.contiguous(), "y must be contiguous");
    const aclDataType t = xv.dtype;
    return p.finish(staging_bytes(yv), true, [=](const DeviceMemory &mem) -> std::string {
        const std::vector<float> a = read_as<float>(mem, xv, xv.dims);
        const std::vector<float> w = weight_values(mem, wv);
        // Scale and offset broadcast to [groups, n] (per tensor and per channel: one group).
        const std::vector<int64_t> table{groups, n};
        View s2 = sv, o2 = ov;
        const auto as_rows = [&](View &v) {  // [1] or [n]: a [1, 1] or [1, n] view
            if (v.dims.size() == 1) {
                v.dims.insert(v.dims.begin(), 1);
                v.strides.insert(v.strides.begin(), 0);
            }
        };
        as_rows(s2);
        const std::vector<float> scale = read_as<float>(mem, s2, table);
        std::vector<float> offset(scale.size(), 0.0f);
        if (has_offset) {
            as_rows(o2);
            offset = read_as<float>(mem, o2, table);
        }
        std::vector<float> bias(size_t(n), 0.0f);
        if (has_bias) bias = read_as<float>(mem, bv, std::vector<int64_t>{n});
        std::vector<float> deq(w.size());  // [k, n], rounded to x's dtype
        for (int64_t r = 0; r < k; ++r) {
            const int64_t grp = g ? r / g : 0;
            for (int64_t c = 0; c < n; ++c) {
                const size_t q = size_t(grp * n + c);
                deq[size_t(r * n + c)] = rounded(t, (w[size_t(r * n + c)] + offset[q]) * scale[q]);
            }
        }
        std::vector<float> out(size_t(m * n));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t c = 0; c < n; ++c) {
                float sum = 0;
                for (int64_t r = 0; r < k; ++r)
                    sum += a[size_t(i * k + r)] * deq[size_t(r * n + c)];
                out[size_t(i * n + c)] = sum + bias[size_t(c)];
            }
        write_as(mem, yv, out);
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(WeightQuantBatchMatmulV2)

}  // extern "C"
