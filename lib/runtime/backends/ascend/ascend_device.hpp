// One Ascend device as the backend drives it: CANN initialised, the device opened, one stream that
// every operator is issued on, device memory whose frees wait for the stream, a workspace reused
// by consecutive operators, and aclnn launches counted (internal to the Ascend backend).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cann_loader.hpp"
#include "gguftool/data_type.hpp"
#include "gguftool/error.hpp"

namespace gguftool::runtime::ascend {

// The SoC families CANN's operator documentation tells apart (the product lists of the aclnn
// pages in hicann/ops-math and hicann/ops-nn).
enum class SocFamily {
    a2,    // Ascend910B*, Ascend910_93* (Atlas A2/A3, DAV_2201)
    p310,  // Ascend310P* (Atlas inference products, DAV_2002)
    t910,  // Ascend910 (Atlas training products, DAV_1001)
    a950,  // Ascend950*, Ascend910_95 (DAV_3510)
    other,
};
SocFamily soc_family(const std::string &soc);

class Device {
public:
    explicit Device(int device);
    ~Device();
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    const Cann &api() const { return api_; }
    int id() const { return id_; }
    const std::string &soc() const { return soc_; }
    SocFamily family() const { return family_; }

    // Device memory (nullptr for 0 bytes). free_later releases after the next synchronize, since
    // operators already issued may still use it.
    void *malloc(size_t bytes);
    void free_later(void *ptr);
    void copy_to_device(void *dst, const void *src, size_t bytes);
    void copy_to_host(void *dst, const void *src, size_t bytes);  // synchronizes first

    // Waits for the stream; then releases what waited for it. Throws with CANN's message.
    void synchronize();

    // One aclnn operator: phase one (GetWorkspaceSize), the workspace, phase two on the stream.
    template <class Workspace, class... Args>
    void launch(const char *op, Workspace *get_workspace, cann::fn::aclnnLaunch *run,
                Args &&...args) {
        if (!get_workspace || !run)
            throw Error(
                fmt::format("aclnn{} is not exported by the CANN libraries ({})", op, api_.layout));
        uint64_t size = 0;
        cann::aclOpExecutor *executor = nullptr;
        check_nn(get_workspace(args..., &size, &executor), op, "GetWorkspaceSize");
        check_nn(run(workspace(size), size, executor, stream_), op, "");
        ++calls_;
    }
    // ATB's OnehotOperation (Setup, workspace, Execute on the stream).
    void atb_onehot(const cann::atb_abi::OnehotParam &param,
                    const cann::atb_abi::VariantPack &pack);

    uint64_t calls() const { return calls_; }
    void check(cann::aclError status, const char *what) const;

private:
    void check_nn(cann::aclnnStatus status, const char *op, const char *phase) const;
    void *workspace(uint64_t bytes);

    const Cann &api_;
    int id_;
    cann::aclrtStream stream_ = nullptr;
    std::string soc_;
    SocFamily family_ = SocFamily::other;
    std::vector<void *> pending_free_;
    void *workspace_ = nullptr;
    uint64_t workspace_size_ = 0;
    uint64_t calls_ = 0;
    cann::atb_abi::Context *atb_context_ = nullptr;
    std::vector<cann::atb_abi::Operation *> pending_operations_;  // destroyed after a synchronize
};

// The aclDataType of a runtime dtype, or ACL_DT_UNDEFINED.
cann::aclDataType acl_dtype(DataType t);

}  // namespace gguftool::runtime::ascend
