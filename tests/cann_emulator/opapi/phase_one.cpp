#include "opapi/phase_one.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace gguftool::cann_emulator {
namespace {

constexpr uint64_t round_up32(uint64_t v) {
    return (v + 31) / 32 * 32;
}

}  // namespace

uint64_t staging_bytes(const View &v) {
    return round_up32(v.bytes());
}

uint64_t contiguous_copies(std::initializer_list<const View *> views) {
    uint64_t n = 0;
    for (const View *v : views)
        if (!v->contiguous()) n += staging_bytes(*v);
    return n;
}

int64_t normalize_dim(int64_t dim, size_t rank) {
    const int64_t r = int64_t(rank);
    if (dim < -r || dim >= r) return -1;
    return dim < 0 ? dim + r : dim;
}

PhaseOne::PhaseOne(std::string op, uint64_t *workspace_size, aclOpExecutor **executor)
    : lock_(Emulator::instance().lock()),
      op_(std::move(op)),
      workspace_out_(workspace_size),
      executor_out_(executor),
      builder_(op_) {
    Emulator &e = Emulator::instance();
    if (e.require_device(op_ + "GetWorkspaceSize")) {
        status_ = kAclnnErrRuntimeError;
        return;
    }
    soc_ = e.soc;
    if (!workspace_size) failed(kAclnnErrParamNullptr, "workspaceSize is null");
    if (!executor) failed(kAclnnErrParamNullptr, "executor is null");
}

bool PhaseOne::failed(aclnnStatus code, const std::string &problem) {
    if (status_ == kAclSuccess) status_ = fail(code, op_ + "GetWorkspaceSize", problem);
    return false;
}

bool PhaseOne::check(bool ok, const std::string &problem) {
    if (!*this) return false;
    return ok || failed(kAclnnErrParamInvalid, problem);
}

View PhaseOne::tensor(const aclTensor *t, const char *name, bool written) {
    if (!*this) return {};
    if (!t) {
        failed(kAclnnErrParamNullptr, str(name, " is null"));
        return {};
    }
    Emulator &e = Emulator::instance();
    const uintptr_t h = reinterpret_cast<uintptr_t>(t);
    auto it = e.objects.tensors.find(h);
    if (it == e.objects.tensors.end()) {
        failed(kAclnnErrParamInvalid, str(name, ": ", not_live(e.handles, h, HandleKind::tensor)));
        return {};
    }
    const View &v = it->second.view;
    if (!v.empty())
        if (std::string why = e.memory.check(v.first_byte(), v.end_byte() - v.first_byte());
            !why.empty()) {
            failed(kAclnnErrParamInvalid, str(name, " (", v.describe(), "): ", why));
            return {};
        }
    builder_.hold(HandleKind::tensor, h);
    builder_.access(v, written, name);
    dtypes_.append(" ").append(dtype_name(v.dtype));
    return v;
}

ScalarValue PhaseOne::scalar(const aclScalar *s, const char *name) {
    ScalarValue v;
    if (*this && !s) failed(kAclnnErrParamNullptr, str(name, " is null"));
    optional_scalar(s, name, v);
    return v;
}

bool PhaseOne::optional_scalar(const aclScalar *s, const char *name, ScalarValue &value) {
    if (!*this || !s) return false;
    Emulator &e = Emulator::instance();
    const uintptr_t h = reinterpret_cast<uintptr_t>(s);
    auto it = e.objects.scalars.find(h);
    if (it == e.objects.scalars.end())
        return failed(kAclnnErrParamInvalid,
                      str(name, ": ", not_live(e.handles, h, HandleKind::scalar)));
    builder_.hold(HandleKind::scalar, h);
    value = it->second.value;
    return true;
}

std::vector<View> PhaseOne::tensor_list(const aclTensorList *l, const char *name) {
    if (!*this) return {};
    if (!l) {
        failed(kAclnnErrParamNullptr, str(name, " is null"));
        return {};
    }
    Emulator &e = Emulator::instance();
    const uintptr_t h = reinterpret_cast<uintptr_t>(l);
    auto it = e.objects.lists.find(h);
    if (it == e.objects.lists.end()) {
        failed(kAclnnErrParamInvalid,
               str(name, ": ", not_live(e.handles, h, HandleKind::tensor_list)));
        return {};
    }
    builder_.hold(HandleKind::tensor_list, h);
    std::vector<View> views;
    for (size_t i = 0; i < it->second.tensors.size(); ++i) {
        const View &v = e.objects.tensors.at(it->second.tensors[i]).view;
        const std::string what = str(name, "[", i, "]");
        if (!v.empty())
            if (std::string why = e.memory.check(v.first_byte(), v.end_byte() - v.first_byte());
                !why.empty()) {
                failed(kAclnnErrParamInvalid, str(what, " (", v.describe(), "): ", why));
                return {};
            }
        builder_.access(v, false, what);
        dtypes_.append(" ").append(dtype_name(v.dtype));
        views.push_back(v);
    }
    return views;
}

bool PhaseOne::dtype_in(aclDataType d, const char *name, DtypeSet allowed) {
    if (!*this) return false;
    if (allowed.contains(d)) return true;
    return failed(kAclnnErrParamInvalid,
                  str(name, " has dtype ", dtype_name(d), ", which ", op_, " does not support on ",
                      soc_->soc, " (it takes ", allowed.names(), ")"));
}

bool PhaseOne::dtype_in(aclDataType d, const char *name, const rules::PerFamily &allowed) {
    return dtype_in(d, name, allowed.on(soc_ ? soc_->family : SocFamily::ascend910b));
}

bool PhaseOne::available(const rules::PerFamily &family_dtypes) {
    if (!*this) return false;
    if (!family_dtypes.on(soc_->family).empty()) return true;
    return failed(kAclnnErrParamInvalid,
                  str(op_, " is not supported on ", soc_->soc, " (", soc_->product, ")"));
}

aclDataType PhaseOne::promote(aclDataType promoted, const std::string &inputs, DtypeSet allowed) {
    if (!*this) return ACL_DT_UNDEFINED;
    if (promoted == ACL_DT_UNDEFINED) {
        failed(kAclnnErrParamInvalid,
               str("the dtypes of ", inputs, " do not promote to a common type"));
        return ACL_DT_UNDEFINED;
    }
    if (!allowed.contains(promoted)) {
        failed(kAclnnErrParamInvalid, str(inputs, " promote to ", dtype_name(promoted), ", which ",
                                          op_, " does not compute in on ", soc_->soc,
                                          " (it computes in ", allowed.names(), ")"));
        return ACL_DT_UNDEFINED;
    }
    return promoted;
}

bool PhaseOne::castable(aclDataType result, aclDataType out) {
    if (!*this) return false;
    return check(can_cast(result, out), str("the result type ", dtype_name(result),
                                            " cannot be cast to out's dtype ", dtype_name(out)));
}

bool PhaseOne::broadcasts_to(std::initializer_list<std::pair<const View *, const char *>> inputs,
                             const View &out) {
    if (!*this) return false;
    size_t rank = 0;
    for (const auto &[v, name] : inputs) rank = std::max(rank, v->dims.size());
    std::vector<int64_t> shape(rank, 1);
    std::string names;
    for (const auto &[v, name] : inputs) {
        names += (names.empty() ? "" : ", ") + str(name, " ", shape_text(v->dims));
        const size_t lead = rank - v->dims.size();
        for (size_t i = 0; i < v->dims.size(); ++i) {
            int64_t &s = shape[lead + i];
            const int64_t d = v->dims[i];
            if (d == s || d == 1) continue;
            if (s != 1)
                return failed(kAclnnErrParamInvalid,
                              str("the shapes of ", names, " do not broadcast"));
            s = d;
        }
    }
    return check(shape == out.dims, str("the shapes ", names, " broadcast to ", shape_text(shape),
                                        ", but out's shape is ", shape_text(out.dims)));
}

bool PhaseOne::same_shape(const View &a, const char *a_name, const View &b, const char *b_name) {
    return check(a.dims == b.dims, str(a_name, "'s shape ", shape_text(a.dims), " differs from ",
                                       b_name, "'s ", shape_text(b.dims)));
}

aclnnStatus PhaseOne::finish(uint64_t workspace, bool aicore, StreamTask task) {
    if (!*this) return status_;
    const uintptr_t h = builder_.finish(workspace, std::move(task),
                                        str(op_, dtypes_, aicore ? " aicore" : " aicpu"));
    if (!h) {
        failed(kAclnnErrInner, "the emulation's handle space is used up");
        return status_;
    }
    *workspace_out_ = workspace;
    *executor_out_ = reinterpret_cast<aclOpExecutor *>(h);
    return kAclSuccess;
}

}  // namespace gguftool::cann_emulator
