// `gguftool run --compare`: outputs against the core's decoding of the GGUF tensors, bit for bit.
#include "run_compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gguftool/dims.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::cli::run {
namespace {

// The ONNX integer type a plain GGUF integer type is stored as, else undefined.
DataType integer_type(GgmlType t) {
    const DataType d = onnx_data_type(t);
    return is_integer(d) ? d : DataType::undefined;
}

constexpr size_t kGgufTypeWidth = 9;  // "GGUF type", wider than every type name

}  // namespace

void compare_output(const OutputTable &table, const gguf::Model &gguf, const std::string &name,
                    const runtime::Tensor &value, unsigned threads, CompareTally &tally) {
    const gguf::TensorInfo *info = gguf.find_tensor(name);
    const auto row = [&](std::string_view result) {
        table.print_row(
            name, value,
            fmt::format("{:<{}}  {}", info ? type_name(info->type) : "-", kGgufTypeWidth, result));
    };
    if (!info) {
        ++tally.not_compared;
        row("not compared: no GGUF tensor of this name");
        return;
    }
    const char *type = type_name(info->type);
    const runtime::Shape shape = onnx_shape(std::span(info->ne).first(info->n_dims));
    if (shape != value.shape()) {
        ++tally.differing;
        row(fmt::format("MISMATCH: the GGUF tensor's shape is {} (ONNX order)",
                        runtime::shape_string(shape)));
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
        row(fmt::format("not compared: a {} output cannot hold GGUF type {}",
                        dtype_name(value.dtype()), type));
        return;
    }
    const runtime::AllcloseResult c = runtime::allclose(value, expected, /*exact=*/true);
    if (c.equal) {
        ++tally.matched;
        row("match");
    } else {
        ++tally.differing;
        row("MISMATCH: " + c.message);
    }
}

}  // namespace gguftool::cli::run
