// `gguftool run --compare`: outputs against the core's decoding of the GGUF tensors, bit for bit.
#include "run_compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gguftool/quant.hpp"

namespace gguftool::cli::run {
namespace {

// The ONNX integer type a plain GGUF integer type is stored as, else undefined.
DataType integer_type(GgmlType t) {
    const DataType d = onnx_data_type(t);
    return is_integer(d) ? d : DataType::undefined;
}

}  // namespace

void compare_output(const gguf::Model &gguf, const std::string &name, const runtime::Tensor &value,
                    unsigned threads, CompareTally &tally) {
    const std::string head = fmt::format("{}  {} {}", name, dtype_name(value.dtype()),
                                         runtime::shape_string(value.shape()));
    const gguf::TensorInfo *info = gguf.find_tensor(name);
    if (!info) {
        ++tally.not_compared;
        fmt::print("{}  not compared: no GGUF tensor of this name\n", head);
        return;
    }
    const char *type = type_name(info->type);
    runtime::Shape shape(info->ne.begin(), info->ne.begin() + info->n_dims);
    std::reverse(shape.begin(), shape.end());  // GGUF ne0 is ONNX's last dimension
    if (shape.empty()) shape.push_back(1);
    runtime::Shape got_shape = value.shape();
    if (got_shape.empty()) got_shape.push_back(1);
    if (shape != got_shape) {
        ++tally.differing;
        fmt::print("{}  MISMATCH: GGUF {} has shape {}\n", head, type,
                   runtime::shape_string(shape));
        return;
    }

    runtime::Tensor expected;
    if (is_floating(value.dtype())) {
        expected = runtime::Tensor::allocate(value.dtype(), value.shape());
        quant::decode(info->type, info->data, info->elements,
                      expected.elements() ? expected.mutable_data() : nullptr,
                      static_cast<DataType>(int32_t(value.dtype())), threads);
    } else if (integer_type(info->type) == value.dtype()) {
        expected = runtime::Tensor::copy_of(value.dtype(), value.shape(), info->data);
    } else {
        ++tally.not_compared;
        fmt::print("{}  not compared: a {} output cannot hold GGUF type {}\n", head,
                   dtype_name(value.dtype()), type);
        return;
    }
    const runtime::Comparison c = runtime::compare(value, expected, /*exact=*/true);
    if (c.equal) {
        ++tally.matched;
        fmt::print("{}  {}  match\n", head, type);
    } else {
        ++tally.differing;
        fmt::print("{}  {}  MISMATCH: {}\n", head, type, c.message);
    }
}

}  // namespace gguftool::cli::run
