// libnnopbase.so's tensor, scalar and tensor-list objects (both layouts). aclCreateTensor checks
// what the operators rely on: at most 8 dims, non-negative dims, strides and offset (in elements),
// format ND, a known dtype, and data a 32-byte aligned device address with the whole view inside
// the storage dims and the storage inside one live allocation. An empty view may have null data.
#include "core/abi_declarations.hpp"
#include "core/emulator.hpp"
#include "core/errors.hpp"

GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_EMU_DECLARE_FUNCTION)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;

namespace {

constexpr uint64_t kMaxDims = 8;
constexpr uintptr_t kDataAlignment = 32;

Emulator &emu() {
    return Emulator::instance();
}

// "" when the dims are acceptable, else why not.
std::string check_dims(const char *name, const int64_t *dims, uint64_t n) {
    if (n > kMaxDims) return str(name, "Num ", n, " exceeds ", kMaxDims);
    if (n && !dims) return str(name, " is null but ", name, "Num is ", n);
    for (uint64_t i = 0; i < n; ++i)
        if (dims[i] < 0) return str(name, "[", i, "] is ", dims[i], " (must be non-negative)");
    return "";
}

std::string check_tensor(const View &v) {
    if (v.offset < 0) return str("offset ", v.offset, " is negative");
    for (size_t i = 0; i < v.strides.size(); ++i)
        if (v.strides[i] < 0)
            return str("stride[", i, "] is ", v.strides[i], " (must be non-negative)");
    if (v.empty()) return "";
    const void *data = reinterpret_cast<const void *>(v.data);
    if (!v.data) return "tensorData is null but the view has elements";
    if (!emu().memory.is_device_address(v.data))
        return str("tensorData ", hex(data),
                   " is a host address, not device memory (allocate with aclrtMalloc)");
    if (v.data % kDataAlignment) return str("tensorData ", hex(data), " is not 32-byte aligned");
    if (v.last_element() >= v.storage_numel())
        return str("the view ", v.describe(), " reaches element ", v.last_element(),
                   " but the storage dims ", shape_text(v.storage_dims), " hold ",
                   v.storage_numel(), " elements");
    const uint64_t storage_bytes = dtype_bytes(v.dtype, v.storage_numel());
    if (std::string why = emu().memory.check(v.data, storage_bytes); !why.empty())
        return str("storage of ", storage_bytes, " bytes: ", why);
    return "";
}

// Destroying an object an executor still needs, or one a tensor list owns, is refused.
aclnnStatus refuse_held(const char *f, const char *what, uintptr_t h, const Holds &holds) {
    return fail(kAclnnErrParamInvalid, f,
                str(what, " ", hex(h), " is still needed by ", holds.count,
                    " executor(s) not yet launched (the latest from ", holds.latest,
                    "GetWorkspaceSize): launch them first"));
}

}  // namespace

extern "C" {

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData) {
    constexpr const char *f = "aclCreateTensor";
    Emulator &e = emu();
    auto lock = e.lock();
    std::string why = check_dims("viewDims", viewDims, viewDimsNum);
    if (why.empty()) why = check_dims("storageDims", storageDims, storageDimsNum);
    if (why.empty() && viewDimsNum && !stride) why = "stride is null";
    if (why.empty() && !find_dtype(dataType))
        why = str("dataType ", int(dataType), " is not a data type the emulation knows");
    if (why.empty() && format != ACL_FORMAT_ND)
        why = str("format ", int(format), " is not ACL_FORMAT_ND (the only one emulated)");
    View v;
    if (why.empty()) {
        v.dtype = dataType;
        v.dims.assign(viewDims, viewDims + viewDimsNum);
        v.strides.assign(stride, stride + viewDimsNum);
        v.offset = offset;
        v.storage_dims.assign(storageDims, storageDims + storageDimsNum);
        v.data = reinterpret_cast<uintptr_t>(tensorData);
        why = check_tensor(v);
    }
    if (!why.empty()) {
        fail(0, f, why);
        return nullptr;
    }
    const uintptr_t h = e.handles.issue(HandleKind::tensor);
    if (!h) {
        fail(0, f, "the emulation's handle space is used up");
        return nullptr;
    }
    e.objects.tensors[h].view = std::move(v);
    return reinterpret_cast<aclTensor *>(h);
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
    constexpr const char *f = "aclDestroyTensor";
    Emulator &e = emu();
    auto lock = e.lock();
    if (!tensor) return kAclSuccess;
    const uintptr_t h = reinterpret_cast<uintptr_t>(tensor);
    auto it = e.objects.tensors.find(h);
    if (it == e.objects.tensors.end())
        return fail(kAclnnErrParamInvalid, f, not_live(e.handles, h, HandleKind::tensor));
    if (it->second.list)
        return fail(kAclnnErrParamInvalid, f,
                    str("tensor ", hex(h), " belongs to tensor list ", hex(it->second.list),
                        ", which destroys it (aclDestroyTensorList)"));
    if (it->second.holds.count) return refuse_held(f, "tensor", h, it->second.holds);
    e.objects.tensors.erase(it);
    return kAclSuccess;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
    constexpr const char *f = "aclCreateScalar";
    Emulator &e = emu();
    auto lock = e.lock();
    if (!value) {
        fail(0, f, "value is null");
        return nullptr;
    }
    if (!find_dtype(dataType) || dataType == ACL_INT4) {
        fail(0, f,
             str("dataType ", int(dataType), " is not a scalar data type the emulation knows"));
        return nullptr;
    }
    if (e.memory.is_device_address(value)) {
        fail(0, f, str("value ", hex(value), " is device memory; a scalar's value is on the host"));
        return nullptr;
    }
    const uintptr_t h = e.handles.issue(HandleKind::scalar);
    if (!h) {
        fail(0, f, "the emulation's handle space is used up");
        return nullptr;
    }
    ScalarObject &s = e.objects.scalars[h];
    s.value.dtype = dataType;
    std::memcpy(s.value.bytes.data(), value, dtype_size(dataType));
    return reinterpret_cast<aclScalar *>(h);
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
    constexpr const char *f = "aclDestroyScalar";
    Emulator &e = emu();
    auto lock = e.lock();
    if (!scalar) return kAclSuccess;
    const uintptr_t h = reinterpret_cast<uintptr_t>(scalar);
    auto it = e.objects.scalars.find(h);
    if (it == e.objects.scalars.end())
        return fail(kAclnnErrParamInvalid, f, not_live(e.handles, h, HandleKind::scalar));
    if (it->second.holds.count) return refuse_held(f, "scalar", h, it->second.holds);
    e.objects.scalars.erase(it);
    return kAclSuccess;
}

// The list keeps copies of the pointers and owns the tensors: aclDestroyTensorList destroys them
// (its documentation: they need not be destroyed again).
aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size) {
    constexpr const char *f = "aclCreateTensorList";
    Emulator &e = emu();
    auto lock = e.lock();
    if (size && !value) {
        fail(0, f, str("value is null but size is ", size));
        return nullptr;
    }
    std::vector<uintptr_t> tensors;
    for (uint64_t i = 0; i < size; ++i) {
        const uintptr_t t = reinterpret_cast<uintptr_t>(value[i]);
        auto it = e.objects.tensors.find(t);
        std::string why;
        if (!value[i])
            why = "is null";
        else if (it == e.objects.tensors.end())
            why = not_live(e.handles, t, HandleKind::tensor);
        else if (it->second.list)
            why = str("already belongs to tensor list ", hex(it->second.list));
        else if (std::find(tensors.begin(), tensors.end(), t) != tensors.end())
            why = "appears twice";
        if (!why.empty()) {
            fail(0, f, str("value[", i, "] ", why));
            return nullptr;
        }
        tensors.push_back(t);
    }
    const uintptr_t h = e.handles.issue(HandleKind::tensor_list);
    if (!h) {
        fail(0, f, "the emulation's handle space is used up");
        return nullptr;
    }
    for (uintptr_t t : tensors) e.objects.tensors[t].list = h;
    e.objects.lists[h].tensors = std::move(tensors);
    return reinterpret_cast<aclTensorList *>(h);
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array) {
    constexpr const char *f = "aclDestroyTensorList";
    Emulator &e = emu();
    auto lock = e.lock();
    if (!array) return kAclSuccess;
    const uintptr_t h = reinterpret_cast<uintptr_t>(array);
    auto it = e.objects.lists.find(h);
    if (it == e.objects.lists.end())
        return fail(kAclnnErrParamInvalid, f, not_live(e.handles, h, HandleKind::tensor_list));
    if (it->second.holds.count) return refuse_held(f, "tensor list", h, it->second.holds);
    for (uintptr_t t : it->second.tensors) {
        auto tensor = e.objects.tensors.find(t);
        if (tensor->second.holds.count)
            return refuse_held(f, "its tensor", t, tensor->second.holds);
    }
    for (uintptr_t t : it->second.tensors) e.objects.tensors.erase(t);
    e.objects.lists.erase(it);
    return kAclSuccess;
}

}  // extern "C"
