// The table `gguftool run` prints with one row per graph output (its summary of the outputs, or
// --compare's results): name, type and shape first, then the columns of the mode. Rows are
// printed as the outputs are computed, so the widths come from the model's declared outputs; a
// longer cell pushes its own line out rather than the column.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "gguftool/runtime.hpp"

namespace gguftool::cli::run {

class OutputTable {
public:
    // The shape column says its order: ONNX's (row-major, last dimension fastest), which is GGUF's
    // ne0 x ne1 ... reversed.
    static constexpr std::string_view kShapeHeader = "shape (ONNX order)";

    explicit OutputTable(const runtime::Model &model) {
        for (const runtime::ValueInfo &v : model.outputs()) {
            name_width_ = std::max(name_width_, std::min(v.name.size(), kNameColumnMax));
            if (!v.has_shape ||
                std::any_of(v.dims.begin(), v.dims.end(), [](const auto &d) { return !d; }))
                continue;
            runtime::Shape shape;
            for (const auto &d : v.dims) shape.push_back(*d);
            shape_width_ = std::max(shape_width_, runtime::shape_string(shape).size());
        }
    }

    // The header row, `rest` being the headers of the mode's columns.
    void print_header(std::string_view rest) const {
        fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", "name", name_width_, "type", kTypeWidth,
                   kShapeHeader, shape_width_, rest);
    }
    // One row: the output's name, type and shape, then `rest`.
    void print_row(std::string_view name, const runtime::Tensor &value,
                   std::string_view rest) const {
        fmt::print("{:<{}}  {:<{}}  {:<{}}  {}\n", name, name_width_, dtype_name(value.dtype()),
                   kTypeWidth, runtime::shape_string(value.shape()), shape_width_, rest);
    }

private:
    static constexpr size_t kNameColumnMax = 48;  // longer names push their line out
    static constexpr size_t kTypeWidth = 8;       // "bfloat16", the longest type name
    size_t name_width_ = 4;                       // "name"
    size_t shape_width_ = kShapeHeader.size();
};

}  // namespace gguftool::cli::run
