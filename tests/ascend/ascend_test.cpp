// The Ascend backend on the CANN emulation (tests/cann_emulator; an emulation, not an NPU). ctest
// runs this program once per profile, chosen by environment (tests/CMakeLists.txt): the SoC
// (GGUFTOOL_CANN_EMULATOR_SOC), the CANN library layout (GGUFTOOL_CANN_LIB_DIR: 8.1 or 8.5) and
// whether ATB is there (ATB_HOME_PATH). Everything is checked bit for bit against the CPU backend;
// what a SoC cannot do must be refused before anything runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include "../cli/cli_support.hpp"
#include "../support/format_cases.hpp"
#include "../support/node_test_dirs.hpp"
#include "../support/onnx_builder.hpp"
#include "../support/tiny_decoder.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::ascendtest {
namespace {

namespace rt = gguftool::runtime;
using test::run_gguftool;
using test::RunResult;
using testkit::TempDir;

std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

// The profile this run emulates.
const std::string kLibDir = env("GGUFTOOL_CANN_LIB_DIR");
const std::string kSoc =
    env("GGUFTOOL_CANN_EMULATOR_SOC").empty() ? "Ascend910B1" : env("GGUFTOOL_CANN_EMULATOR_SOC");
const bool k310P = kSoc.starts_with("Ascend310P");
const bool k85 = kLibDir.ends_with("8.5");
const bool kAtb = !env("ATB_HOME_PATH").empty();

#define SKIP_WITHOUT_EMULATION()                                                      \
    if (kLibDir.empty())                                                              \
    GTEST_SKIP() << "GGUFTOOL_CANN_LIB_DIR is not set: ctest runs this program with " \
                    "the CANN emulation's profiles"

rt::Model from_proto(const onnx::ModelProto &m) {
    return rt::Model::from_proto(m, ".", "<test model>");
}

rt::NamedTensors run_on(const rt::Model &m, const std::string &backend,
                        const rt::Inputs &inputs = {}) {
    rt::RunOptions o;
    o.backend = backend;
    rt::Session s(m, o);
    return s.run(inputs);
}

bool same_bytes(const rt::Tensor &a, const rt::Tensor &b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// Elements that differ, any NaN equal to any NaN.
size_t differing(const rt::Tensor &a, const rt::Tensor &b) {
    const size_t w = dtype_size(a.dtype());
    size_t n = 0;
    for (uint64_t i = 0; i < a.elements(); ++i) {
        const uint8_t *p = a.data() + i * w, *q = b.data() + i * w;
        if (std::memcmp(p, q, w) != 0 &&
            !(testkit::is_nan(p, a.dtype()) && testkit::is_nan(q, a.dtype())))
            ++n;
    }
    return n;
}

TEST(Ascend, LoadsTheEmulationAndSaysSo) {
    SKIP_WITHOUT_EMULATION();
    const auto b = rt::make_backend("ascend");
    EXPECT_EQ(b->name(), "ascend");
    const std::string d = b->description();
    EXPECT_NE(d.find(kSoc), std::string::npos) << d;
    EXPECT_NE(d.find("emulation"), std::string::npos) << d;
    EXPECT_NE(d.find(k85 ? "8.5" : "8.1"), std::string::npos) << d;
    EXPECT_EQ(d.find("no ATB") == std::string::npos, kAtb) << d;
}

TEST(Ascend, EveryNodeTestPassesExactly) {
    SKIP_WITHOUT_EMULATION();
    rt::RunOptions o;
    o.backend = "ascend";
    size_t ran = 0, refused = 0;
    for (const testkit::NodeTestRoot &root : testkit::present_node_test_roots()) {
        for (const rt::NodeTestResult &r : rt::run_node_tests(root.dir.string(), true, o)) {
            if (testkit::is_decoder_operator_test(r.name)) {
                // CPU-only operators: placed on the CPU fallback, and exact there.
                EXPECT_TRUE(r.passed) << root.name << "/" << r.name << ": " << r.message;
                ++refused;
                continue;
            }
            EXPECT_TRUE(r.passed) << root.name << "/" << r.name << ": " << r.message;
            ++ran;
        }
    }
    EXPECT_GE(ran + refused, testkit::kRepositoryNodeTests.min_tests);
    EXPECT_GE(ran, 24u);
}

// Each format x output type on llama.cpp-quantized values, random blocks and an empty tensor: the
// device's results are the CPU backend's on the same lowered graph, bit for bit, and the CPU's
// own DequantizePacked (llama.cpp's decode) up to NaN payloads, which the lowering does not keep
// everywhere (see lib/lower). One test for the four output types: the cases are made once.
TEST(Ascend, EveryFormatAndOutputTypeMatchesTheCpuBackend) {
    SKIP_WITHOUT_EMULATION();
    ASSERT_NE(reference::ggml(), nullptr) << "libggml-base.so is needed";
    std::vector<const testkit::FormatCase *> all;
    for (const testkit::FormatCase &c : testkit::format_cases()) all.push_back(&c);
    for (DataType dtype :
         {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64}) {
        SCOPED_TRACE(dtype_name(dtype));
        const onnx::ModelProto packed = testkit::packed_model(dtype, all, false);
        const rt::Model model = from_proto(packed);
        if (dtype == DataType::bfloat16 && k310P) {
            // Refused before anything runs, naming a node, its format, the dtype and the SoC.
            try {
                rt::RunOptions o;
                o.backend = "ascend";
                rt::Session s(model, o);
                ADD_FAILURE() << "a bfloat16 output ran on " << kSoc;
            } catch (const Error &e) {
                const std::string m = e.what();
                EXPECT_NE(m.find("q4_0"), std::string::npos) << m;
                EXPECT_NE(m.find("bfloat16"), std::string::npos) << m;
                EXPECT_NE(m.find(kSoc), std::string::npos) << m;
                EXPECT_NE(m.find("DequantizePacked"), std::string::npos) << m;
            }
            continue;
        }
        onnx::ModelProto lowered_proto = packed;
        lower::lower_model(lowered_proto, {lower::kMaxOpset});
        const rt::NamedTensors device = run_on(model, "ascend");
        const rt::NamedTensors cpu_lowered = run_on(from_proto(lowered_proto), "cpu");
        const rt::NamedTensors cpu = run_on(model, "cpu");
        ASSERT_EQ(device.size(), all.size());
        for (size_t i = 0; i < device.size(); ++i) {
            SCOPED_TRACE(device[i].first);
            EXPECT_TRUE(same_bytes(device[i].second, cpu_lowered[i].second));
            ASSERT_EQ(device[i].second.shape(), cpu[i].second.shape());
            EXPECT_EQ(differing(device[i].second, cpu[i].second), 0u);
        }
    }
}

// A DequantizePacked case of random blocks, without llama.cpp (what launches does not depend on the
// values).
testkit::FormatCase random_case(GgmlType t) {
    const size_t n = 2 * 1024;
    return {type_name(t), t, {2, 1024}, testkit::random_bytes(*row_bytes(t, n), 5), {}};
}

// A one-node model on graph inputs, built in memory.
onnx::ModelProto one_node(const std::string &op,
                          const std::vector<std::pair<std::string, DataType>> &inputs, DataType out,
                          int opset, const std::vector<onnx::AttributeProto> &attributes = {}) {
    onnx::ModelProto m;
    m.set_ir_version(10);
    auto *o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    onnx::GraphProto &g = *m.mutable_graph();
    g.set_name("one");
    onnx::NodeProto &n = *g.add_node();
    n.set_op_type(op);
    n.set_name("the_node");
    for (const auto &[name, t] : inputs) {
        n.add_input(name);
        auto *v = g.add_input();
        v->set_name(name);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_number(t));
    }
    for (const auto &a : attributes) *n.add_attribute() = a;
    n.add_output("y");
    auto *v = g.add_output();
    v->set_name("y");
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_number(out));
    return m;
}

// With the fallback refused, what the device cannot run is an error before anything runs; with
// it (the default), the node runs on the CPU, the device's reason in the placement.
TEST(Ascend, RefusesWhatItCannotRunBeforeRunning) {
    SKIP_WITHOUT_EMULATION();
    // Range over floats accumulates in a way aclnnArange does not.
    const rt::Model m = from_proto(one_node(
        "Range", {{"a", DataType::float32}, {"b", DataType::float32}, {"c", DataType::float32}},
        DataType::float32, 21));
    rt::RunOptions o;
    o.backend = "ascend";
    {
        rt::Session s(m, o);
        ASSERT_EQ(s.placement().size(), 1u);
        EXPECT_EQ(s.placement()[0].backend, "cpu");
        EXPECT_NE(s.placement()[0].reason.find(kSoc), std::string::npos) << s.placement()[0].reason;
        const rt::Inputs in = {
            {"a", rt::Tensor::from_values(DataType::float32, {}, std::vector<float>{0.5f})},
            {"b", rt::Tensor::from_values(DataType::float32, {}, std::vector<float>{2})},
            {"c", rt::Tensor::from_values(DataType::float32, {}, std::vector<float>{0.25f})}};
        EXPECT_EQ(s.run(in)[0].second.to_vector<float>(),
                  (std::vector<float>{0.5f, 0.75f, 1, 1.25f, 1.5f, 1.75f}));
    }
    o.fallback = false;
    try {
        rt::Session s(m, o);
        FAIL() << "a float Range was accepted";
    } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("the_node"), std::string::npos) << msg;
        EXPECT_NE(msg.find("Range"), std::string::npos) << msg;
        EXPECT_NE(msg.find("float"), std::string::npos) << msg;
        EXPECT_NE(msg.find(kSoc), std::string::npos) << msg;
    }
}

onnx::AttributeProto string_attribute(const std::string &name, const std::string &value) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(value);
    return a;
}

// Shifts by amounts known on the host become floor divisions and products; by amounts computed on
// the device they need aclnnRightShift (CANN 8.5 on an A2-class SoC).
TEST(Ascend, BitShiftsMatchTheCpuBackend) {
    SKIP_WITHOUT_EMULATION();
    const std::vector<uint8_t> x = {0, 1, 2, 3, 127, 128, 200, 255};
    for (const char *dir : {"RIGHT", "LEFT"}) {
        SCOPED_TRACE(dir);
        const rt::Model m =
            from_proto(one_node("BitShift", {{"x", DataType::uint8}, {"s", DataType::uint8}},
                                DataType::uint8, 21, {string_attribute("direction", dir)}));
        for (const std::vector<uint8_t> &s :
             std::vector<std::vector<uint8_t>>{{3}, {0, 1, 2, 3, 4, 7, 8, 9}}) {
            const rt::Inputs in = {
                {"x", rt::Tensor::from_values(DataType::uint8, {8}, x)},
                {"s", rt::Tensor::from_values(DataType::uint8, {int64_t(s.size())}, s)}};
            const auto dev = run_on(m, "ascend", in);
            const auto cpu = run_on(m, "cpu", in);
            EXPECT_TRUE(same_bytes(dev[0].second, cpu[0].second));
        }
    }
}

// Shift amounts computed on the device (an Add's output) have no host copy: a right shift needs
// aclnnRightShift, which CANN 8.5 has on the Atlas A2 and nothing has on the 310P or in CANN 8.1.
TEST(Ascend, RightShiftByComputedAmountsNeedsAclnnRightShift) {
    SKIP_WITHOUT_EMULATION();
    onnx::ModelProto m = one_node("BitShift", {{"x", DataType::uint8}, {"t", DataType::uint8}},
                                  DataType::uint8, 21, {string_attribute("direction", "RIGHT")});
    onnx::GraphProto &g = *m.mutable_graph();
    // t = s + zero, then x >> t.
    onnx::NodeProto &add = *g.add_node();
    add.set_op_type("Add");
    add.set_name("amounts");
    add.add_input("s");
    add.add_input("zero");
    add.add_output("t");
    g.mutable_node()->SwapElements(0, 1);
    g.mutable_input(1)->set_name("s");
    auto *zero = g.add_input();
    zero->set_name("zero");
    zero->mutable_type()->mutable_tensor_type()->set_elem_type(onnx_number(DataType::uint8));
    const rt::Inputs in = {
        {"x", rt::Tensor::from_values(DataType::uint8, {4}, std::vector<uint8_t>{255, 128, 7, 1})},
        {"s", rt::Tensor::from_values(DataType::uint8, {4}, std::vector<uint8_t>{1, 7, 2, 9})},
        {"zero", rt::Tensor::from_values(DataType::uint8, {4}, std::vector<uint8_t>{0, 0, 0, 0})}};
    const rt::Model model = from_proto(m);
    if (k85 && !k310P) {
        const auto dev = run_on(model, "ascend", in);
        EXPECT_TRUE(same_bytes(dev[0].second, run_on(model, "cpu", in)[0].second));
        EXPECT_EQ(dev[0].second.to_vector<uint8_t>(), (std::vector<uint8_t>{127, 1, 1, 0}));
    } else {
        try {
            run_on(model, "ascend", in);
            FAIL() << "ran without aclnnRightShift";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find("aclnnRightShift"), std::string::npos) << e.what();
        }
    }
}

TEST(Ascend, ProfilesCountDeviceCallsPerLoweredNode) {
    SKIP_WITHOUT_EMULATION();
    const testkit::FormatCase q4 = random_case(GgmlType::q4_0);
    rt::RunOptions o;
    o.backend = "ascend";
    o.profile = true;
    rt::Session s(from_proto(testkit::packed_model(DataType::float32, {&q4}, false)), o);
    s.run();
    uint64_t calls = 0;
    for (const rt::NodeProfile &p : s.profile()) {
        calls += p.device_calls;
        EXPECT_NE(p.lowered_from.find("q4_0"), std::string::npos) << p.node;
    }
    EXPECT_GT(calls, 5u);
    EXPECT_EQ(calls, s.backend().device_calls());
}

// The speed proxy without an NPU: aclnn launches per DequantizePacked format (FLOAT output, one
// tensor of 2048 elements: the count does not depend on the size or the values), and how many of
// them the emulation's log marks as AI CPU kernels. Printed for docs/ASCEND.md and the closing
// note; each format must launch something.
TEST(Ascend, DeviceCallsPerFormat) {
    SKIP_WITHOUT_EMULATION();
    TempDir dir;
    const std::string log = dir.file("calls.log");
    // Read when the emulation initialises: this test is the first to load it in its process.
    setenv("GGUFTOOL_CANN_EMULATOR_LOG", log.c_str(), 1);
    rt::RunOptions o;
    o.backend = "ascend";
    o.profile = true;
    std::cout << "format    calls  aicpu  (" << kSoc << ", " << (k85 ? "8.5" : "8.1") << ")\n";
    for (GgmlType t : testkit::quantized_types()) {
        const testkit::FormatCase c = random_case(t);
        const size_t before = [&] {
            std::ifstream f(log);
            return size_t(std::count(std::istreambuf_iterator<char>(f), {}, '\n'));
        }();
        rt::Session s(from_proto(testkit::packed_model(DataType::float32, {&c}, false)), o);
        s.run();
        uint64_t calls = 0;
        for (const rt::NodeProfile &p : s.profile()) calls += p.device_calls;
        std::ifstream f(log);
        std::string line;
        size_t n = 0, aicpu = 0;
        while (std::getline(f, line))
            if (n++ >= before && line.ends_with("aicpu")) ++aicpu;
        EXPECT_GT(calls, 0u) << c.name;
        // No log when the emulation was initialised earlier in this process (a filtered run).
        const std::string cpu = std::filesystem::exists(log) ? std::to_string(aicpu) : "-";
        std::cout << fmt::format("{:<8}  {:>5}  {:>5}\n", type_name(c.type), calls, cpu);
    }
}

// A graph mixing operators the device runs (Add, Mul, Where, Neg, Shape) with some it does not
// (MatMul, Tanh, Softmax, Greater: CPU kernels only): a value crosses to the other backend where
// its reader runs there, an initializer is on each backend that reads it.
testkit::ModelBuilder mixed_graph() {
    testkit::ModelBuilder b(18, "mixed");
    b.input("x", DataType::float32, {2, 3});
    for (const char *o : {"h", "a", "y", "shp", "np"}) b.output(o);
    b.initializer("w", rt::Tensor::from_values(DataType::float32, {3, 4},
                                               std::vector<float>{0.5f, -1, 2, 0.25f, 1.5f, -0.75f,
                                                                  3, 1, -2, 0.125f, 1, -0.5f}));
    b.initializer("bias", rt::Tensor::from_values(DataType::float32, {4},
                                                  std::vector<float>{0.1f, -0.2f, 0.3f, 0.7f}));
    b.initializer("quarter",
                  rt::Tensor::from_values(DataType::float32, {}, std::vector<float>{0.25f}));
    b.node("MatMul", {"x", "w"}, {"h"}, {}, "mm");
    b.node("Add", {"h", "bias"}, {"a"}, {}, "add");
    b.node("Tanh", {"a"}, {"t"}, {}, "tanh");
    b.node("Mul", {"t", "a"}, {"m"}, {}, "mul");
    b.node("Softmax", {"m"}, {"p"}, {}, "soft");
    b.node("Greater", {"p", "quarter"}, {"g"}, {}, "gt");
    b.node("Where", {"g", "m", "bias"}, {"y"}, {}, "where");
    b.node("Shape", {"p"}, {"shp"}, {}, "shape");
    b.node("Neg", {"p"}, {"np"}, {}, "neg");
    return b;
}

const rt::Inputs kMixedInputs = {
    {"x", rt::Tensor::from_values(DataType::float32, {2, 3},
                                  std::vector<float>{1, -2, 0.5f, 0.3f, 0.9f, -1.7f})}};

TEST(Ascend, UnsupportedNodesFallBackToTheCpuWithTheCpuResults) {
    SKIP_WITHOUT_EMULATION();
    const rt::Model m = mixed_graph().model();
    rt::RunOptions o;
    o.backend = "ascend";
    o.profile = true;
    rt::Session s(m, o);
    const std::map<std::string, std::string> want = {
        {"mm", "cpu"}, {"add", "ascend"},   {"tanh", "cpu"},     {"mul", "ascend"}, {"soft", "cpu"},
        {"gt", "cpu"}, {"where", "ascend"}, {"shape", "ascend"}, {"neg", "ascend"}};
    ASSERT_EQ(s.placement().size(), want.size());
    for (const rt::NodePlacement &p : s.placement()) {
        EXPECT_EQ(p.backend, want.at(p.node)) << p.node;
        EXPECT_EQ(p.reason.empty(), p.backend == "ascend") << p.node;
        if (p.backend == "cpu") {
            EXPECT_EQ(p.reason, "the ascend backend has no " + p.op_type) << p.node;
        }
    }
    const std::string line = rt::placement_summary(s.placement());
    std::cout << line << "\n";
    EXPECT_EQ(line,
              "placement: 5 nodes on ascend (Add 1, Mul 1, Where 1, Shape 1, Neg 1), 4 on cpu "
              "(MatMul 1: the ascend backend has no MatMul; Tanh 1: the ascend backend has no "
              "Tanh; Softmax 1: the ascend backend has no Softmax; Greater 1: the ascend backend "
              "has no Greater)");

    const rt::NamedTensors cpu = run_on(m, "cpu", kMixedInputs);
    for (int run = 0; run < 2; ++run) {
        const rt::NamedTensors dev = s.run(kMixedInputs);
        ASSERT_EQ(dev.size(), cpu.size());
        for (size_t i = 0; i < dev.size(); ++i) {
            EXPECT_EQ(dev[i].first, cpu[i].first);
            EXPECT_TRUE(same_bytes(dev[i].second, cpu[i].second)) << dev[i].first;
        }
    }
    uint64_t calls = 0;
    for (const rt::NodeProfile &p : s.profile()) {
        EXPECT_EQ(p.backend, want.at(p.node)) << p.node;
        if (p.backend == "cpu") {
            EXPECT_EQ(p.device_calls, 0u) << p.node;
        }
        calls += p.device_calls;
    }
    EXPECT_GT(calls, 0u);

    // Refusing the fallback restores the error that lists every node the device cannot run.
    o.fallback = false;
    try {
        rt::Session refused(m, o);
        FAIL() << "the session was made";
    } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("the ascend backend cannot run 4 nodes"), std::string::npos) << msg;
        for (const char *n : {"\"mm\" (MatMul-13)", "\"tanh\" (Tanh-13)", "\"soft\" (Softmax-13)",
                              "\"gt\" (Greater-13)"})
            EXPECT_NE(msg.find(n), std::string::npos) << n << "\n" << msg;
    }
}

// The CLI: `run --backend ascend` prints the placement once on stderr, the outputs are the CPU's,
// and --benchmark has the backend column.
TEST(Ascend, RunPrintsThePlacement) {
    SKIP_WITHOUT_EMULATION();
    TempDir dir;
    const std::string model = dir.file("mixed.onnx"), x = dir.file("x.npy");
    mixed_graph().save(model);
    rt::write_npy(x, kMixedInputs.at("x"));
    const RunResult dev = run_gguftool({"run", model, "--backend", "ascend", "--input", "x=" + x,
                                        "--output-dir", dir.file("dev"), "--benchmark"});
    ASSERT_EQ(dev.status, 0) << dev.out << dev.err;
    const size_t at = dev.err.find("placement: 5 nodes on ascend (Add 1,");
    EXPECT_NE(at, std::string::npos) << dev.err;
    EXPECT_EQ(dev.err.find("placement:", at + 1), std::string::npos) << dev.err;  // once
    EXPECT_NE(dev.err.find("4 on cpu (MatMul 1: the ascend backend has no MatMul;"),
              std::string::npos)
        << dev.err;
    EXPECT_NE(dev.out.find("backend"), std::string::npos) << dev.out;
    const RunResult cpu =
        run_gguftool({"run", model, "--input", "x=" + x, "--output-dir", dir.file("cpu")});
    ASSERT_EQ(cpu.status, 0) << cpu.out << cpu.err;
    EXPECT_EQ(cpu.err.find("placement"), std::string::npos) << cpu.err;
    for (const char *o : {"h", "a", "y", "shp", "np"}) {
        const rt::Tensor a = rt::read_npy(dir.file(fmt::format("dev/{}.npy", o)));
        const rt::Tensor b = rt::read_npy(dir.file(fmt::format("cpu/{}.npy", o)));
        EXPECT_TRUE(same_bytes(a, b)) << o;
    }
}

// A whole decoder (to-onnx --graph decoder of the tiny llama) under the device: what it cannot
// run (MatMul, Softmax, ReduceMean, Sqrt, ...) runs on the CPU; the logits and the KV cache of a
// prefill and a step through the cache are the CPU backend's bit for bit (every device operator
// the graph uses is exact on float32). With libllama, the Q8_0 model too: its DequantizePacked
// nodes are lowered for the device first, then placed.
void expect_decoder_matches_cpu(const std::string &package, const decoder::Hparams &h) {
    const rt::Model model = rt::Model::load(package + "/onnx/model.onnx");
    rt::RunOptions o;
    o.backend = "ascend";
    // One thread on both sides: the CPU backend cuts each MatMul and Gemm into sgemm pieces by
    // its thread count, and OpenBLAS's rounding can differ between pieces of other sizes (with
    // unequal thread counts the logits differed in the last bits here, on the CPU nodes).
    o.threads = 1;
    rt::Session dev(model, o);
    // The CPU side unfused, as the fallback nodes run (weight products and the KV cache are fused
    // only where every node runs on the CPU).
    rt::Session cpu(model,
                    rt::RunOptions{.threads = 1, .weight_products = rt::WeightProducts::unfused});
    size_t on_device = 0, matmuls_on_cpu = 0;
    for (const rt::NodePlacement &p : dev.placement()) {
        on_device += p.backend == "ascend";
        if (p.op_type == "MatMul" && p.backend == "cpu") ++matmuls_on_cpu;
    }
    EXPECT_GT(on_device, 0u);
    EXPECT_GT(matmuls_on_cpu, 0u);
    std::cout << rt::placement_summary(dev.placement()) << "\n";

    rt::Inputs past;
    for (int64_t il = 0; il < h.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            past[fmt::format("past_key_values.{}.{}", il, kv)] =
                rt::Tensor::zeros(DataType::float32, rt::Shape{1, h.n_head_kv, 0, h.head_dim});
    const auto i64 = [](const std::vector<int64_t> &v) {
        return rt::Tensor::from_values(DataType::int64, {1, int64_t(v.size())}, v);
    };
    std::vector<int64_t> ids = {1, 300, 17, 42, 99};
    int64_t pos = 0;
    for (int step = 0; step < 2; ++step) {
        SCOPED_TRACE(fmt::format("step {}", step));
        rt::Inputs in = past;
        std::vector<int64_t> positions, mask(size_t(pos) + ids.size(), 1);
        for (size_t i = 0; i < ids.size(); ++i) positions.push_back(pos + int64_t(i));
        in["input_ids"] = i64(ids);
        in["position_ids"] = i64(positions);
        in["attention_mask"] = i64(mask);
        const rt::NamedTensors a = dev.run(in), b = cpu.run(in);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            ASSERT_EQ(a[i].first, b[i].first);
            EXPECT_EQ(differing(a[i].second, b[i].second), 0u) << a[i].first;
            if (a[i].first.rfind("present.", 0) == 0)
                past["past_key_values." + a[i].first.substr(8)] = b[i].second;
        }
        pos += int64_t(ids.size());
        ids = {7};
    }
}

TEST(Ascend, ADecoderRunsWithTheCpuFallbackAsOnTheCpu) {
    SKIP_WITHOUT_EMULATION();
    TempDir dir;
    const std::string gguf = dir.file("llama.gguf");
    testkit::write_tiny_decoder("llama", gguf);
    const decoder::Result f32 =
        decoder::export_decoder(gguf::Model::open(gguf), dir.file("f32"), {});
    {
        SCOPED_TRACE("F32");
        expect_decoder_matches_cpu(f32.directory, f32.hparams);
    }
    std::string why;
    const auto lib = reference::load_llama(&why);
    if (!lib) {
        std::cout << "libllama not found (" << why << "): the Q8_0 decoder is not run\n";
        return;
    }
    const std::string q8 = dir.file("llama-q8_0.gguf");
    reference::quantize_model(lib, gguf, q8, *reference::llama_ftype_from_name("Q8_0"));
    const decoder::Result q = decoder::export_decoder(gguf::Model::open(q8), dir.file("q8"), {});
    ASSERT_GT(q.packed, 0u);
    SCOPED_TRACE("Q8_0");
    expect_decoder_matches_cpu(q.directory, q.hparams);
}

// End to end on the sample: convert, run on the device comparing with the GGUF, verify.
TEST(Ascend, SampleRunsAndVerifiesOnTheDevice) {
    SKIP_WITHOUT_EMULATION();
    TempDir dir;
    const std::string onnx = dir.file("sample.onnx");
    ASSERT_EQ(run_gguftool({"to-onnx", testkit::kSample, onnx}).status, 0);
    const RunResult run =
        run_gguftool({"run", onnx, "--backend", "ascend", "--compare", testkit::kSample});
    EXPECT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_NE(run.out.find(" 0 differ"), std::string::npos) << run.out;
    EXPECT_NE(run.err.find("emulation"), std::string::npos) << run.err;
    const RunResult verify =
        run_gguftool({"verify", testkit::kSample, "--onnx", onnx, "--backend", "ascend"});
    EXPECT_EQ(verify.status, 0) << verify.out << verify.err;
}

TEST(Ascend, ADeviceThatIsNotThereIsAnError) {
    SKIP_WITHOUT_EMULATION();
    rt::BackendOptions o;
    o.device = 7;
    try {
        rt::make_backend("ascend", o);
        FAIL() << "device 7 opened";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("no Ascend device 7"), std::string::npos) << e.what();
    }
}

// Without CANN, --backend ascend says what it looked for and where, and exits 1.
TEST(Ascend, WithoutCannTheBackendSaysWhatItLookedFor) {
    TempDir dir;
    const std::string onnx = dir.file("sample.onnx");
    ASSERT_EQ(run_gguftool({"to-onnx", testkit::kSample, onnx}).status, 0);
    const std::string missing = dir.file("no-cann-here");
    const RunResult r = testkit::run({"/usr/bin/env", "-u", "ASCEND_HOME_PATH", "-u",
                                      "ASCEND_TOOLKIT_HOME", "GGUFTOOL_CANN_LIB_DIR=" + missing,
                                      GGUFTOOL_EXE, "run", onnx, "--backend", "ascend"});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("libacl_rt.so"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("libascendcl.so"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
    // The CPU backend is unaffected.
    const RunResult cpu = testkit::run(
        {"/usr/bin/env", "GGUFTOOL_CANN_LIB_DIR=" + missing, GGUFTOOL_EXE, "run", onnx});
    EXPECT_EQ(cpu.status, 0) << cpu.err;
}

}  // namespace
}  // namespace gguftool::ascendtest
