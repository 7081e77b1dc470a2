// Layout operators on the device: Slice and Transpose are strided views of their input, copied
// dense by one aclnnInplaceCopy; Concat is aclnnCat; Gather is aclnnGatherV2; Range is
// aclnnArange (integers).
#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {

void AscendBackend::copy(const DeviceTensor &src, const Shape &dims,
                         const std::vector<int64_t> &strides, int64_t offset, DeviceTensor &y) {
    if (y.elements() == 0) return;
    Device &d = *device_;
    const Desc view(d, src, dims, strides, offset), out(d, y);
    GGUFTOOL_ACLNN(d, InplaceCopy, static_cast<cann::aclTensor *>(out), view);
}

void AscendBackend::slice(std::span<const int64_t> starts, std::span<const int64_t> steps,
                          const DeviceTensor &x, DeviceTensor &y) {
    if (y.elements() == 0) return;
    const std::vector<int64_t> dense = dense_strides(x.shape);
    std::vector<int64_t> strides(x.shape.size());
    int64_t offset = 0;
    for (size_t i = 0; i < x.shape.size(); ++i) {
        // CANN's strides are non-negative (aclCreateTensor).
        if (steps[i] < 0)
            throw Error(
                fmt::format("Slice with a negative step ({} on axis {}) is not supported "
                            "by the ascend backend",
                            steps[i], i));
        strides[i] = dense[i] * steps[i];
        offset += starts[i] * dense[i];
    }
    copy(x, y.shape, strides, offset, y);
}

void AscendBackend::transpose(std::span<const size_t> perm, const DeviceTensor &x,
                              DeviceTensor &y) {
    const std::vector<int64_t> dense = dense_strides(x.shape);
    std::vector<int64_t> strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = dense[perm[i]];
    copy(x, y.shape, strides, 0, y);
}

void AscendBackend::concat(size_t axis, std::span<const DeviceTensor> inputs, DeviceTensor &y) {
    if (y.elements() == 0) return;
    Device &d = *device_;
    std::vector<const DeviceTensor *> present;
    for (const DeviceTensor &t : inputs)
        if (t.elements()) present.push_back(&t);
    if (present.size() == 1) return copy(*present[0], y.shape, dense_strides(y.shape), 0, y);
    std::vector<std::unique_ptr<Desc>> parts;
    std::vector<const cann::aclTensor *> list;
    for (const DeviceTensor *t : present) {
        parts.push_back(std::make_unique<Desc>(d, *t));
        list.push_back(*parts.back());
    }
    cann::aclTensorList *tensors = d.api().aclCreateTensorList(list.data(), list.size());
    if (!tensors) throw Error("aclCreateTensorList failed");
    // The list owns its tensors: aclDestroyTensorList destroys them too, whatever happens.
    for (auto &p : parts) p->release();
    struct ListGuard {
        const Cann &api;
        cann::aclTensorList *list;
        ~ListGuard() { api.aclDestroyTensorList(list); }
    } guard{d.api(), tensors};
    const Desc out(d, y);
    GGUFTOOL_ACLNN(d, Cat, static_cast<const cann::aclTensorList *>(tensors), int64_t(axis),
                   static_cast<cann::aclTensor *>(out));
}

void AscendBackend::gather(size_t axis, bool negative_indices, const DeviceTensor &data,
                           const DeviceTensor &indices, DeviceTensor &y) {
    (void)negative_indices;  // GatherV2 takes indices in [0, size): others are a device error
    if (y.elements() == 0) return;
    Device &d = *device_;
    // A scalar index drops the axis; GatherV2 sees it as [1] and writes a 1 there.
    Shape out_shape = y.shape;
    if (indices.shape.empty()) out_shape.insert(out_shape.begin() + ptrdiff_t(axis), 1);
    const Desc in(d, data), index(d, indices), out(d, y, out_shape, dense_strides(out_shape), 0);
    GGUFTOOL_ACLNN(d, GatherV2, in, int64_t(axis), index, out);
}

void AscendBackend::range(const DeviceTensor &start, const DeviceTensor &delta, DataType,
                          DeviceTensor &y) {
    if (y.elements() == 0) return;
    Device &d = *device_;
    const auto value = [&](const DeviceTensor &t) -> int64_t {
        const Tensor h = host_values(t);
        switch (t.dtype) {
            case DataType::int16:
                return h.data_as<int16_t>()[0];
            case DataType::int32:
                return h.data_as<int32_t>()[0];
            case DataType::int64:
                return h.data_as<int64_t>()[0];
            default:
                throw Error(fmt::format("Range of {} is not supported by the ascend backend",
                                        dtype_name(t.dtype)));
        }
    };
    const int64_t first = value(start), step = value(delta);
    // Arange's length is ceil((end - start) / step): end = start + n * step gives exactly n.
    const int64_t end = first + int64_t(y.elements()) * step;
    const Scalar s(d, DataType::int64, first), e(d, DataType::int64, end),
        st(d, DataType::int64, step);
    const Desc out(d, y);
    GGUFTOOL_ACLNN(d, Arange, static_cast<const cann::aclScalar *>(s),
                   static_cast<const cann::aclScalar *>(e),
                   static_cast<const cann::aclScalar *>(st), static_cast<cann::aclTensor *>(out));
}

}  // namespace gguftool::runtime::ascend
