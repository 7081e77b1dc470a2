// OneHot on the device. ATB's OnehotOperation (or aclnnOneHot without ATB) makes a 0/1 mask
// from INT32/INT64 indices in [0, classes); ONNX's OneHot also takes indices of any numeric type,
// negative ones (OneHot-11) and out-of-range ones (all-off rows), and any [off, on] values. So:
//   1. the indices as INT32 or INT64 (one Cast unless they are already);
//   2. clamped to [lo, depth] and shifted up by k (Clamp, Adds), so that every index lands in
//      [0, classes) and the mask's columns that mean "index i" are known: OneHot-9 has lo = -1,
//      k = 1, classes = depth + 2, index i in column i + 1 (columns 0 and depth + 1 catch what is
//      out of range); OneHot-11 has lo = -depth - 1, k = depth + 1, classes = 2 depth + 2, index i
//      in columns i + 1 (written as i - depth) and i + depth + 1;
//   3. the mask (one operator), whose wanted columns are strided views (no copy);
//   4. the output: the view itself when the values are [0, 1] of the mask's type (InplaceCopy, or
//      Add of the two views), otherwise Where(mask, on, off) with on and off as views of `values`.
#include <cstring>

#include "ascend_backend.hpp"

namespace gguftool::runtime::ascend {

DeviceTensor AscendBackend::constant(DataType dtype, int64_t value) {
    const std::string key = fmt::format("{}:{}", dtype_name(dtype), value);
    if (auto it = constants_.find(key); it != constants_.end()) return it->second;
    Tensor t = Tensor::zeros(dtype, {1});
    std::memcpy(t.mutable_data(), &value, dtype_size(dtype));  // little-endian low bytes
    DeviceTensor d = upload(t);
    constants_.emplace(key, d);
    return d;
}

namespace {

using DT = DataType;

void one_hot(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &indices = *args.inputs[0], &values = *args.inputs[2];
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    Device &d = b.device();
    const DataType it = indices.dtype == DataType::int32 ? DataType::int32 : DataType::int64;
    const int64_t depth = args.attributes.at<int64_t>("depth");
    const bool negative = args.attributes.at<int64_t>("negative_indices") != 0;
    const int64_t lo = negative ? -depth - 1 : -1;
    const int64_t k = negative ? depth + 1 : 1;
    const int64_t classes = negative ? 2 * depth + 2 : depth + 2;
    // aclnnOneHot's numClasses is an int, and INT32 indices must hold every shifted index.
    if (classes > int64_t(INT32_MAX))
        throw Error(fmt::format("OneHot depth {} is too large for the ascend backend", depth));

    // A scalar index is a [1] tensor whose row is the output.
    const Shape ishape = indices.shape.empty() ? Shape{1} : indices.shape;
    const size_t axis = indices.shape.empty() ? 1 : size_t(args.attributes.at<int64_t>("axis"));
    Shape yshape = ishape;
    yshape.insert(yshape.begin() + ptrdiff_t(axis), depth);
    Shape mshape = ishape;
    mshape.insert(mshape.begin() + ptrdiff_t(axis), classes);

    // 1-2: indices in [0, classes).
    const DeviceTensor idx = b.converted(indices, it);
    DeviceTensor clamped = b.allocate(it, ishape), shifted = b.allocate(it, ishape);
    {
        const Desc in(d, idx, ishape, dense_strides(ishape), 0), out(d, clamped);
        const Scalar low(d, it, lo), high(d, it, depth);
        GGUFTOOL_ACLNN(d, Clamp, in, low, high, out);
    }
    {
        const Desc in(d, clamped), out(d, shifted);
        const Scalar add(d, it, k), one(d, it, int64_t(1));
        GGUFTOOL_ACLNN(d, Adds, in, add, one, out);
    }

    // 3: the mask.
    DeviceTensor mask = b.allocate(it, mshape);
    const DeviceTensor one = b.constant(it, 1), zero = b.constant(it, 0);
    if (d.api().has_atb) {
        using cann::atb_abi::kMaxDim;
        const auto tensor = [](const DeviceTensor &t, const Shape &dims) {
            cann::atb_abi::Tensor a;
            a.desc.dtype = acl_dtype(t.dtype);
            a.desc.format = cann::ACL_FORMAT_ND;
            a.desc.shape.dimNum = dims.size();
            for (size_t i = 0; i < dims.size(); ++i) a.desc.shape.dims[i] = dims[i];
            a.deviceData = buffer_of(t).data;
            a.dataSize = t.nbytes();
            return a;
        };
        if (ishape.size() >= kMaxDim)
            throw Error(fmt::format("OneHot of rank-{} indices: ATB takes fewer than {} dims",
                                    ishape.size(), kMaxDim));
        auto pack = std::make_unique<cann::atb_abi::VariantPack>();  // 13.5 KB: not on the stack
        pack->inTensors.size_ = 3;
        pack->inTensors.storage_[0] = tensor(shifted, ishape);
        pack->inTensors.storage_[1] = tensor(one, {1});
        pack->inTensors.storage_[2] = tensor(zero, {1});
        pack->outTensors.size_ = 1;
        pack->outTensors.storage_[0] = tensor(mask, mshape);
        cann::atb_abi::OnehotParam param;
        param.axis = int64_t(axis);
        param.depth = classes;
        d.atb_onehot(param, *pack);
    } else {
        const Desc in(d, shifted), on(d, one), off(d, zero), out(d, mask);
        GGUFTOOL_ACLNN(d, OneHot, in, int(classes), on, off, int64_t(axis), out);
    }

    // 4: the output from the mask's columns.
    const std::vector<int64_t> ms = dense_strides(mshape);
    const int64_t column = ms[axis];
    const auto view = [&](int64_t first) { return Desc(d, mask, yshape, ms, first * column); };
    const Desc out(d, y, yshape, dense_strides(yshape), 0);
    bool zero_one = false;
    if (values.dtype == it && buffer_of(values).shadow) {
        const Tensor v = b.host_values(values);
        zero_one = it == DataType::int32
                       ? v.data_as<int32_t>()[0] == 0 && v.data_as<int32_t>()[1] == 1
                       : v.data_as<int64_t>()[0] == 0 && v.data_as<int64_t>()[1] == 1;
    }
    if (zero_one) {
        if (negative) {
            const Desc a = view(1), b = view(depth + 1);
            const Scalar one_s(d, it, int64_t(1));
            GGUFTOOL_ACLNN(d, Add, a, b, one_s, out);
        } else {
            const Desc a = view(1);
            GGUFTOOL_ACLNN(d, InplaceCopy, static_cast<cann::aclTensor *>(out), a);
        }
        return;
    }
    DeviceTensor condition = b.allocate(DataType::bool_, yshape);
    {
        const Desc c(d, condition);
        if (negative) {
            // The mask of wanted positions, dense: the sum of the two views.
            const DeviceTensor hits = b.allocate(it, yshape);
            {
                const Desc a = view(1), b = view(depth + 1), h(d, hits);
                const Scalar one_s(d, it, int64_t(1));
                GGUFTOOL_ACLNN(d, Add, a, b, one_s, h);
            }
            const Desc h(d, hits);
            GGUFTOOL_ACLNN(d, Cast, h, cann::ACL_BOOL, c);
        } else {
            const Desc a = view(1);
            GGUFTOOL_ACLNN(d, Cast, a, cann::ACL_BOOL, c);
        }
    }
    const Desc c(d, condition), on(d, values, {1}, {1}, 1), off(d, values, {1}, {1}, 0);
    GGUFTOOL_ACLNN(d, SWhere, c, on, off, out);
}

}  // namespace

std::span<const AscendKernelRow> one_hot_kernels() {
    static const AscendKernelRow rows[] = {
        {"OneHot",
         one_hot,
         {.dtypes = {{0,
                      [](DT t, SocFamily f) {
                          return arithmetic(t, f) || in(t, {DT::uint16, DT::uint32, DT::uint64});
                      },
                      "OneHot indices are cast to int64"},
                     {2, storable, "aclnnSWhere"}},
          .needs = {{"aclnnCast"},
                    {"aclnnClamp"},
                    {"aclnnAdds"},
                    {"aclnnSWhere"},
                    {"aclnnOneHot", [](const Cann &a, SocFamily) { return !a.has_atb; },
                     "aclnnOneHot (ATB absent)"}}}},
    };
    return rows;
}

}  // namespace gguftool::runtime::ascend
