// libatb.so: ATB's four functions under their mangled names, and the Context and
// OnehotOperation objects behind atb_abi's virtual-call layouts (ATB's atb/infer_op_params.h and
// atb/types.h, and ATB's OnehotOperation operator documentation). Setup checks the variant pack (x
// INT32 or INT64 of rank < 8; `one` and `zero` of x's dtype and shape [1]; the output of x's dtype
// with depth inserted at axis) and returns a workspace size; Execute needs that Setup's pack, a
// context whose stream was set, and the workspace, and enqueues np.eye(depth)[x] moved to axis (1
// and 0 whatever one and zero hold). An x outside [0, depth) is an execution error (the documented
// restriction). ATB logs rather than keeping a message; the emulation also records one for
// aclGetRecentErrMsg.
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/abi_declarations.hpp"
#include "core/errors.hpp"
#include "core/executor.hpp"
#include "opapi/kernels.hpp"

GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_EMU_DECLARE_ATB_FUNCTION)

using namespace gguftool::cann;
using namespace gguftool::cann_emulator;
namespace abi = gguftool::cann::atb_abi;

namespace {

using abi::Status;

Status atb_fail(Status status, const std::string &function, const std::string &problem) {
    return fail(status, "atb::" + function, problem);
}

class EmulatedContext final : public abi::Context {
public:
    Status SetExecuteStream(aclrtStream stream) override {
        auto lock = Emulator::instance().lock();
        stream_ = stream;
        return atb_status::kNoError;
    }
    aclrtStream GetExecuteStream() const override { return stream_; }
    // atb::Context's later virtuals (CANN 8.1), outside the emulated subset: they fail.
    virtual Status SetAsyncTilingCopyStatus(bool) { return outside("SetAsyncTilingCopyStatus"); }
    virtual bool GetAsyncTilingCopyStatus() const {
        outside("GetAsyncTilingCopyStatus");
        return false;
    }
    virtual Status SetExecuteStreams(const std::vector<aclrtStream> &) {
        return outside("SetExecuteStreams");
    }
    virtual std::vector<aclrtStream> GetExecuteStreams() {
        outside("GetExecuteStreams");
        return {};
    }
    virtual Status SetExecuteType(abi::ExecuteType) { return outside("SetExecuteType"); }
    virtual abi::ExecuteType GetExecuteType() {
        outside("GetExecuteType");
        return abi::EXECUTE_NORMAL;
    }

private:
    static Status outside(const char *f) {
        return atb_fail(atb_status::kInternalError, str("Context::", f),
                        "is outside the CANN emulation's subset of ATB");
    }
    aclrtStream stream_ = nullptr;
};

// A tensor's elements, or nullopt when its SVector is inconsistent.
template <class T>
std::optional<std::span<const T>> elements(const abi::SVector<T> &v) {
    if (v.heap_) return std::span<const T>(v.heap_, v.size_);
    if (v.size_ > abi::kSVectorSize) return std::nullopt;
    return std::span<const T>(v.storage_, v.size_);
}

bool same(const abi::Tensor &a, const abi::Tensor &b) {
    return a.desc.dtype == b.desc.dtype && a.desc.format == b.desc.format &&
           a.desc.shape.dimNum == b.desc.shape.dimNum &&
           std::equal(a.desc.shape.dims, a.desc.shape.dims + a.desc.shape.dimNum,
                      b.desc.shape.dims) &&
           a.deviceData == b.deviceData && a.dataSize == b.dataSize;
}

std::vector<int64_t> dims_of(const abi::TensorDesc &d) {
    return {d.shape.dims, d.shape.dims + std::min<uint64_t>(d.shape.dimNum, abi::kMaxDim)};
}

// A dense view of an ATB tensor (ATB tensors are contiguous).
View view_of(const abi::Tensor &t) {
    View v;
    v.dtype = t.desc.dtype;
    v.dims = dims_of(t.desc);
    v.strides.resize(v.dims.size());
    int64_t step = 1;
    for (size_t i = v.dims.size(); i-- > 0;) {
        v.strides[i] = step;
        step *= v.dims[i];
    }
    v.storage_dims = {v.numel()};
    v.data = reinterpret_cast<uintptr_t>(t.deviceData);
    return v;
}

class OnehotOperation final : public abi::Operation {
public:
    explicit OnehotOperation(const abi::OnehotParam &param) : param_(param) {}
    std::string GetName() const override { return "OnehotOperation"; }
    Status InferShape(const abi::SVector<abi::TensorDesc> &in,
                      abi::SVector<abi::TensorDesc> &out) const override;
    uint32_t GetInputNum() const override { return 3; }
    uint32_t GetOutputNum() const override { return 1; }
    Status Setup(const abi::VariantPack &pack, uint64_t &workspaceSize,
                 abi::Context *context) override;
    Status Execute(const abi::VariantPack &pack, uint8_t *workspace, uint64_t workspaceSize,
                   abi::Context *context) override;

private:
    // The output's desc for input x, or a failure status (with the message recorded).
    Status infer(const abi::TensorDesc &x, abi::TensorDesc &out, const char *function) const;
    Status check_tensor_memory(const abi::Tensor &t, const char *name, const char *function) const;

    struct Prepared {
        std::vector<abi::Tensor> in, out;
        abi::Context *context = nullptr;
        uint64_t workspace = 0;
    };
    abi::OnehotParam param_;
    std::optional<Prepared> setup_;
};

// The live objects (under the emulation's lock).
std::set<const abi::Context *> &contexts() {
    static auto *s = new std::set<const abi::Context *>;
    return *s;
}
std::set<const abi::Operation *> &operations() {
    static auto *s = new std::set<const abi::Operation *>;
    return *s;
}

Status OnehotOperation::infer(const abi::TensorDesc &x, abi::TensorDesc &out,
                              const char *function) const {
    if (x.dtype != ACL_INT32 && x.dtype != ACL_INT64)
        return atb_fail(
            atb_status::kInvalidTensorDtype, function,
            str("x has dtype ", dtype_name(x.dtype), " (OnehotOperation takes INT32 or INT64)"));
    if (x.format != ACL_FORMAT_ND)
        return atb_fail(atb_status::kInvalidTensorFormat, function, "x's format is not ND");
    const uint64_t rank = x.shape.dimNum;
    if (rank < 1 || rank >= abi::kMaxDim)
        return atb_fail(atb_status::kInvalidTensorDimNum, function,
                        str("x has ", rank, " dims (OnehotOperation takes 1 to 7)"));
    for (uint64_t i = 0; i < rank; ++i)
        if (x.shape.dims[i] <= 0)
            return atb_fail(
                atb_status::kInvalidTensorDim, function,
                str("x's dim ", i, " is ", x.shape.dims[i], " (ATB's dims are positive)"));
    const int64_t r = int64_t(rank), axis = param_.axis;
    if (axis >= r + 1 || axis <= -(r + 1))
        return atb_fail(
            atb_status::kInvalidParam, function,
            str("axis ", axis, " is outside (-", r + 1, ", ", r + 1, ") for x of rank ", r));
    if (param_.depth <= 0)
        return atb_fail(atb_status::kInvalidParam, function,
                        str("depth ", param_.depth, " is not positive"));
    const uint64_t at = uint64_t(axis < 0 ? axis + r + 1 : axis);
    out = x;
    out.shape.dimNum = rank + 1;
    for (uint64_t i = rank + 1; i-- > 0;)
        out.shape.dims[i] = i < at ? x.shape.dims[i] : i == at ? param_.depth : x.shape.dims[i - 1];
    return atb_status::kNoError;
}

Status OnehotOperation::InferShape(const abi::SVector<abi::TensorDesc> &in,
                                   abi::SVector<abi::TensorDesc> &out) const {
    auto lock = Emulator::instance().lock();
    const auto descs = elements(in);
    if (!descs || descs->size() != 3)
        return atb_fail(atb_status::kInvalidInTensorNum, "OnehotOperation::InferShape",
                        "takes 3 input descs (x, one, zero)");
    abi::TensorDesc y;
    if (Status s = infer((*descs)[0], y, "OnehotOperation::InferShape")) return s;
    (out.heap_ ? out.heap_ : out.storage_)[0] = y;
    out.size_ = 1;
    return atb_status::kNoError;
}

Status OnehotOperation::check_tensor_memory(const abi::Tensor &t, const char *name,
                                            const char *function) const {
    const View v = view_of(t);
    if (t.dataSize < v.bytes())
        return atb_fail(
            atb_status::kInvalidTensorSize, function,
            str(name, "'s dataSize ", t.dataSize, " is less than its ", v.bytes(), " bytes"));
    if (std::string why = Emulator::instance().memory.check(v.data, v.bytes()); !why.empty())
        return atb_fail(atb_status::kInvalidTensorAddr, function,
                        str(name, "'s deviceData: ", why));
    return atb_status::kNoError;
}

Status OnehotOperation::Setup(const abi::VariantPack &pack, uint64_t &workspaceSize,
                              abi::Context *context) {
    constexpr const char *f = "OnehotOperation::Setup";
    Emulator &e = Emulator::instance();
    auto lock = e.lock();
    setup_.reset();
    if (e.require_device(str("atb::", f))) return atb_status::kRtFail;
    if (!context || !contexts().count(context))
        return atb_fail(atb_status::kInvalidContextAddr, f,
                        str("context ", hex(context), " is not a live context"));
    const auto in = elements(pack.inTensors), out = elements(pack.outTensors);
    if (!in || in->size() != 3)
        return atb_fail(
            atb_status::kInvalidInTensorNum, f,
            str("takes 3 inputs (x, one, zero), got ", in ? in->size() : pack.inTensors.size_));
    if (!out || out->size() != 1)
        return atb_fail(atb_status::kInvalidTensorNum, f,
                        str("takes 1 output, got ", out ? out->size() : pack.outTensors.size_));
    const abi::Tensor &x = (*in)[0];
    abi::TensorDesc expected;
    if (Status s = infer(x.desc, expected, f)) return s;
    for (int i = 1; i <= 2; ++i) {
        const abi::TensorDesc &d = (*in)[size_t(i)].desc;
        const char *name = i == 1 ? "one" : "zero";
        if (d.dtype != x.desc.dtype)
            return atb_fail(
                atb_status::kInvalidTensorDtype, f,
                str(name, " has dtype ", dtype_name(d.dtype), ", x ", dtype_name(x.desc.dtype)));
        if (d.shape.dimNum != 1 || d.shape.dims[0] != 1)
            return atb_fail(
                atb_status::kInvalidTensorDim, f,
                str(name, " has shape ", shape_text(dims_of(d)), " (OnehotOperation takes [1])"));
    }
    const abi::Tensor &y = (*out)[0];
    if (y.desc.dtype != x.desc.dtype)
        return atb_fail(atb_status::kInvalidTensorDtype, f,
                        str("the output has dtype ", dtype_name(y.desc.dtype), ", x ",
                            dtype_name(x.desc.dtype)));
    if (y.desc.format != ACL_FORMAT_ND)
        return atb_fail(atb_status::kInvalidTensorFormat, f, "the output's format is not ND");
    if (dims_of(y.desc) != dims_of(expected))
        return atb_fail(
            atb_status::kInvalidTensorDim, f,
            str("the output has shape ", shape_text(dims_of(y.desc)), ", not ",
                shape_text(dims_of(expected)), " (x's with depth at axis ", param_.axis, ")"));
    const char *names[] = {"x", "one", "zero"};
    for (size_t i = 0; i < 3; ++i)
        if (Status s = check_tensor_memory((*in)[i], names[i], f)) return s;
    if (Status s = check_tensor_memory(y, "the output", f)) return s;
    Prepared p;
    p.in.assign(in->begin(), in->end());
    p.out.assign(out->begin(), out->end());
    p.context = context;
    p.workspace = (view_of(y).bytes() + 31) / 32 * 32 + 64;  // tiling data and a staging copy
    workspaceSize = p.workspace;
    setup_ = std::move(p);
    return atb_status::kNoError;
}

Status OnehotOperation::Execute(const abi::VariantPack &pack, uint8_t *workspace,
                                uint64_t workspaceSize, abi::Context *context) {
    constexpr const char *f = "OnehotOperation::Execute";
    Emulator &e = Emulator::instance();
    auto lock = e.lock();
    if (e.require_device(str("atb::", f))) return atb_status::kRtFail;
    if (!setup_)
        return atb_fail(atb_status::kInvalidParam, f,
                        "Setup has not checked a variant pack for this Execute");
    const Prepared p = *setup_;
    const auto in = elements(pack.inTensors), out = elements(pack.outTensors);
    const bool same_pack = in && out && in->size() == p.in.size() && out->size() == p.out.size() &&
                           std::equal(in->begin(), in->end(), p.in.begin(), same) &&
                           std::equal(out->begin(), out->end(), p.out.begin(), same);
    if (!same_pack)
        return atb_fail(atb_status::kInvalidParam, f,
                        "the variant pack differs from the one Setup checked");
    if (context != p.context)
        return atb_fail(atb_status::kInvalidContextAddr, f, "the context differs from Setup's");
    const uintptr_t stream = reinterpret_cast<uintptr_t>(context->GetExecuteStream());
    auto st = e.streams.live.find(stream);
    if (st == e.streams.live.end())
        return atb_fail(
            atb_status::kInvalidStream, f,
            stream ? str("the context's stream: ", not_live(e.handles, stream, HandleKind::stream))
                   : std::string("the context has no stream (SetExecuteStream)"));
    if (std::string why = check_workspace(e, workspace, workspaceSize, p.workspace); !why.empty())
        return atb_fail(workspaceSize < p.workspace ? atb_status::kInvalidWorkspaceSize
                                                    : atb_status::kInvalidWorkspaceAddr,
                        f, why);
    const char *names[] = {"x", "one", "zero"};
    for (size_t i = 0; i < 3; ++i)
        if (Status s = check_tensor_memory(p.in[i], names[i], f)) return s;
    if (Status s = check_tensor_memory(p.out[0], "the output", f)) return s;

    const View x = view_of(p.in[0]), y = view_of(p.out[0]);
    const int64_t depth = param_.depth, rank = int64_t(x.dims.size());
    const int64_t at = param_.axis < 0 ? param_.axis + rank + 1 : param_.axis;
    Work w;
    w.name = "atb::OnehotOperation";
    w.accesses = {{x.first_byte(), x.end_byte(), false, "x"},
                  {y.first_byte(), y.end_byte(), true, "output"},
                  {reinterpret_cast<uintptr_t>(workspace),
                   reinterpret_cast<uintptr_t>(workspace) + p.workspace, true, "workspace"}};
    w.workspace = reinterpret_cast<uintptr_t>(workspace);
    w.workspace_size = p.workspace;
    w.task = [=](const DeviceMemory &m) -> std::string {
        const std::vector<int64_t> index = read_as<int64_t>(m, x, x.dims);
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < rank; ++i) (i < at ? outer : inner) *= x.dims[size_t(i)];
        std::vector<int64_t> values(size_t(y.numel()));
        for (int64_t u = 0; u < outer; ++u)
            for (int64_t n = 0; n < inner; ++n) {
                const int64_t v = index[size_t(u * inner + n)];
                if (v < 0 || v >= depth)
                    return str("x[", u * inner + n, "] is ", v, ", outside [0, depth ", depth, ")");
                values[size_t((u * depth + v) * inner + n)] = 1;
            }
        write_as(m, y, values);
        return "";
    };
    w.sequence = ++st->second.launched;
    const std::string t = dtype_name(x.dtype);
    e.log_call(str(w.name, " ", t, " ", t, " ", t, " ", t, " aicore"));
    st->second.queue.push_back(std::move(w));
    setup_.reset();  // one Execute per Setup
    return atb_status::kNoError;
}

}  // namespace

Status gguftool_emu_atbCreateContext(abi::Context **context) {
    Emulator &e = Emulator::instance();
    auto lock = e.lock();
    if (e.require_device("atb::CreateContext")) return atb_status::kRtFail;
    if (!context) return atb_fail(atb_status::kInvalidParam, "CreateContext", "context is null");
    auto c = std::make_unique<EmulatedContext>();
    contexts().insert(c.get());
    *context = c.release();
    return atb_status::kNoError;
}

Status gguftool_emu_atbDestroyContext(abi::Context *context) {
    auto lock = Emulator::instance().lock();
    if (!context) return atb_status::kNoError;
    if (!contexts().erase(context))
        return atb_fail(atb_status::kInvalidContextAddr, "DestroyContext",
                        str(hex(context), " is not a live context"));
    delete context;
    return atb_status::kNoError;
}

Status gguftool_emu_atbCreateOnehotOperation(const abi::OnehotParam &opParam,
                                             abi::Operation **operation) {
    auto lock = Emulator::instance().lock();
    constexpr const char *f = "CreateOperation<infer::OnehotParam>";
    if (!operation) return atb_fail(atb_status::kInvalidParam, f, "operation is null");
    if (opParam.axis < -1)
        return atb_fail(atb_status::kInvalidParam, f, str("axis ", opParam.axis, " is below -1"));
    auto op = std::make_unique<OnehotOperation>(opParam);
    operations().insert(op.get());
    *operation = op.release();
    return atb_status::kNoError;
}

Status gguftool_emu_atbDestroyOperation(abi::Operation *operation) {
    auto lock = Emulator::instance().lock();
    if (!operation) return atb_status::kNoError;
    if (!operations().erase(operation))
        return atb_fail(atb_status::kInvalidOperationAddr, "DestroyOperation",
                        str(hex(operation), " is not a live operation"));
    delete operation;
    return atb_status::kNoError;
}
