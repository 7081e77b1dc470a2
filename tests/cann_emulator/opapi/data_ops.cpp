// The aclnn operators that convert, copy and build tensors (ops-math; libopapi.so in CANN 8.1,
// libopapi_math.so in 8.5): Cast, InplaceCopy, Cat, Arange, OneHot. What each computes:
// opapi/operator_rules.hpp.
#include <cmath>
#include <cstring>

#include "core/abi_declarations.hpp"
#include "opapi/kernels.hpp"
#include "opapi/phase_one.hpp"

GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_EMU_DECLARE_OPERATOR)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace rules = gguftool::cann_emulator::rules;

namespace {

StreamTask cast_kernel(View in, View out) {
    return [=](const DeviceMemory &m) -> std::string {
        if (out.empty()) return "";
        const std::byte *src = m.host(in.data);
        std::byte *dst = m.host(out.data);
        visit_dtype(in.dtype, [&]<class S>(std::type_identity<S>) {
            visit_dtype(out.dtype, [&]<class D>(std::type_identity<D>) {
                std::vector<D> values(size_t(out.numel()));
                for_each_offset(in, out.dims, [&](size_t k, int64_t at) {
                    values[k] = convert<D>(load<S>(src + at * sizeof(S)));
                });
                for_each_offset(out, out.dims, [&](size_t k, int64_t at) {
                    store<D>(dst + at * sizeof(D), values[k]);
                });
            });
        });
        return "";
    };
}

// Arange's length, ceil((end - start) / step), or -1 with `why` set.
int64_t arange_length(const ScalarValue &start, const ScalarValue &end, const ScalarValue &step,
                      bool integral, std::string &why) {
    if (integral) {
        const int64_t a = scalar_as<int64_t>(start), e = scalar_as<int64_t>(end),
                      s = scalar_as<int64_t>(step);
        if (s == 0) {
            why = "step is 0";
            return -1;
        }
        if ((s > 0 && e < a) || (s < 0 && e > a)) {
            why = str("step ", s, " points away from end ", e, " (start ", a, ")");
            return -1;
        }
        const int64_t span = e - a;
        return span / s + (span % s != 0);
    }
    const double a = scalar_as<double>(start), e = scalar_as<double>(end),
                 s = scalar_as<double>(step);
    if (s == 0 || !std::isfinite(a) || !std::isfinite(e) || !std::isfinite(s)) {
        why = "start, end and step must be finite and step nonzero";
        return -1;
    }
    const double n = std::ceil((e - a) / s);
    if (n < 0) {
        why = str("step ", s, " points away from end ", e, " (start ", a, ")");
        return -1;
    }
    return int64_t(n);
}

}  // namespace

extern "C" {

aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype,
                                      aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
    PhaseOne p("aclnnCast", workspaceSize, executor);
    const View a = p.tensor(self, "self"), o = p.tensor(out, "out", true);
    p.dtype_in(a.dtype, "self", rules::kCast);
    p.dtype_in(o.dtype, "out", rules::kCast);
    p.check(dtype == o.dtype,
            str("dtype ", dtype_name(dtype), " differs from out's dtype ", dtype_name(o.dtype)));
    p.same_shape(a, "self", o, "out");
    return p.finish(staging_bytes(o), rules::cast_on_aicore(p.family(), a.dtype, o.dtype),
                    cast_kernel(a, o));
}
GGUFTOOL_EMU_PHASE_TWO(Cast)

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnInplaceCopy", workspaceSize, executor);
    const View r = p.tensor(selfRef, "selfRef", true), s = p.tensor(src, "src");
    p.dtype_in(r.dtype, "selfRef", rules::kInplaceCopy);
    p.dtype_in(s.dtype, "src", rules::kInplaceCopy);
    p.check(s.dtype == r.dtype, str("src's dtype ", dtype_name(s.dtype), " differs from selfRef's ",
                                    dtype_name(r.dtype), " (the emulation copies one dtype)"));
    p.broadcasts_to({{&r, "selfRef"}, {&s, "src"}}, r);
    return p.finish(staging_bytes(r), true, [=](const DeviceMemory &m) -> std::string {
        write_raw(m, r, read_raw(m, s, r.dims));
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(InplaceCopy)

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnCat", workspaceSize, executor);
    const std::vector<View> in = p.tensor_list(tensors, "tensors");
    const View o = p.tensor(out, "out", true);
    p.check(!in.empty(), "tensors is an empty list");
    p.dtype_in(o.dtype, "out", rules::kCat);
    const int64_t d = normalize_dim(dim, o.dims.size());
    p.check(d >= 0,
            str("dim ", dim, " is outside [-rank, rank) for out's shape ", shape_text(o.dims)));
    int64_t total = 0;
    for (size_t i = 0; i < in.size() && p; ++i) {
        const View &t = in[i];
        p.check(t.dtype == o.dtype,
                str("tensors[", i, "] has dtype ", dtype_name(t.dtype), " but out ",
                    dtype_name(o.dtype), " (the emulation joins one dtype)"));
        bool fits = t.dims.size() == o.dims.size();
        for (size_t k = 0; fits && k < t.dims.size(); ++k)
            fits = int64_t(k) == d || t.dims[k] == o.dims[k];
        p.check(fits, str("tensors[", i, "]'s shape ", shape_text(t.dims), " does not match out's ",
                          shape_text(o.dims), " off dim ", d));
        if (p) total += t.dims[size_t(d)];
    }
    if (p)
        p.check(total == o.dims[size_t(d)], str("the tensors' sizes along dim ", d, " add up to ",
                                                total, ", out's is ", o.dims[size_t(d)]));
    return p.finish(staging_bytes(o), true, [=](const DeviceMemory &m) -> std::string {
        std::vector<std::vector<std::byte>> parts;
        for (const View &t : in) parts.push_back(read_raw(m, t, t.dims));
        View part = o;
        for (size_t i = 0; i < in.size(); ++i) {
            part.dims[size_t(d)] = in[i].dims[size_t(d)];
            write_raw(m, part, parts[i]);
            part.offset += part.dims[size_t(d)] * o.strides[size_t(d)];
        }
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(Cat)

aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar *start, const aclScalar *end,
                                        const aclScalar *step, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    PhaseOne p("aclnnArange", workspaceSize, executor);
    const ScalarValue a = p.scalar(start, "start"), e = p.scalar(end, "end"),
                      s = p.scalar(step, "step");
    const View o = p.tensor(out, "out", true);
    p.dtype_in(a.dtype, "start", rules::kArangeScalar);
    p.dtype_in(e.dtype, "end", rules::kArangeScalar);
    p.dtype_in(s.dtype, "step", rules::kArangeScalar);
    p.dtype_in(o.dtype, "out", rules::kArangeOut);
    p.check(o.dims.size() == 1, str("out's shape ", shape_text(o.dims), " is not 1-D"));
    const bool integral = !is_floating(a.dtype) && !is_floating(e.dtype) && !is_floating(s.dtype);
    if (p) {
        std::string why;
        const int64_t n = arange_length(a, e, s, integral, why);
        p.check(n >= 0, why);
        p.check(n < 0 || n == o.dims[0], str("Arange gives ceil((end - start) / step) = ", n,
                                             " values but out has ", o.dims[0]));
    }
    const bool in_integers = integral && is_integral(o.dtype);
    return p.finish(0, true, [=](const DeviceMemory &m) -> std::string {
        const size_t n = size_t(o.dims[0]);
        if (in_integers) {
            std::vector<int64_t> v(n);
            const int64_t first = scalar_as<int64_t>(a), delta = scalar_as<int64_t>(s);
            for (size_t i = 0; i < n; ++i)
                v[i] = int64_t(uint64_t(first) + uint64_t(i) * uint64_t(delta));
            write_as(m, o, v);
        } else {
            std::vector<double> v(n);
            const double first = scalar_as<double>(a), delta = scalar_as<double>(s);
            for (size_t i = 0; i < n; ++i) v[i] = first + double(i) * delta;
            write_as(m, o, v);
        }
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(Arange)

aclnnStatus aclnnOneHotGetWorkspaceSize(const aclTensor *self, int numClasses,
                                        const aclTensor *onValue, const aclTensor *offValue,
                                        int64_t axis, aclTensor *out, uint64_t *workspaceSize,
                                        aclOpExecutor **executor) {
    PhaseOne p("aclnnOneHot", workspaceSize, executor);
    const View x = p.tensor(self, "self"), on = p.tensor(onValue, "onValue"),
               off = p.tensor(offValue, "offValue"), o = p.tensor(out, "out", true);
    p.dtype_in(x.dtype, "self", rules::kOneHotIndex);
    p.dtype_in(on.dtype, "onValue", rules::kOneHotValues);
    p.dtype_in(off.dtype, "offValue", rules::kOneHotValues);
    p.dtype_in(o.dtype, "out", rules::kOneHotValues);
    p.check(on.dtype == o.dtype && off.dtype == o.dtype,
            str("onValue (", dtype_name(on.dtype), ") and offValue (", dtype_name(off.dtype),
                ") must have out's dtype ", dtype_name(o.dtype)));
    p.check(x.dims.size() < kMaxRank, str("self's rank ", x.dims.size(), " exceeds 7"));
    p.check(!on.empty() && !off.empty(), "onValue and offValue must have an element");
    p.check(numClasses >= (x.empty() ? 1 : 0), str("numClasses ", numClasses, " is too small"));
    const int64_t rank = int64_t(x.dims.size());
    p.check(axis >= -1 && axis <= rank, str("axis ", axis, " is outside [-1, ", rank, "]"));
    const size_t at = size_t(axis < 0 ? rank : axis);
    std::vector<int64_t> expected = x.dims;
    if (p) expected.insert(expected.begin() + ptrdiff_t(at), numClasses);
    p.check(expected == o.dims,
            str("out's shape ", shape_text(o.dims), " is not ", shape_text(expected),
                " (self's with numClasses at axis ", axis, ")"));
    const bool aicore = rules::kOneHotAicoreIndex.contains(x.dtype);
    return p.finish(staging_bytes(o), aicore, [=](const DeviceMemory &m) -> std::string {
        const std::vector<int64_t> index = read_as<int64_t>(m, x, x.dims);
        const std::vector<std::byte> on_bytes =
            read_raw(m, on, std::vector<int64_t>(on.dims.size(), 1));
        const std::vector<std::byte> off_bytes =
            read_raw(m, off, std::vector<int64_t>(off.dims.size(), 1));
        int64_t outer = 1, inner = 1;
        for (size_t i = 0; i < x.dims.size(); ++i) (i < at ? outer : inner) *= x.dims[i];
        const size_t size = o.element_size();
        std::vector<std::byte> bytes(size_t(o.numel()) * size);
        for (int64_t u = 0; u < outer; ++u)
            for (int64_t k = 0; k < numClasses; ++k)
                for (int64_t n = 0; n < inner; ++n) {
                    const int64_t i = index[size_t(u * inner + n)];
                    if (i < 0)
                        return str("self[", u * inner + n, "] is ", i, " (a negative index)");
                    const std::vector<std::byte> &v = i == k ? on_bytes : off_bytes;
                    std::memcpy(bytes.data() + size_t((u * numClasses + k) * inner + n) * size,
                                v.data(), size);
                }
        write_raw(m, o, bytes);
        return "";
    });
}
GGUFTOOL_EMU_PHASE_TWO(OneHot)

}  // extern "C"
