// `gguftool run --compare`: outputs against the core's decoding of the GGUF tensors, bit for bit.
#include "run_compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gguftool/dims.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::cli::run {
namespace {

using runtime::DataType;

// The ONNX integer type a plain GGUF integer type is stored as, else undefined.
DataType integer_type(GgmlType t) {
    const DataType d = DataType(onnx_data_type(t));
    return runtime::is_integer(d) ? d : DataType::undefined;
}

}  // namespace

void compare_output(const gguf::Model &gguf, const std::string &name, const runtime::Tensor &value,
                    unsigned threads, CompareTally &tally) {
    const std::string head = fmt::format("{}  {} {}", name, runtime::dtype_name(value.dtype()),
                                         runtime::shape_string(value.shape()));
    const gguf::TensorInfo *info = gguf.find_tensor(name);
    if (!info) {
        ++tally.not_compared;
        fmt::print("{}  not compared: no GGUF tensor of this name\n", head);
        return;
    }
    const char *type = type_name(info->type);
    const runtime::Shape shape = onnx_shape(std::span(info->ne).first(info->n_dims));
    if (shape != value.shape()) {
        ++tally.differing;
        fmt::print("{}  MISMATCH: GGUF {} has shape {}\n", head, type,
                   runtime::shape_string(shape));
        return;
    }

    runtime::Tensor expected;
    if (runtime::is_floating(value.dtype())) {
        expected = runtime::Tensor::allocate(value.dtype(), value.shape());
        quant::decode(info->type, info->data, info->elements,
                      expected.elements() ? expected.mutable_data() : nullptr,
                      static_cast<quant::OutputType>(int32_t(value.dtype())), threads);
    } else if (integer_type(info->type) == value.dtype()) {
        expected = runtime::Tensor::copy_of(value.dtype(), value.shape(), info->data);
    } else {
        ++tally.not_compared;
        fmt::print("{}  not compared: a {} output cannot hold GGUF type {}\n", head,
                   runtime::dtype_name(value.dtype()), type);
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
