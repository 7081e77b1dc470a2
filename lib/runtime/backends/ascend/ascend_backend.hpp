// The Ascend NPU backend: tensors live in device memory; every operator is one or a few aclnn
// calls (or ATB's OnehotOperation) issued on one stream; DequantizePacked and Unpack run as their
// lowering (their rows answer `lowered`), so the device executes only standard-operator
// primitives. Each ascend_*.cpp file keeps its kernels' rows: the operator, the kernel and its
// capability rule (which dtypes the SoC's operators take, the aclnn exports needed), so that work
// the device cannot do is refused up front, naming the operator, the dtype and the SoC (internal
// to lib/runtime).
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ascend_device.hpp"
#include "gguftool/runtime/backend.hpp"

namespace gguftool::runtime::ascend {

// Device memory of one tensor. Small tensors uploaded from the host keep a host copy (`shadow`):
// shift amounts, masks and OneHot values are then known without a device round trip, and the
// constants derived from them (powers of two, widened copies) are made once and kept in `derived`.
struct AscendBuffer final : DeviceBuffer {
    AscendBuffer(std::shared_ptr<Device> device, size_t bytes);
    ~AscendBuffer() override;
    std::shared_ptr<Device> device;
    void *data = nullptr;  // device address; nullptr when empty
    size_t bytes = 0;
    std::optional<Tensor> shadow;
    std::map<std::string, DeviceTensor> derived;
};

// Largest tensor, in elements, that keeps a host shadow.
inline constexpr uint64_t kShadowElements = 64;

// An aclTensor descriptor over a tensor's buffer (destroyed with the object). A view: its own
// dims, strides and offset in elements; by default the tensor's own shape, dense. Rank 0 is
// described as [1].
class Desc {
public:
    Desc(const Device &device, const DeviceTensor &t);
    Desc(const Device &device, const DeviceTensor &t, const Shape &dims,
         const std::vector<int64_t> &strides, int64_t offset);
    // A view of t's buffer as CANN's `dtype` (one without a runtime DataType: ACL_INT4) over
    // storage of `storage` elements of it.
    Desc(const Device &device, const DeviceTensor &t, cann::aclDataType dtype, const Shape &dims,
         const std::vector<int64_t> &strides, int64_t offset, int64_t storage);
    ~Desc();
    Desc(const Desc &) = delete;
    Desc &operator=(const Desc &) = delete;
    operator cann::aclTensor *() const { return tensor_; }
    // Hands the descriptor to a tensor list, which destroys it (aclDestroyTensorList's doc).
    void release() { tensor_ = nullptr; }

private:
    const Device &device_;
    cann::aclTensor *tensor_ = nullptr;
};

// A host scalar (aclScalar) of `dtype` holding `value` (converted exactly when representable).
class Scalar {
public:
    Scalar(const Device &device, DataType dtype, double value);
    Scalar(const Device &device, DataType dtype, int64_t value);
    ~Scalar();
    Scalar(const Scalar &) = delete;
    Scalar &operator=(const Scalar &) = delete;
    operator cann::aclScalar *() const { return scalar_; }

private:
    void set_float(DataType dtype, double v);
    void set_integer(DataType dtype, int64_t v);
    void create(DataType dtype);
    const Device &device_;
    cann::aclScalar *scalar_ = nullptr;
    alignas(8) unsigned char value_[8] = {};
};

// Row-major strides (in elements) of `shape`.
std::vector<int64_t> dense_strides(const Shape &shape);

AscendBuffer &buffer_of(const DeviceTensor &t);

class AscendBackend final : public Backend {
public:
    explicit AscendBackend(int device);
    std::string name() const override { return "ascend"; }
    std::string description() const override;
    void synchronize() override { device_->synchronize(); }
    uint64_t device_calls() const override { return device_->calls(); }

    DeviceTensor allocate(DataType dtype, const Shape &shape) override;
    DeviceTensor upload(const Tensor &host) override;
    Tensor download(const DeviceTensor &t) override;

    Device &device() { return *device_; }

    // What the kernels share.
    // The host values of a small tensor: its shadow, or a download.
    Tensor host_values(const DeviceTensor &t);
    // A device constant derived from `t`'s host values, made once per buffer under `key`.
    DeviceTensor derived(const DeviceTensor &t, const std::string &key,
                         const std::function<Tensor(const Tensor &)> &make);
    // y = x converted to y's dtype (the Cast kernel: ascend_elementwise.cpp).
    void cast(const DeviceTensor &x, DeviceTensor &y);
    // x converted to `to` (the same tensor when it already is).
    DeviceTensor converted(const DeviceTensor &x, DataType to);
    // A [1] device tensor holding `value`, made once.
    DeviceTensor constant(DataType dtype, int64_t value);

private:
    std::shared_ptr<Device> device_;
    std::map<std::string, DeviceTensor> constants_;
};

// --- The rows: an operator, its kernel and its capability rule ------------------------------

// One dtype condition of a rule: the element type of input `tensor` (kOutput: output 0) must
// satisfy `ok`; `how` says which device operators set the limit.
inline constexpr int kOutput = -1;
struct DtypeRule {
    int tensor;
    bool (*ok)(DataType t, SocFamily f);
    const char *how;
};

// One aclnn operator a kernel launches, needed when `when` holds (always when null); `label`
// names it in the message (default: the operator).
struct Need {
    const char *op;
    bool (*when)(const Cann &a, SocFamily f) = nullptr;
    const char *label = nullptr;
};

// What the Ascend backend answers for an operator: `kind` when nothing is refused, a refusal that
// depends on more than dtypes (checked first), the dtype rules in order, and the aclnn operators
// that must be exported. The first problem found is the answer's reason.
struct AscendRule {
    Capability::Kind kind = Capability::Kind::native;
    std::string (*refuse)(const OpQuery &q, const Device &d) = nullptr;
    std::vector<DtypeRule> dtypes = {};
    std::vector<Need> needs = {};
};

// One row of the Ascend backend (Backend::register_kernel): an operator, its kernel (none for a
// view, a host-side value, or an operator its rule has lowered) and its rule.
struct AscendKernelRow {
    const char *op_type;
    void (*run)(AscendBackend &b, const KernelArgs &args) = nullptr;
    AscendRule rule = {};
};
std::span<const AscendKernelRow> view_rows();  // Identity, ..., Constant (ascend_backend.cpp)
// Cast, the binary operators, Neg, Where; DequantizePacked and Unpack (lowered).
std::span<const AscendKernelRow> elementwise_kernels();
std::span<const AscendKernelRow> layout_kernels();  // Slice, Transpose, Concat, Gather, Range
std::span<const AscendKernelRow> one_hot_kernels();
// DequantizePackedGemm of q4_0 and q8_0 weights (aclnnWeightQuantBatchMatmulV2).
std::span<const AscendKernelRow> weight_matmul_kernels();

// The rules' shared parts (ascend_query.cpp): `rule`'s answer for `q` on `d`, and the dtype
// sets of CANN's operator documentation (the aclnn pages of hicann/ops-math and hicann/ops-nn).
Capability answer(const AscendRule &rule, const OpQuery &q, const Device &d);
bool has_bf16(SocFamily f);  // Atlas A2/A3 and 950
// t is undefined (an absent optional input) or one of `set`.
bool in(DataType t, std::initializer_list<DataType> set);
// The arithmetic types of Add, Sub, Mul, Minimum, EqTensor, Clamp (and GatherV2's data, SWhere).
bool arithmetic(DataType t, SocFamily f);
bool arithmetic_or_bool(DataType t, SocFamily f);
// Any type the device stores and copies (InplaceCopy, Cat, Cast, SWhere).
bool storable(DataType t, SocFamily f);

// The macro that launches aclnn operator `name` with the loader's typed pointers.
#define GGUFTOOL_ACLNN(device, name, ...)                                \
    (device).launch(#name, (device).api().aclnn##name##GetWorkspaceSize, \
                    (device).api().aclnn##name, __VA_ARGS__)

}  // namespace gguftool::runtime::ascend
