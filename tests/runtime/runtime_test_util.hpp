// Helpers for the runtime tests: temporary directories, building ONNX models with the protobuf
// API, running one-node models, and running the CLI.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "gguftool/runtime.hpp"
#include "node_test_dirs.hpp"
#include "onnx_attributes.hpp"

namespace gguftool::rttest {

namespace rt = gguftool::runtime;
namespace fs = std::filesystem;

using test::all_node_test_dirs;
using test::attr_float;
using test::attr_int;
using test::attr_ints;
using test::attr_string;
using test::kNodeTestRoots;
using test::kRepositoryNodeTests;
using test::NodeTestRootTest;
using test::root_name;
// The repository's node tests: always there, so checks that need one test directory use them.
inline const std::string kNodeTests = kRepositoryNodeTests.dir.string();

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at the end of the scope.
class TempDir {
public:
    TempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gguftool-runtime-XXXXXX";
        if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return (fs::path(path_) / name).string(); }

private:
    std::string path_;
};

inline void write_file(const std::string &path, const std::string &bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    ASSERT_TRUE(f.good()) << path;
}

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

inline std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// Attributes for make_node (attr_int, attr_ints, attr_string, attr_float: onnx_attributes.hpp).
inline onnx::AttributeProto attr_tensor(const std::string &name, const rt::Tensor &t) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::TENSOR);
    rt::tensor_to_proto(t, "", *a.mutable_t());
    return a;
}

// A model under construction: one graph, default domain at `opset`.
class ModelBuilder {
public:
    explicit ModelBuilder(int64_t opset = 29) {
        proto_.set_ir_version(8);
        auto *o = proto_.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        proto_.mutable_graph()->set_name("test");
    }

    onnx::NodeProto &node(const std::string &op, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs,
                          std::initializer_list<onnx::AttributeProto> attrs = {},
                          const std::string &name = "") {
        onnx::NodeProto *n = proto_.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? op + "_node" : name);
        for (const std::string &i : inputs) n->add_input(i);
        for (const std::string &o : outputs) n->add_output(o);
        for (const onnx::AttributeProto &a : attrs) *n->add_attribute() = a;
        return *n;
    }
    // A graph input (dtype 0 = undeclared, no shape).
    ModelBuilder &input(const std::string &name, DataType dtype = DataType::undefined) {
        auto *v = proto_.mutable_graph()->add_input();
        v->set_name(name);
        if (dtype != DataType::undefined)
            v->mutable_type()->mutable_tensor_type()->set_elem_type(int32_t(dtype));
        return *this;
    }
    ModelBuilder &input(const std::string &name, DataType dtype, const std::vector<int64_t> &dims) {
        input(name, dtype);
        auto *shape = proto_.mutable_graph()
                          ->mutable_input()
                          ->rbegin()
                          ->mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape();
        for (int64_t d : dims) {
            auto *dim = shape->add_dim();
            if (d >= 0)
                dim->set_dim_value(d);
            else
                dim->set_dim_param("N");
        }
        return *this;
    }
    ModelBuilder &output(const std::string &name) {
        proto_.mutable_graph()->add_output()->set_name(name);
        return *this;
    }
    ModelBuilder &initializer(const std::string &name, const rt::Tensor &t) {
        rt::tensor_to_proto(t, name, *proto_.mutable_graph()->add_initializer());
        return *this;
    }
    onnx::TensorProto &initializer_proto(const std::string &name) {
        for (auto &t : *proto_.mutable_graph()->mutable_initializer())
            if (t.name() == name) return t;
        throw std::runtime_error("no initializer " + name);
    }
    onnx::ModelProto &proto() { return proto_; }
    rt::Model model(const std::string &base_dir = ".") const {
        return rt::Model::from_proto(proto_, base_dir, "test.onnx");
    }
    void save(const std::string &path) const { write_file(path, proto_.SerializeAsString()); }

private:
    onnx::ModelProto proto_;
};

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

struct CliResult {
    int status = -1;
    std::string out;  // stdout and stderr together
};

// Runs the built gguftool with `args` through the shell (arguments are single-quoted).
inline CliResult run_cli(const std::vector<std::string> &args) {
    std::string cmd = std::string("'") + GGUFTOOL_EXE + "'";
    for (const std::string &a : args) cmd += " '" + a + "'";
    cmd += " 2>&1";
    CliResult r;
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::string last_line(const std::string &s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace gguftool::rttest
