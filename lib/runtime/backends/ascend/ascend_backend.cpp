// The Ascend backend: device memory, descriptors, host shadows of small tensors, the constructor
// that registers every ascend_*.cpp file's rows, and the factory.
#include "ascend_backend.hpp"

#include <cstring>

#include "gguftool/half.hpp"

namespace gguftool::runtime::ascend {

AscendBuffer::AscendBuffer(std::shared_ptr<Device> dev, size_t n)
    : device(std::move(dev)), data(device->malloc(n)), bytes(n) {}

AscendBuffer::~AscendBuffer() {
    device->free_later(data);
}

AscendBuffer &buffer_of(const DeviceTensor &t) {
    auto *b = dynamic_cast<AscendBuffer *>(t.buffer.get());
    if (!b) throw Error("tensor does not belong to the ascend backend");
    return *b;
}

std::vector<int64_t> dense_strides(const Shape &shape) {
    std::vector<int64_t> s(shape.size());
    int64_t step = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = step;
        step *= std::max<int64_t>(shape[i], 1);
    }
    return s;
}

Desc::Desc(const Device &device, const DeviceTensor &t)
    : Desc(device, t, t.shape, dense_strides(t.shape), 0) {}

Desc::Desc(const Device &device, const DeviceTensor &t, const Shape &dims,
           const std::vector<int64_t> &strides, int64_t offset)
    : device_(device) {
    const AscendBuffer &b = buffer_of(t);
    const cann::aclDataType dtype = acl_dtype(t.dtype);
    if (dtype == cann::ACL_DT_UNDEFINED)
        throw Error(fmt::format("the ascend backend has no {} tensors", dtype_name(t.dtype)));
    const bool scalar = dims.empty();
    const Shape view = scalar ? Shape{1} : dims;
    const std::vector<int64_t> view_strides = scalar ? std::vector<int64_t>{1} : strides;
    // The storage is the whole buffer, one dimension (as ggml-cann describes it).
    const int64_t storage = int64_t(b.bytes / std::max<size_t>(dtype_size(t.dtype), 1));
    tensor_ = device.api().aclCreateTensor(view.data(), view.size(), dtype, view_strides.data(),
                                           offset, cann::ACL_FORMAT_ND, &storage, 1, b.data);
    if (!tensor_) {
        const char *msg = device.api().aclGetRecentErrMsg();
        throw Error(fmt::format("aclCreateTensor of a {} {} tensor failed{}", dtype_name(t.dtype),
                                shape_string(view), msg && *msg ? fmt::format(": {}", msg) : ""));
    }
}

Desc::Desc(const Device &device, const DeviceTensor &t, cann::aclDataType dtype, const Shape &dims,
           const std::vector<int64_t> &strides, int64_t offset, int64_t storage)
    : device_(device) {
    const AscendBuffer &b = buffer_of(t);
    tensor_ = device.api().aclCreateTensor(dims.data(), dims.size(), dtype, strides.data(), offset,
                                           cann::ACL_FORMAT_ND, &storage, 1, b.data);
    if (!tensor_) {
        const char *msg = device.api().aclGetRecentErrMsg();
        throw Error(fmt::format("aclCreateTensor of a CANN dtype {} {} view failed{}", int(dtype),
                                shape_string(dims), msg && *msg ? fmt::format(": {}", msg) : ""));
    }
}

Desc::~Desc() {
    if (tensor_) device_.api().aclDestroyTensor(tensor_);
}

Scalar::Scalar(const Device &device, DataType dtype, double v) : device_(device) {
    if (is_floating(dtype))
        set_float(dtype, v);
    else
        set_integer(dtype, int64_t(v));
    create(dtype);
}

Scalar::Scalar(const Device &device, DataType dtype, int64_t v) : device_(device) {
    if (is_floating(dtype))
        set_float(dtype, double(v));
    else
        set_integer(dtype, v);
    create(dtype);
}

void Scalar::set_float(DataType dtype, double v) {
    if (dtype == DataType::float32) {
        const float f = float(v);
        std::memcpy(value_, &f, 4);
    } else if (dtype == DataType::float64) {
        std::memcpy(value_, &v, 8);
    } else {
        const uint16_t h = dtype == DataType::float16 ? f64_to_fp16(v) : f64_to_bf16(v);
        std::memcpy(value_, &h, 2);
    }
}

// Little-endian: the low bytes of v are v modulo 2^bits, as a value of that type.
void Scalar::set_integer(DataType dtype, int64_t v) {
    if (dtype == DataType::bool_) v = v != 0;
    std::memcpy(value_, &v, dtype_size(dtype));
}

void Scalar::create(DataType dtype) {
    scalar_ = device_.api().aclCreateScalar(value_, acl_dtype(dtype));
    if (!scalar_) throw Error(fmt::format("aclCreateScalar of a {} failed", dtype_name(dtype)));
}

Scalar::~Scalar() {
    if (scalar_) device_.api().aclDestroyScalar(scalar_);
}

// Views and host-side values: no device operator. (Squeeze has no row here: it falls back to the
// CPU.)
std::span<const AscendKernelRow> view_rows() {
    static const AscendKernelRow rows[] = {
        {"Identity"}, {"Reshape"}, {"Unsqueeze"}, {"BitCast"}, {"Shape"}, {"Constant"},
    };
    return rows;
}

AscendBackend::AscendBackend(int device) : device_(std::make_shared<Device>(device)) {
    for (const std::span<const AscendKernelRow> rows :
         {view_rows(), elementwise_kernels(), layout_kernels(), one_hot_kernels(),
          weight_matmul_kernels()})
        for (const AscendKernelRow &row : rows)
            register_kernel(
                row.op_type,
                row.run ? OpKernel([this, run = row.run](const KernelArgs &a) { run(*this, a); })
                        : OpKernel(),
                [this, &rule = row.rule](const OpQuery &q) { return answer(rule, q, *device_); });
}

std::string AscendBackend::description() const {
    const Cann &api = device_->api();
    // The runtime's directory (the other libraries come from it when it has them) and ATB's.
    const auto dir = [](const std::string &file) {
        const size_t slash = file.rfind('/');
        return slash == std::string::npos ? std::string("the system path") : file.substr(0, slash);
    };
    std::string s = fmt::format("ascend: device {}, {}, {} from {}", device_->id(), device_->soc(),
                                api.layout, dir(api.files.front()));
    s += api.has_atb ? fmt::format(", ATB from {}", dir(api.files.back()))
                     : std::string(", no ATB (OneHot uses aclnnOneHot)");
    if (!api.emulation.empty()) s += fmt::format(" -- {}: an emulation, not an NPU", api.emulation);
    return s;
}

DeviceTensor AscendBackend::allocate(DataType dtype, const Shape &shape) {
    const uint64_t n = shape_elements(shape);
    const uint64_t bytes = n * dtype_size(dtype);
    if (bytes > tensor_byte_limit())
        throw Error(fmt::format("a {} {} tensor ({} bytes) is larger than the limit of {} bytes",
                                dtype_name(dtype), shape_string(shape), bytes,
                                tensor_byte_limit()));
    return {dtype, shape, std::make_shared<AscendBuffer>(device_, size_t(bytes))};
}

DeviceTensor AscendBackend::upload(const Tensor &host) {
    if (!host.defined()) throw Error("cannot upload an undefined tensor");
    DeviceTensor t = allocate(host.dtype(), host.shape());
    AscendBuffer &b = buffer_of(t);
    device_->copy_to_device(b.data, host.data(), host.nbytes());
    if (host.elements() <= kShadowElements) b.shadow = host;
    return t;
}

Tensor AscendBackend::download(const DeviceTensor &t) {
    Tensor host = Tensor::allocate(t.dtype, t.shape);
    device_->copy_to_host(host.mutable_data(), buffer_of(t).data, host.nbytes());
    return host;
}

Tensor AscendBackend::host_values(const DeviceTensor &t) {
    const AscendBuffer &b = buffer_of(t);
    if (b.shadow && b.shadow->nbytes() == t.nbytes()) return b.shadow->viewed_as(t.dtype, t.shape);
    return download(t);
}

DeviceTensor AscendBackend::derived(const DeviceTensor &t, const std::string &key,
                                    const std::function<Tensor(const Tensor &)> &make) {
    AscendBuffer &b = buffer_of(t);
    const std::string full =
        fmt::format("{}:{}:{}", key, dtype_name(t.dtype), shape_string(t.shape));
    if (auto it = b.derived.find(full); it != b.derived.end()) return it->second;
    DeviceTensor d = upload(make(host_values(t)));
    b.derived.emplace(full, d);
    return d;
}

DeviceTensor AscendBackend::converted(const DeviceTensor &x, DataType to) {
    if (x.dtype == to) return x;
    DeviceTensor y = allocate(to, x.shape);
    cast(x, y);
    return y;
}

}  // namespace gguftool::runtime::ascend

namespace gguftool::runtime {

std::unique_ptr<Backend> make_ascend_backend(const BackendOptions &options) {
    return std::make_unique<ascend::AscendBackend>(options.device);
}

}  // namespace gguftool::runtime
