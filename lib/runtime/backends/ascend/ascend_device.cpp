// The device: CANN initialisation, the stream, memory, copies and synchronization.
#include "ascend_device.hpp"

#include <mutex>

namespace gguftool::runtime::ascend {

SocFamily soc_family(const std::string &soc) {
    if (soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93")) return SocFamily::a2;
    if (soc.starts_with("Ascend310P")) return SocFamily::p310;
    if (soc.starts_with("Ascend950") || soc.starts_with("Ascend910_95")) return SocFamily::a950;
    if (soc.starts_with("Ascend910")) return SocFamily::t910;
    return SocFamily::other;
}

cann::aclDataType acl_dtype(DataType t) {
    using namespace cann;
    switch (t) {
        case DataType::float32:
            return ACL_FLOAT;
        case DataType::float16:
            return ACL_FLOAT16;
        case DataType::bfloat16:
            return ACL_BF16;
        case DataType::float64:
            return ACL_DOUBLE;
        case DataType::int8:
            return ACL_INT8;
        case DataType::uint8:
            return ACL_UINT8;
        case DataType::int16:
            return ACL_INT16;
        case DataType::uint16:
            return ACL_UINT16;
        case DataType::int32:
            return ACL_INT32;
        case DataType::uint32:
            return ACL_UINT32;
        case DataType::int64:
            return ACL_INT64;
        case DataType::uint64:
            return ACL_UINT64;
        case DataType::bool_:
            return ACL_BOOL;
        default:
            return ACL_DT_UNDEFINED;
    }
}

namespace {

// aclInit is once per process; a device's resources are per Device.
void init_once(const Cann &api) {
    static std::once_flag once;
    static cann::aclError status = cann::kAclSuccess;
    std::call_once(once, [&] { status = api.aclInit(nullptr); });
    if (status != cann::kAclSuccess && status != cann::kAclErrorRepeatInitialize) {
        const char *msg = api.aclGetRecentErrMsg();
        throw Error(fmt::format("aclInit failed with error {}{}", status,
                                msg && *msg ? fmt::format(": {}", msg) : ""));
    }
}

}  // namespace

Device::Device(int device) : api_(load_cann()), id_(device) {
    init_once(api_);
    uint32_t count = 0;
    check(api_.aclrtGetDeviceCount(&count), "aclrtGetDeviceCount");
    if (device < 0 || uint32_t(device) >= count)
        throw Error(fmt::format("there is no Ascend device {} (this machine has {}: 0 to {})",
                                device, count, count ? count - 1 : 0));
    check(api_.aclrtSetDevice(device), "aclrtSetDevice");
    check(api_.aclrtCreateStream(&stream_), "aclrtCreateStream");
    const char *soc = api_.aclrtGetSocName();
    soc_ = soc ? soc : "unknown SoC";
    family_ = soc_family(soc_);
}

Device::~Device() {
    try {
        synchronize();
    } catch (...) {  // nothing to report to from a destructor; memory is released regardless
    }
    for (void *p : pending_free_) api_.aclrtFree(p);
    for (cann::atb_abi::Operation *op : pending_operations_) api_.atbDestroyOperation(op);
    if (workspace_) api_.aclrtFree(workspace_);
    if (atb_context_) api_.atbDestroyContext(atb_context_);
    if (stream_) api_.aclrtDestroyStream(stream_);
    api_.aclrtResetDevice(id_);
}

void Device::check(cann::aclError status, const char *what) const {
    if (status == cann::kAclSuccess) return;
    const char *msg = api_.aclGetRecentErrMsg();
    throw Error(fmt::format("{} failed on Ascend device {} ({}) with error {}{}", what, id_, soc_,
                            status, msg && *msg ? fmt::format(": {}", msg) : ""));
}

void Device::check_nn(cann::aclnnStatus status, const char *op, const char *phase) const {
    if (status == cann::kAclSuccess) return;
    const char *msg = api_.aclGetRecentErrMsg();
    throw Error(fmt::format("aclnn{}{} failed on {} with error {}{}", op, phase, soc_, status,
                            msg && *msg ? fmt::format(": {}", msg) : ""));
}

void *Device::malloc(size_t bytes) {
    if (bytes == 0) return nullptr;
    void *p = nullptr;
    check(api_.aclrtMalloc(&p, bytes, cann::ACL_MEM_MALLOC_HUGE_FIRST),
          fmt::format("aclrtMalloc of {} bytes", bytes).c_str());
    return p;
}

void Device::free_later(void *ptr) {
    if (ptr) pending_free_.push_back(ptr);
}

void Device::copy_to_device(void *dst, const void *src, size_t bytes) {
    if (bytes)
        check(api_.aclrtMemcpy(dst, bytes, src, bytes, cann::ACL_MEMCPY_HOST_TO_DEVICE),
              "aclrtMemcpy (host to device)");
}

void Device::copy_to_host(void *dst, const void *src, size_t bytes) {
    synchronize();
    if (bytes)
        check(api_.aclrtMemcpy(dst, bytes, src, bytes, cann::ACL_MEMCPY_DEVICE_TO_HOST),
              "aclrtMemcpy (device to host)");
}

void Device::synchronize() {
    check(api_.aclrtSynchronizeStream(stream_), "aclrtSynchronizeStream");
    for (void *p : pending_free_) check(api_.aclrtFree(p), "aclrtFree");
    pending_free_.clear();
    for (cann::atb_abi::Operation *op : pending_operations_) api_.atbDestroyOperation(op);
    pending_operations_.clear();
}

// One workspace, grown when an operator needs more: operators on one stream run in order, so
// consecutive ones can share it. A smaller old one is freed once the stream is past it.
void *Device::workspace(uint64_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes > workspace_size_) {
        free_later(workspace_);
        workspace_ = malloc(bytes);
        workspace_size_ = bytes;
    }
    return workspace_;
}

void Device::atb_onehot(const cann::atb_abi::OnehotParam &param,
                        const cann::atb_abi::VariantPack &pack) {
    if (!api_.has_atb) throw Error("ATB (libatb.so) is not loaded");
    if (!atb_context_) {
        if (api_.atbCreateContext(&atb_context_) != 0 || !atb_context_)
            throw Error(fmt::format("atb::CreateContext failed on {}", soc_));
        if (atb_context_->SetExecuteStream(stream_) != 0)
            throw Error(fmt::format("atb::Context::SetExecuteStream failed on {}", soc_));
    }
    cann::atb_abi::Operation *op = nullptr;
    if (api_.atbCreateOnehotOperation(param, &op) != 0 || !op)
        throw Error(fmt::format("atb::CreateOperation(OnehotParam{{axis {}, depth {}}}) failed",
                                param.axis, param.depth));
    pending_operations_.push_back(op);  // destroyed once the stream has run it
    uint64_t size = 0;
    if (const auto s = op->Setup(pack, size, atb_context_); s != 0)
        throw Error(fmt::format("atb OnehotOperation Setup failed on {} with status {}", soc_, s));
    void *ws = workspace(size);
    if (const auto s = op->Execute(pack, static_cast<uint8_t *>(ws), size, atb_context_); s != 0)
        throw Error(
            fmt::format("atb OnehotOperation Execute failed on {} with status {}", soc_, s));
    ++calls_;
}

}  // namespace gguftool::runtime::ascend
