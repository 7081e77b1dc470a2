// Helpers for the runtime tests: temporary directories, building ONNX models with the protobuf
// API, running one-node models, and running the CLI.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "gguf_test_support.hpp"
#include "gguftool/runtime.hpp"
#include "node_test_dirs.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

namespace gguftool::rttest {

namespace rt = gguftool::runtime;
namespace fs = std::filesystem;

using testkit::all_node_test_dirs;
using testkit::attr_float;
using testkit::attr_int;
using testkit::attr_ints;
using testkit::attr_string;
using testkit::kNodeTestRoots;
using testkit::kRepositoryNodeTests;
using testkit::NodeTestRootTest;
using testkit::root_name;
// The repository's node tests: always there, so checks that need one test directory use them.
inline const std::string kNodeTests = kRepositoryNodeTests.dir.string();

using testkit::TempDir;  // a fresh directory under $TMPDIR, removed at the end of the scope

using testkit::read_text;
using testkit::write_file;

// Copies a directory tree and makes every copy writable (the source may be read-only).
inline void writable_copy(const fs::path &src, const fs::path &dst) {
    fs::copy(src, dst, fs::copy_options::recursive);
    fs::permissions(dst, fs::perms::owner_all, fs::perm_options::add);
    for (const auto &e : fs::recursive_directory_iterator(dst))
        fs::permissions(e.path(),
                        fs::perms::owner_read | fs::perms::owner_write |
                            (e.is_directory() ? fs::perms::owner_exec : fs::perms::none),
                        fs::perm_options::add);
}

// Attributes for make_node, and the model builder: the kit's (onnx_builder.hpp).
using testkit::attr_tensor;
using testkit::ModelBuilder;

template <class T>
rt::Tensor tensor(DataType dtype, rt::Shape shape, const std::vector<T> &values) {
    return rt::Tensor::from_values(dtype, std::move(shape), values);
}
inline rt::Tensor scalar_i64(int64_t v) {
    return tensor(DataType::int64, {}, std::vector<int64_t>{v});
}
inline rt::Tensor bytes_u8(const std::vector<uint8_t> &v) {
    return tensor(DataType::uint8, {int64_t(v.size())}, v);
}

// NumPy broadcasting for the reference loops: the output shape of `shapes`, and the element of an
// input of shape `in` that output element `flat` (of shape `out`) reads.
inline rt::Shape broadcast_shape(std::initializer_list<rt::Shape> shapes) {
    size_t r = 0;
    for (const rt::Shape &s : shapes) r = std::max(r, s.size());
    rt::Shape out(r, 1);
    for (const rt::Shape &s : shapes)
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i] != 1) out[r - s.size() + i] = s[i];
    return out;
}
inline size_t broadcast_source(size_t flat, const rt::Shape &out, const rt::Shape &in) {
    size_t offset = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
        const size_t k = flat % size_t(out[d]);
        flat /= size_t(out[d]);
        const size_t back = out.size() - 1 - d;  // position from the end
        if (back >= in.size()) continue;
        const size_t dim = size_t(in[in.size() - 1 - back]);
        if (dim != 1) offset += k * stride;
        stride *= dim;
    }
    return offset;
}

// y = op(a, b) elementwise with NumPy broadcasting; *out_shape is y's shape.
template <class T, class Op>
auto broadcast_ref(const std::vector<T> &a, const rt::Shape &sa, const std::vector<T> &b,
                   const rt::Shape &sb, rt::Shape *out_shape, Op op) {
    const rt::Shape out = broadcast_shape({sa, sb});
    size_t n = 1;
    for (int64_t d : out) n *= size_t(d);
    std::vector<decltype(op(a[0], b[0]))> y(n);
    for (size_t flat = 0; flat < n; ++flat)
        y[flat] = op(a[broadcast_source(flat, out, sa)], b[broadcast_source(flat, out, sb)]);
    *out_shape = out;
    return y;
}

// Runs `builder`'s model on the CPU and returns output 0.
inline rt::Tensor run1(const ModelBuilder &builder, const rt::Inputs &inputs = {}) {
    rt::Session s(builder.model());
    return s.run(inputs).at(0).second;
}

// The error message of running the model, or "" when it succeeds.
inline std::string run_error(const ModelBuilder &builder, const rt::Inputs &inputs = {}) {
    try {
        rt::Session s(builder.model());
        s.run(inputs);
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

using CliResult = testkit::ProcessResult;

// Runs the built gguftool with `args`: its stdout and stderr together in `out`, as 2>&1 leaves
// them.
inline CliResult run_cli(const std::vector<std::string> &args) {
    std::vector<std::string> argv = {GGUFTOOL_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    testkit::ProcessOptions o;
    o.err = testkit::Output::merge;
    return testkit::run(argv, o);
}

inline std::string last_line(const std::string &s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace gguftool::rttest
