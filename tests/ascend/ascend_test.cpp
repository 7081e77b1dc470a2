// The Ascend backend on the CANN emulation (tests/cann_emulator; an emulation, not an NPU). ctest
// runs this program once per profile, chosen by environment (tests/CMakeLists.txt): the SoC
// (GGUFTOOL_CANN_EMULATOR_SOC), the CANN library layout (GGUFTOOL_CANN_LIB_DIR: 8.1 or 8.5) and
// whether ATB is there (ATB_HOME_PATH). Everything is checked bit for bit against the CPU backend
// but the q4_0 and q8_0 weight products on aclnnWeightQuantBatchMatmulV2 (float16: within a
// tolerance); what a SoC cannot do must be refused before anything runs.
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
#include <nlohmann/json.hpp>

#include "../cli/cli_support.hpp"
#include "../support/decoder_fixtures.hpp"
#include "../support/format_cases.hpp"
#include "../support/node_test_dirs.hpp"
#include "../support/onnx_builder.hpp"
#include "../support/tiny_decoder.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/half.hpp"
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

// --- Weight products on aclnnWeightQuantBatchMatmulV2 --------------------------------------------

// A q4_0 or q8_0 weight [n, k] of random blocks (scales d in [2^-12, 2^-6]) and its decode.
struct QuantWeight {
    GgmlType type;
    int64_t n, k;
    std::vector<uint8_t> bytes;
    std::vector<float> values;
};

QuantWeight quant_weight(GgmlType type, int64_t n, int64_t k, uint32_t seed) {
    QuantWeight w{type, n, k, {}, std::vector<float>(size_t(n * k))};
    uint32_t state = seed;
    const auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    };
    for (int64_t b = 0; b < n * k / 32; ++b) {
        const uint16_t d = f32_to_fp16(float(1 + next() % 64) / 4096.0f);
        w.bytes.push_back(uint8_t(d & 0xFF));
        w.bytes.push_back(uint8_t(d >> 8));
        float *v = &w.values[size_t(b * 32)];
        if (type == GgmlType::q8_0) {
            for (int j = 0; j < 32; ++j) {
                const int8_t q = int8_t(int(next() % 255) - 127);
                w.bytes.push_back(uint8_t(q));
                v[j] = fp16_to_f32(d) * float(q);
            }
        } else {
            for (int j = 0; j < 16; ++j) {
                const uint8_t q = uint8_t(next());
                w.bytes.push_back(q);
                v[j] = fp16_to_f32(d) * float((q & 0xF) - 8);
                v[j + 16] = fp16_to_f32(d) * float((q >> 4) - 8);
            }
        }
    }
    return w;
}

// y = Gemm(a, DequantizePacked(x), [bias], transB = 1) per weight, inputs a0, a1, ...
testkit::ModelBuilder gemm_model(const std::vector<QuantWeight> &weights, int64_t m, bool bias) {
    testkit::ModelBuilder b(29, "weight_products");
    for (size_t i = 0; i < weights.size(); ++i) {
        const QuantWeight &w = weights[i];
        const std::string id = std::to_string(i);
        b.input("a" + id, DataType::float32, {m, w.k});
        b.bytes_initializer("x" + id, w.bytes);
        b.dequantize_packed("dq" + id, "x" + id, "w" + id, w.type, {w.n, w.k}, DataType::float32);
        std::vector<std::string> in = {"a" + id, "w" + id};
        if (bias) {
            std::vector<float> c(size_t(w.n));
            for (size_t j = 0; j < c.size(); ++j) c[j] = float(j % 5) - 2.0f;
            b.initializer("c" + id, rt::Tensor::from_values(DataType::float32, {w.n}, c));
            in.push_back("c" + id);
        }
        b.node("Gemm", in, {"y" + id}, {testkit::attr_int("transB", 1)}, "product" + id);
        b.output("y" + id);
    }
    return b;
}

rt::Tensor activations(int64_t m, int64_t k, uint32_t seed) {
    std::vector<float> a(size_t(m * k));
    uint32_t state = seed;
    for (float &v : a) {
        state = state * 1664525u + 1013904223u;
        v = float(int(state >> 16) % 4001 - 2000) / 1000.0f;
    }
    return rt::Tensor::from_values(DataType::float32, {m, k}, a);
}

// The device computes in float16: A and each dequantized weight element are rounded to it (2^-11
// relative each), products summed in float, y rounded to float16 (2^-11 of |y|). The tolerance,
// twice that: |y - y_cpu| <= 2^-9 sum_k |a||w| + 2^-10 |y_cpu|, y_cpu the float product.
size_t outside_tolerance(const rt::Tensor &y, const rt::Tensor &want, const rt::Tensor &a,
                         const QuantWeight &w) {
    const std::vector<float> got = y.to_vector<float>(), ref = want.to_vector<float>(),
                             av = a.to_vector<float>();
    const int64_t m = a.shape()[0];
    size_t bad = 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < w.n; ++j) {
            double magnitude = 0;
            for (int64_t r = 0; r < w.k; ++r)
                magnitude += std::fabs(av[size_t(i * w.k + r)] * w.values[size_t(j * w.k + r)]);
            const float r = ref[size_t(i * w.n + j)];
            bad += !(std::fabs(got[size_t(i * w.n + j)] - r) <=
                     std::ldexp(magnitude, -9) + std::ldexp(std::fabs(r), -10));
        }
    return bad;
}

// The float reference: the CPU, weights decoded whole (no int8 activations).
rt::NamedTensors cpu_float(const rt::Model &m, const rt::Inputs &in) {
    rt::RunOptions o;
    o.weight_products = rt::WeightProducts::unfused;
    rt::Session s(m, o);
    return s.run(in);
}

// q4_0 and q8_0 weight products run on aclnnWeightQuantBatchMatmulV2 (q4_0 not on the 310P: no
// INT4 weights there), per group of 32 (k > 32) or per channel (k = 32), with and without C; the
// result is the CPU's float product within the tolerance, which a weight with its first row's
// scales doubled is outside of.
TEST(Ascend, Q4_0AndQ8_0WeightProductsRunOnWeightQuantBatchMatmulV2) {
    SKIP_WITHOUT_EMULATION();
    struct Case {
        GgmlType type;
        int64_t n, k;
        bool bias;
    };
    constexpr int64_t m = 3;
    for (const Case &c : {Case{GgmlType::q4_0, 5, 96, false}, Case{GgmlType::q8_0, 4, 32, false},
                          Case{GgmlType::q8_0, 3, 64, true}, Case{GgmlType::q4_0, 6, 32, true}}) {
        SCOPED_TRACE(
            fmt::format("{} [{}, {}]{}", type_name(c.type), c.n, c.k, c.bias ? " with C" : ""));
        const QuantWeight w = quant_weight(c.type, c.n, c.k, uint32_t(c.n * c.k));
        const rt::Model model = gemm_model({w}, m, c.bias).model();
        const rt::Inputs in = {{"a0", activations(m, c.k, 7)}};
        rt::RunOptions o;
        o.backend = "ascend";
        rt::Session dev(model, o);
        const bool mapped = !(k310P && c.type == GgmlType::q4_0);
        bool on_device = false;
        for (const rt::NodePlacement &p : dev.placement())
            on_device |= p.op_type == "DequantizePackedGemm" && p.backend == "ascend";
        EXPECT_EQ(on_device, mapped) << rt::placement_summary(dev.placement());
        const rt::NamedTensors got = dev.run(in), want = cpu_float(model, in);
        EXPECT_EQ(outside_tolerance(got[0].second, want[0].second, in.at("a0"), w), 0u);
        EXPECT_EQ(dev.run(in)[0].second.to_vector<float>(), got[0].second.to_vector<float>());

        QuantWeight wrong = w;
        for (int64_t b = 0; b < c.k / 32; ++b) {
            uint8_t *d = &wrong.bytes[size_t(b) * (c.type == GgmlType::q4_0 ? 18 : 34)];
            const uint16_t doubled = f32_to_fp16(2 * fp16_to_f32(uint16_t(d[0] | d[1] << 8)));
            d[0] = uint8_t(doubled & 0xFF);
            d[1] = uint8_t(doubled >> 8);
        }
        const rt::NamedTensors bad = cpu_float(gemm_model({wrong}, m, c.bias).model(), in);
        EXPECT_GT(outside_tolerance(got[0].second, bad[0].second, in.at("a0"), w), 0u);
    }
}

// Beside a q8_0 product on the device, a q4_K one falls back to the CPU, fused there, the reason
// in the placement; `gguftool run --backend ascend` prints it.
TEST(Ascend, OtherFormatsFallBackToTheCpuAndThePlacementSaysSo) {
    SKIP_WITHOUT_EMULATION();
    constexpr int64_t m = 2;
    QuantWeight q4k{GgmlType::q4_k, 2, 256, std::vector<uint8_t>(2 * 144, 0), {}};
    const testkit::ModelBuilder b =
        gemm_model({quant_weight(GgmlType::q8_0, 4, 64, 3), q4k}, m, false);
    rt::RunOptions o;
    o.backend = "ascend";
    rt::Session dev(b.model(), o);
    const std::string summary = rt::placement_summary(dev.placement());
    std::cout << summary << "\n";
    ASSERT_EQ(dev.placement().size(), 2u) << summary;
    for (const rt::NodePlacement &p : dev.placement()) {
        EXPECT_EQ(p.op_type, "DequantizePackedGemm") << summary;
        EXPECT_EQ(p.backend, p.node == "product0" ? "ascend" : "cpu") << summary;
    }
    EXPECT_NE(summary.find("1 node on ascend (DequantizePackedGemm 1), 1 on cpu "
                           "(DequantizePackedGemm 1: aclnnWeightQuantBatchMatmulV2 takes q4_0 "
                           "and q8_0 weights here, not q4_K"),
              std::string::npos)
        << summary;
    const rt::Inputs in = {{"a0", activations(m, 64, 1)}, {"a1", activations(m, 256, 2)}};
    const rt::NamedTensors got = dev.run(in);
    EXPECT_EQ(got[1].second.to_vector<float>(), std::vector<float>(size_t(m * 2), 0.0f));

    TempDir dir;
    const std::string model = dir.file("products.onnx");
    b.save(model);
    std::vector<std::string> args = {"run",    model,          "--backend",
                                     "ascend", "--output-dir", dir.file("out")};
    for (const auto &[name, t] : in) {
        rt::write_npy(dir.file(name + ".npy"), t);
        args.insert(args.end(), {"--input", name + "=" + dir.file(name + ".npy")});
    }
    const RunResult r = run_gguftool(args);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("placement: 1 node on ascend (DequantizePackedGemm 1)"), std::string::npos)
        << r.err;
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
    // The graph's own nodes on both sides, bit for bit: not the weight products
    // aclnnWeightQuantBatchMatmulV2 computes in float16
    // (Q4_0AndQ8_0WeightProductsRunOnWeightQuantBatchMatmulV2), nor the CPU's fused KV cache and
    // int8 products.
    o.weight_products = rt::WeightProducts::unfused;
    // One thread on both sides: the CPU backend cuts each MatMul and Gemm into sgemm pieces by
    // its thread count, and OpenBLAS's rounding can differ between pieces of other sizes (with
    // unequal thread counts the logits differed in the last bits here, on the CPU nodes).
    o.threads = 1;
    rt::Session dev(model, o);
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

// A tiny llama decoder quantized to Q4_0 by llama.cpp: `gguftool generate` on the device, its
// q4_0 and q8_0 products on aclnnWeightQuantBatchMatmulV2 (not on the 310P for q4_0), gives the
// CPU's greedy tokens.
TEST(Ascend, AQ4_0DecoderGeneratesTheCpusGreedyTokens) {
    SKIP_WITHOUT_EMULATION();
    std::string package;
    try {
        package = testkit::decoder_package("llama", "Q4_0");
    } catch (const std::runtime_error &e) {
        GTEST_SKIP() << e.what();
    }
    const auto ids = [&](const std::string &backend) {
        const RunResult r =
            run_gguftool({"generate", package, "--ids", "1,17,42,300", "-n", "8", "--temperature",
                          "0", "--threads", "1", "--json", "--backend", backend});
        EXPECT_EQ(r.status, 0) << r.err;
        if (backend == "ascend") {
            // On the 310P (no INT4 weights) nothing fuses: its q4_0 weights run lowered.
            EXPECT_EQ(r.err.find("DequantizePackedGemm") != std::string::npos, !k310P) << r.err;
            std::cout << r.err.substr(0, r.err.find('\n', r.err.find("placement"))) << "\n";
        }
        return r.status == 0 ? nlohmann::json::parse(r.out)["ids"] : nlohmann::json();
    };
    const nlohmann::json cpu = ids("cpu"), dev = ids("ascend");
    EXPECT_FALSE(cpu.empty());
    EXPECT_EQ(dev, cpu);
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
