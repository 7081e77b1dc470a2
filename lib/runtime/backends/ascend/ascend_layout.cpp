// Layout operators on the device: Slice and Transpose are strided views of their input, copied
// dense by one aclnnInplaceCopy; Concat is aclnnCat; Gather is aclnnGatherV2; Range is
// aclnnArange (integers).
#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {
namespace {

using DT = DataType;

// y = the view of `src` with `dims`, `strides` and `offset` (in elements), copied dense.
void copy(Device &d, const DeviceTensor &src, const Shape &dims,
          const std::vector<int64_t> &strides, int64_t offset, DeviceTensor &y) {
    if (y.elements() == 0) return;
    const Desc view(d, src, dims, strides, offset), out(d, y);
    GGUFTOOL_ACLNN(d, InplaceCopy, static_cast<cann::aclTensor *>(out), view);
}

void slice(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const std::vector<int64_t> &starts = args.attributes.at<std::vector<int64_t>>("starts");
    const std::vector<int64_t> &steps = args.attributes.at<std::vector<int64_t>>("steps");
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
    copy(b.device(), x, y.shape, strides, offset, y);
}

void transpose(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const std::vector<int64_t> &perm = args.attributes.at<std::vector<int64_t>>("perm");
    const std::vector<int64_t> dense = dense_strides(x.shape);
    std::vector<int64_t> strides(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) strides[i] = dense[size_t(perm[i])];
    copy(b.device(), x, y.shape, strides, 0, y);
}

void concat(AscendBackend &b, const KernelArgs &args) {
    DeviceTensor &y = args.outputs[0];
    const int64_t axis = args.attributes.at<int64_t>("axis");
    if (y.elements() == 0) return;
    Device &d = b.device();
    std::vector<const DeviceTensor *> present;
    for (const DeviceTensor *t : args.inputs)
        if (t->elements()) present.push_back(t);
    if (present.size() == 1) return copy(d, *present[0], y.shape, dense_strides(y.shape), 0, y);
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
    GGUFTOOL_ACLNN(d, Cat, static_cast<const cann::aclTensorList *>(tensors), axis,
                   static_cast<cann::aclTensor *>(out));
}

// GatherV2 takes indices in [0, size): others (negative_indices too) are a device error.
void gather(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &data = *args.inputs[0], &indices = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    if (y.elements() == 0) return;
    Device &d = b.device();
    // A scalar index drops the axis; GatherV2 sees it as [1] and writes a 1 there.
    Shape out_shape = y.shape;
    if (indices.shape.empty()) out_shape.insert(out_shape.begin() + ptrdiff_t(axis), 1);
    const Desc in(d, data), index(d, indices), out(d, y, out_shape, dense_strides(out_shape), 0);
    GGUFTOOL_ACLNN(d, GatherV2, in, int64_t(axis), index, out);
}

// Integers only (the rule refuses floats): start + i * delta.
void range(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &start = *args.inputs[0], &delta = *args.inputs[2];
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    Device &d = b.device();
    const auto value = [&](const DeviceTensor &t) -> int64_t {
        const Tensor h = b.host_values(t);
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

}  // namespace

std::span<const AscendKernelRow> layout_kernels() {
    const AscendRule copied = {.dtypes = {{0, storable, "aclnnInplaceCopy"}},
                               .needs = {{"aclnnInplaceCopy"}}};
    static const AscendKernelRow rows[] = {
        {"Slice", slice, copied},
        {"Transpose", transpose, copied},
        {"Concat",
         concat,
         {.dtypes = {{0, storable, "aclnnCat"}}, .needs = {{"aclnnCat"}, {"aclnnInplaceCopy"}}}},
        {"Gather",
         gather,
         {.dtypes = {{0, arithmetic_or_bool, "aclnnGatherV2"},
                     {1,
                      [](DT t, SocFamily) {
                          return in(t, {DT::int32, DT::int64});
                      },
                      "aclnnGatherV2 indices"}},
          .needs = {{"aclnnGatherV2"}}}},
        {"Range",
         range,
         {.dtypes = {{0,
                      [](DT t, SocFamily) {
                          return in(t, {DT::int16, DT::int32, DT::int64});
                      },
                      "aclnnArange computes start + i * step, not Range's running sum, for "
                      "floats"}},
          .needs = {{"aclnnArange"}}}},
    };
    return rows;
}

}  // namespace gguftool::runtime::ascend
