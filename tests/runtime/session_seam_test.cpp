// The session's side of the backend seam: the capability query before anything runs (lowering
// what a backend asks to have lowered, refusing what it cannot run), the element types it is
// asked about, initializers uploaded once, and synchronize / device calls in profiled runs. A
// test backend wraps the CPU backend, counts what the session asks of it and answers the queries
// as a test tells it to.
#include <map>
#include <set>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

using rt::Capability;
using rt::DeviceTensor;

#define EXPECT_HAS(haystack, needle) \
    EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// A session that refuses what its backend cannot run rather than running it on the CPU.
const rt::RunOptions kNoFallback{.fallback = false};

// What the session asked of a TestBackend; it outlives the backend (which a session that cannot
// be made destroys).
struct Record {
    std::vector<rt::OpQuery> queries;
    size_t uploads = 0, synchronizes = 0;
    std::map<std::string, size_t> calls;  // kernel calls per operator

    size_t operator_calls() const {
        size_t n = 0;
        for (const auto &[op, count] : calls) n += count;
        return n;
    }
};

class TestBackend final : public rt::Backend {
public:
    // The CPU backend's rows, its kernels counted, every query recorded and answered as the test
    // says (`rows` false: no row at all).
    explicit TestBackend(Record &record, bool rows = true) : record_(record) {
        if (!rows) return;
        for (const std::string &op : cpu_->op_types()) {
            const rt::OpKernel *kernel = cpu_->kernel(op);
            rt::OpKernel counted;
            if (kernel)
                counted = [this, op, kernel](const rt::KernelArgs &a) {
                    ++record_.calls[op];
                    (*kernel)(a);
                };
            register_kernel(op, counted, [this](const rt::OpQuery &q) { return answer(q); });
        }
    }

    std::set<std::string> lowered;   // op types answered `lowered`
    std::string unsupported_op;      // answered `unsupported` ...
    std::string unsupported_reason;  // ... with this reason

    std::string name() const override { return "test"; }
    void synchronize() override { ++record_.synchronizes; }
    uint64_t device_calls() const override { return record_.operator_calls(); }

    DeviceTensor allocate(DataType dtype, const rt::Shape &shape) override {
        return cpu_->allocate(dtype, shape);
    }
    DeviceTensor upload(const rt::Tensor &host) override {
        ++record_.uploads;
        return cpu_->upload(host);
    }
    rt::Tensor download(const DeviceTensor &t) override { return cpu_->download(t); }

private:
    Capability answer(const rt::OpQuery &q) const {
        record_.queries.push_back(q);
        if (lowered.count(q.op_type)) return {Capability::Kind::lowered, ""};
        if (q.op_type == unsupported_op) return {Capability::Kind::unsupported, unsupported_reason};
        return {};
    }

    Record &record_;
    std::unique_ptr<rt::Backend> cpu_ = rt::make_cpu_backend(1);
};

// A backend that wants the opset-29 operators lowered, as a device without them would.
std::unique_ptr<TestBackend> lowering_backend(Record &record) {
    auto b = std::make_unique<TestBackend>(record);
    b->lowered = {"DequantizePacked", "Unpack"};
    return b;
}

// The operator types of the model in `file`.
std::set<std::string> file_ops(const fs::path &file) {
    onnx::ModelProto p;
    EXPECT_TRUE(p.ParseFromString(read_text(file.string()))) << file;
    std::set<std::string> ops;
    for (const onnx::NodeProto &n : p.graph().node()) ops.insert(n.op_type());
    return ops;
}

// The operator types of the nodes a profiled session ran ("Mul-14" counts as "Mul").
std::set<std::string> profiled_ops(const rt::Session &s) {
    std::set<std::string> ops;
    for (const rt::NodeProfile &p : s.profile()) ops.insert(p.op.substr(0, p.op.rfind('-')));
    return ops;
}

// The node test's inputs of test_data_set_0.
rt::Inputs node_test_inputs(const fs::path &dir, const rt::Model &model) {
    rt::Inputs inputs;
    for (size_t k = 0; k < model.inputs().size(); ++k)
        inputs[model.inputs()[k].name] =
            rt::read_tensor_pb((dir / "test_data_set_0" / fmt::format("input_{}.pb", k)).string());
    return inputs;
}

void expect_bit_identical(const rt::NamedTensors &got, const rt::NamedTensors &want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_EQ(got[k].first, want[k].first);
        EXPECT_EQ(got[k].second.dtype(), want[k].second.dtype()) << want[k].first;
        const rt::AllcloseResult c = rt::allclose(got[k].second, want[k].second, true);
        EXPECT_TRUE(c.equal) << want[k].first << ": " << c.message;
    }
}

// --- (a) initializers stay resident ---------------------------------------------------------

TEST(SessionSeam, InitializersAreUploadedOnceForEveryRun) {
    ModelBuilder b;
    b.input("x", DataType::int32).input("w").output("y");
    b.initializer("w", tensor(DataType::int32, {2}, std::vector<int32_t>{10, 20}));
    b.initializer("v", tensor(DataType::int32, {2}, std::vector<int32_t>{1, 2}));
    b.node("Add", {"x", "w"}, {"s"}, {}, "add");
    b.node("Mul", {"s", "v"}, {"y"}, {}, "mul");
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    rt::Session s(b.model(), std::move(backend));
    EXPECT_EQ(test.uploads, 2u);  // both initializers, at construction
    const rt::Tensor x = tensor(DataType::int32, {2}, std::vector<int32_t>{1, 1});
    EXPECT_EQ(s.run({{"x", x}}).at(0).second.to_vector<int32_t>(), (std::vector<int32_t>{11, 42}));
    // A fed input overrides its initializer for that run only.
    const rt::Tensor w = tensor(DataType::int32, {2}, std::vector<int32_t>{-1, -2});
    EXPECT_EQ(s.run({{"x", x}, {"w", w}}).at(0).second.to_vector<int32_t>(),
              (std::vector<int32_t>{0, -2}));
    EXPECT_EQ(s.run({{"x", x}}).at(0).second.to_vector<int32_t>(), (std::vector<int32_t>{11, 42}));
    // Three runs: the two initializers once, then only what was fed (x three times, w once).
    EXPECT_EQ(test.uploads, 2u + 3u + 1u);
}

TEST(SessionSeam, AnInitializerThatIsAGraphOutputIsHandedOutEveryRun) {
    ModelBuilder b;
    b.output("w");
    b.initializer("w", tensor(DataType::int64, {1}, std::vector<int64_t>{7}));
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    rt::Session s(b.model(), std::move(backend));
    for (int run = 0; run < 2; ++run)
        EXPECT_EQ(s.run().at(0).second.to_vector<int64_t>(), (std::vector<int64_t>{7}));
    EXPECT_EQ(test.uploads, 1u);
}

// --- (b) lowering for a backend -------------------------------------------------------------

// Every node test with DequantizePacked or Unpack: lowered for the test backend, bit-identical to
// the CPU backend's native run and to the expected outputs, without the backend's own
// DequantizePacked or Unpack kernel.
TEST(SessionSeam, LoweredNodeTestsMatchTheNativeRunBitForBit) {
    size_t lowered_tests = 0;
    for (const fs::path &dir : all_node_test_dirs()) {
        const std::set<std::string> ops = file_ops(dir / "model.onnx");
        const bool unpack = ops.count("Unpack");
        if (!unpack && !ops.count("DequantizePacked")) continue;
        SCOPED_TRACE(dir.string());
        ++lowered_tests;
        const rt::Model model = rt::Model::load((dir / "model.onnx").string());
        const rt::Inputs inputs = node_test_inputs(dir, model);
        rt::Session native(model);
        Record test;
        auto backend = lowering_backend(test);
        rt::Session lowered(model, std::move(backend), true);
        const rt::NamedTensors want = native.run(inputs);
        expect_bit_identical(lowered.run(inputs), want);
        EXPECT_EQ(profiled_ops(lowered).count("DequantizePacked"), 0u);
        EXPECT_EQ(profiled_ops(lowered).count("Unpack"), 0u);
        std::vector<std::pair<std::string, rt::Tensor>> expected;
        for (size_t k = 0; k < want.size(); ++k)
            expected.emplace_back(
                want[k].first,
                rt::read_tensor_pb(
                    (dir / "test_data_set_0" / fmt::format("output_{}.pb", k)).string()));
        expect_bit_identical(want, expected);
        EXPECT_EQ(test.calls["DequantizePacked"], 0u);
        EXPECT_EQ(test.calls["Unpack"], 0u);
        // Every node came from the one original node, which the profile names.
        for (const rt::NodeProfile &p : lowered.profile())
            EXPECT_HAS(p.lowered_from, unpack ? "(Unpack-29)" : "(DequantizePacked-29, ");
    }
    EXPECT_GE(lowered_tests, 10u);  // the repository's alone have 5 of each
}

// The sample exported in both modes, with external data (still found by the lowered copy):
// lowered, bit-identical to the native run; the profile names each original node with its
// format, and the device calls of its nodes add up.
TEST(SessionSeam, LoweredSampleMatchesTheNativeRun) {
    const std::string &sample = testkit::kSample;
    for (const std::string mode : {"packed", "unpack"}) {
        SCOPED_TRACE(mode);
        TempDir tmp;
        const std::string onnx = tmp.file("sample.onnx");
        const CliResult r =
            run_cli({"to-onnx", "-q", "--external-data", "--mode", mode, sample, onnx});
        ASSERT_EQ(r.status, 0) << r.out;
        // The model keeps its tensors outside: the lowered copy must resolve them too.
        size_t files = 0;
        for (const auto &e : fs::directory_iterator(tmp.path())) files += e.is_regular_file();
        ASSERT_GE(files, 2u);
        ASSERT_EQ(file_ops(onnx).count(mode == "packed" ? "DequantizePacked" : "Unpack"), 1u);
        const rt::Model model = rt::Model::load(onnx);
        Record test;
        auto backend = lowering_backend(test);
        rt::Session lowered(model, std::move(backend), true);
        expect_bit_identical(lowered.run(), rt::Session(model).run());
        EXPECT_EQ(profiled_ops(lowered).count("DequantizePacked"), 0u);
        EXPECT_EQ(profiled_ops(lowered).count("Unpack"), 0u);
        EXPECT_EQ(test.calls["DequantizePacked"], 0u);
        EXPECT_EQ(test.calls["Unpack"], 0u);
        uint64_t calls = 0;
        std::set<std::string> origins;
        for (const rt::NodeProfile &p : lowered.profile()) {
            calls += p.device_calls;
            if (!p.lowered_from.empty()) origins.insert(p.lowered_from);
        }
        EXPECT_EQ(calls, test.operator_calls());
        if (mode == "packed") {
            // One entry per DequantizePacked node of the export (14 of 21 tensors).
            EXPECT_EQ(origins.size(), 14u);
            EXPECT_EQ(origins.count("\"blk.0.attn_q.weight:DequantizePacked\" "
                                    "(DequantizePacked-29, q4_0)"),
                      1u)
                << fmt::format("{}", fmt::join(origins, "\n"));
        } else {
            // Unpack nodes beside the DequantizePacked nodes of the formats unpack mode keeps.
            EXPECT_TRUE(std::any_of(origins.begin(), origins.end(), [](const std::string &o) {
                return o.find("(Unpack-29)") != std::string::npos;
            })) << fmt::format("{}", fmt::join(origins, "\n"));
        }
    }
}

// A backend that asks for nothing to be lowered gets the model as it is.
TEST(SessionSeam, NothingIsLoweredUnlessAsked) {
    const fs::path dir = fs::path(kNodeTests) / "test_dequantizepacked_q4_0";
    const rt::Model model = rt::Model::load((dir / "model.onnx").string());
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    rt::Session s(model, std::move(backend), true);
    s.run(node_test_inputs(dir, model));
    EXPECT_EQ(profiled_ops(s), std::set<std::string>{"DequantizePacked"});
    EXPECT_EQ(test.calls["DequantizePacked"], 1u);
    ASSERT_EQ(s.profile().size(), 1u);
    EXPECT_EQ(s.profile()[0].lowered_from, "");
}

// --- (c) refusing what the backend cannot run -----------------------------------------------

TEST(SessionSeam, AnUnsupportedNodeIsAnErrorBeforeAnythingRuns) {
    ModelBuilder b;
    b.input("x", DataType::int32).output("y");
    b.initializer("w", tensor(DataType::int32, {2}, std::vector<int32_t>{10, 20}));
    b.node("Add", {"x", "w"}, {"s"}, {}, "add");
    b.node("Mul", {"s", "w"}, {"y"}, {}, "scale");
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    backend->unsupported_op = "Mul";
    backend->unsupported_reason = "the test device has no int32 Mul";
    std::string message;
    try {
        rt::Session s(b.model(), std::move(backend), kNoFallback);
        ADD_FAILURE() << "the session was made";
    } catch (const Error &e) {
        message = e.what();
        EXPECT_EQ(e.where(), "test.onnx");
    }
    EXPECT_HAS(message, "the test backend cannot run 1 node");
    EXPECT_HAS(message, "node \"scale\" (Mul-14): the test device has no int32 Mul");
    EXPECT_EQ(message.find("\"add\""), std::string::npos) << message;
    EXPECT_EQ(test.queries.size(), 2u);    // asked about every node
    EXPECT_EQ(test.operator_calls(), 0u);  // and ran none
    EXPECT_EQ(test.uploads, 0u);
}

TEST(SessionSeam, ManyUnsupportedNodesAreListedUpToTen) {
    ModelBuilder b;
    b.input("x", DataType::float32).output("y12");
    std::string prev = "x";
    for (int i = 1; i <= 12; ++i) {
        const std::string out = fmt::format("y{}", i);
        b.node("Neg", {prev}, {out}, {}, fmt::format("neg{}", i));
        prev = out;
    }
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    backend->unsupported_op = "Neg";
    backend->unsupported_reason = "no Neg";
    try {
        rt::Session s(b.model(), std::move(backend), kNoFallback);
        ADD_FAILURE() << "the session was made";
    } catch (const Error &e) {
        const std::string m = e.what();
        EXPECT_HAS(m, "cannot run 12 nodes");
        EXPECT_HAS(m, "node \"neg1\" (Neg-13): no Neg");
        EXPECT_HAS(m, "node \"neg10\" (Neg-13): no Neg");
        EXPECT_EQ(m.find("\"neg11\""), std::string::npos) << m;
        EXPECT_HAS(m, "and 2 more");
    }
}

// The lowering makes standard operators; a backend that cannot run one of them is told which
// node of the lowered graph it is, and one that asks to lower them again is refused too.
TEST(SessionSeam, TheLoweredGraphIsAskedAgain) {
    const fs::path dir = fs::path(kNodeTests) / "test_dequantizepacked_q4_0";
    const rt::Model model = rt::Model::load((dir / "model.onnx").string());
    for (const bool lower_again : {false, true}) {
        Record test;
        auto backend = lowering_backend(test);
        if (lower_again)
            backend->lowered.insert("Mul");
        else
            backend->unsupported_op = "Mul", backend->unsupported_reason = "no Mul";
        try {
            rt::Session s(model, std::move(backend), kNoFallback);
            ADD_FAILURE() << "the session was made";
        } catch (const Error &e) {
            const std::string m = e.what();
            EXPECT_HAS(m, "of the lowered graph");
            EXPECT_HAS(m, "/lower/Mul");
            EXPECT_HAS(m, lower_again ? "still asked to be lowered" : "no Mul");
        }
        EXPECT_EQ(test.operator_calls(), 0u);
    }
}

TEST(SessionSeam, AnOperatorWithoutARowIsUnsupportedUnasked) {
    ModelBuilder b;
    b.input("x", DataType::int32).output("y");
    b.node("Neg", {"x"}, {"y"}, {}, "neg");
    Record test;
    try {
        rt::Session s(b.model(), std::make_unique<TestBackend>(test, false), kNoFallback);
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_HAS(std::string(e.what()),
                   "the test backend cannot run 1 node:\n  node \"neg\" (Neg-13): the test "
                   "backend has no Neg");
    }
    EXPECT_TRUE(test.queries.empty());
    EXPECT_EQ(test.operator_calls(), 0u);

    // With its row registered, the node runs its kernel.
    Record with;
    rt::Session s(b.model(), std::make_unique<TestBackend>(with));
    const rt::Tensor y =
        s.run({{"x", tensor(DataType::int32, {2}, std::vector<int32_t>{3, -4})}})[0].second;
    EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{-3, 4}));
    EXPECT_EQ(with.calls["Neg"], 1u);
}

// --- (c') falling back to the CPU ------------------------------------------------------------

// The nodes the backend cannot run run on a CPU backend; values cross where a node's input lives
// on the other backend, initializers are on each backend that reads them, and the results are
// the CPU-only session's.
TEST(SessionSeam, AnUnsupportedNodeRunsOnTheCpuInstead) {
    ModelBuilder b;
    b.input("x", DataType::int32).output("y").output("s").output("z");
    b.initializer("w", tensor(DataType::int32, {2}, std::vector<int32_t>{10, 20}));
    b.node("Add", {"x", "w"}, {"s"}, {}, "add");
    b.node("Mul", {"s", "w"}, {"y"}, {}, "scale");
    b.node("Neg", {"y"}, {"z"}, {}, "neg");
    const rt::Inputs in = {{"x", tensor(DataType::int32, {2}, std::vector<int32_t>{3, -4})}};
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    backend->unsupported_op = "Mul";
    backend->unsupported_reason = "the test device has no int32 Mul";
    rt::Session s(b.model(), std::move(backend), rt::RunOptions{.threads = 1, .profile = true});
    EXPECT_EQ(test.uploads, 1u);  // w, for add (scale's copy is the CPU backend's)
    const std::vector<rt::NodePlacement> &p = s.placement();
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0].node, "add");
    EXPECT_EQ(p[0].backend, "test");
    EXPECT_EQ(p[0].reason, "");
    EXPECT_EQ(p[1].node, "scale");
    EXPECT_EQ(p[1].op_type, "Mul");
    EXPECT_EQ(p[1].backend, "cpu");
    EXPECT_EQ(p[1].reason, "the test device has no int32 Mul");
    EXPECT_EQ(p[2].backend, "test");
    EXPECT_EQ(rt::placement_summary(p),
              "placement: 2 nodes on test (Add 1, Neg 1), 1 on cpu (Mul 1: the test device has no "
              "int32 Mul)");
    EXPECT_EQ(s.backend().name(), "test");

    for (int run = 0; run < 2; ++run) {
        const rt::NamedTensors got = s.run(in), want = rt::Session(b.model()).run(in);
        ASSERT_EQ(got.size(), 3u);
        for (size_t k = 0; k < got.size(); ++k) {
            EXPECT_EQ(got[k].first, want[k].first);
            EXPECT_EQ(got[k].second.to_vector<int32_t>(), want[k].second.to_vector<int32_t>())
                << got[k].first;
        }
        EXPECT_EQ(got[0].second.to_vector<int32_t>(), (std::vector<int32_t>{130, 320}));
    }
    // Per run: x uploaded, y copied to the test backend for neg; add and neg ran there, scale
    // did not.
    EXPECT_EQ(test.uploads, 1u + 2u * 2u);
    EXPECT_EQ(test.calls["Add"], 2u);
    EXPECT_EQ(test.calls["Neg"], 2u);
    ASSERT_EQ(s.profile().size(), 3u);
    EXPECT_EQ(s.profile()[0].backend, "test");
    EXPECT_EQ(s.profile()[1].backend, "cpu");
    EXPECT_EQ(s.profile()[1].device_calls, 0u);
    EXPECT_EQ(s.profile()[2].backend, "test");
}

// The lowering comes first: the backend is asked again about the lowered graph, and what it
// cannot run of that runs on the CPU, bit for bit as the CPU runs the original node.
TEST(SessionSeam, WhatTheBackendCannotRunOfTheLoweredGraphFallsBack) {
    const fs::path dir = fs::path(kNodeTests) / "test_dequantizepacked_q4_0";
    const rt::Model model = rt::Model::load((dir / "model.onnx").string());
    Record test;
    auto backend = lowering_backend(test);
    backend->unsupported_op = "Mul";
    backend->unsupported_reason = "no Mul";
    rt::Session s(model, std::move(backend));
    size_t on_cpu = 0;
    for (const rt::NodePlacement &p : s.placement()) {
        EXPECT_EQ(p.backend, p.op_type == "Mul" ? "cpu" : "test") << p.node;
        EXPECT_NE(p.op_type, "DequantizePacked");
        if (p.backend != "cpu") continue;
        ++on_cpu;
        EXPECT_EQ(p.reason, "no Mul");
    }
    EXPECT_GT(on_cpu, 0u);
    const rt::Inputs in = node_test_inputs(dir, model);
    expect_bit_identical(s.run(in), rt::Session(model).run(in));
    EXPECT_GT(test.operator_calls(), 0u);
}

// The CPU backend has nothing to fall back on; a CPU session places every node on itself.
TEST(SessionSeam, TheCpuBackendPlacesEveryNodeOnItself) {
    ModelBuilder b;
    b.input("x", DataType::float32).output("y");
    b.node("Neg", {"x"}, {"n"}, {}, "neg");
    b.node("Softmax", {"n"}, {"y"}, {}, "soft");
    rt::Session s(b.model(), rt::RunOptions{.threads = 1});
    ASSERT_EQ(s.placement().size(), 2u);
    for (const rt::NodePlacement &p : s.placement()) {
        EXPECT_EQ(p.backend, "cpu");
        EXPECT_EQ(p.reason, "");
    }
    EXPECT_EQ(rt::placement_summary(s.placement()), "placement: 2 nodes on cpu (Neg 1, Softmax 1)");
}

// --- (d) the element types a backend is asked about -----------------------------------------

TEST(SessionSeam, QueriesCarryTheInferredElementTypes) {
    ModelBuilder b(29);
    b.input("h", DataType::float16, {2}).input("any").input("u", DataType::uint32, {3});
    b.output("eq").output("shp").output("w").output("oh").output("g").output("codes");
    b.output("shifted").output("rem").output("c").output("same").output("bits").output("r");
    b.initializer("idx", tensor(DataType::int64, {2}, std::vector<int64_t>{0, 1}));
    b.initializer("packed", bytes_u8(std::vector<uint8_t>(18, 0x11)));
    b.initializer("count", scalar_i64(4));
    b.initializer("depth", scalar_i64(3));
    b.node("Cast", {"h"}, {"f"}, {attr_int("to", 1)}, "cast");      // 0
    b.node("Equal", {"f", "f"}, {"eq"}, {}, "equal");               // 1
    b.node("Shape", {"f"}, {"shp"}, {}, "shape");                   // 2
    b.node("Where", {"eq", "f", "f"}, {"w"}, {}, "where");          // 3
    b.node("OneHot", {"idx", "depth", "h"}, {"oh"}, {}, "onehot");  // 4
    b.node("DequantizePacked", {"packed"}, {"dq"},
           {attr_string("format", "gguf:q4_0"), attr_ints("shape", {32}),
            attr_int("output_dtype", int64_t(DataType::float16))},
           "dq");                                                                       // 5
    b.node("Gather", {"dq", "idx"}, {"g"}, {}, "gather");                               // 6
    b.node("Unpack", {"packed", "count"}, {"codes"}, {attr_int("bits", 4)}, "unpack");  // 7
    b.node("BitShift", {"u", "u"}, {"shifted"}, {attr_string("direction", "RIGHT")},
           "shift");                                                               // 8
    b.node("Mod", {"f", "f"}, {"rem"}, {attr_int("fmod", 1)}, "mod");              // 9
    b.node("Constant", {}, {"c"}, {attr_ints("value_ints", {1, 2})}, "constant");  // 10
    b.node("Identity", {"any"}, {"same"}, {}, "identity");                         // 11
    b.node("BitCast", {"u"}, {"bits"}, {attr_int("to", int64_t(DataType::float32))},
           "bitcast");  // 12
    b.node("Constant", {}, {"r0"},
           {attr_tensor("value", tensor(DataType::int32, {}, std::vector<int32_t>{0}))},
           "constant_tensor");                                // 13
    b.node("Range", {"r0", "r0", "r0"}, {"r"}, {}, "range");  // 14

    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    rt::Session s(b.model(), std::move(backend));
    const std::vector<rt::OpQuery> &q = test.queries;
    ASSERT_EQ(q.size(), 15u);
    using D = DataType;
    using V = std::vector<DataType>;
    const auto expect = [&](size_t i, const char *op, int version, const V &in, D out) {
        SCOPED_TRACE(op);
        EXPECT_EQ(q[i].op_type, op);
        EXPECT_EQ(q[i].version, version);
        EXPECT_EQ(q[i].inputs, in);
        EXPECT_EQ(q[i].outputs, V{out});
    };
    expect(0, "Cast", 25, {D::float16}, D::float32);
    expect(1, "Equal", 19, {D::float32, D::float32}, D::bool_);
    expect(2, "Shape", 25, {D::float32}, D::int64);
    expect(3, "Where", 16, {D::bool_, D::float32, D::float32}, D::float32);
    expect(4, "OneHot", 11, {D::int64, D::int64, D::float16}, D::float16);
    expect(5, "DequantizePacked", 29, {D::uint8}, D::float16);
    expect(6, "Gather", 13, {D::float16, D::int64}, D::float16);
    expect(7, "Unpack", 29, {D::uint8, D::int64}, D::uint8);
    expect(8, "BitShift", 11, {D::uint32, D::uint32}, D::uint32);
    expect(9, "Mod", 13, {D::float32, D::float32}, D::float32);
    expect(10, "Constant", 25, {}, D::int64);
    expect(11, "Identity", 25, {D::undefined}, D::undefined);  // "any" declares no type
    expect(12, "BitCast", 26, {D::uint32}, D::float32);
    expect(13, "Constant", 25, {}, D::int32);
    expect(14, "Range", 27, {D::int32, D::int32, D::int32}, D::int32);
    EXPECT_EQ(q[5].format, GgmlType::q4_0);
    EXPECT_EQ(q[8].attributes.get_string("direction"), "RIGHT");
    EXPECT_EQ(q[9].attributes.get_int("fmod"), 1);
    EXPECT_EQ(q[0].attributes.get_int("to"), int64_t(DataType::float32));
    EXPECT_EQ(q[10].attributes.get_ints("value_ints"), (std::vector<int64_t>{1, 2}));
    for (size_t i : {0, 1, 6, 7, 10}) {
        EXPECT_FALSE(q[i].format) << q[i].op_type;
        EXPECT_FALSE(q[i].attributes.get_string("direction")) << q[i].op_type;
        EXPECT_FALSE(q[i].attributes.get_int("fmod")) << q[i].op_type;
    }
    for (size_t i : {1, 6}) EXPECT_TRUE(q[i].attributes.empty()) << q[i].op_type;
}

TEST(SessionSeam, ModWithoutFmodIsAskedWithFmod0) {
    ModelBuilder b(13);
    b.input("a", DataType::int32).output("y");
    b.node("Mod", {"a", "a"}, {"y"}, {attr_int("fmod", 0)}, "mod");
    Record test;
    auto backend = std::make_unique<TestBackend>(test);
    rt::Session s(b.model(), std::move(backend));
    ASSERT_EQ(test.queries.size(), 1u);
    EXPECT_EQ(test.queries[0].attributes.get_int("fmod"), 0);
    EXPECT_EQ(test.queries[0].outputs, std::vector<DataType>{DataType::int32});
}

// --- (e) synchronize and device calls -------------------------------------------------------

TEST(SessionSeam, ProfilingSynchronizesAfterEveryNode) {
    ModelBuilder b;
    b.input("x", DataType::int32).output("y");
    b.node("Add", {"x", "x"}, {"s"}, {}, "add");
    b.node("Identity", {"s"}, {"t"}, {}, "view");
    b.node("Mul", {"t", "x"}, {"y"}, {}, "mul");
    const rt::Inputs in = {{"x", tensor(DataType::int32, {2}, std::vector<int32_t>{1, 2})}};
    for (const bool profile : {false, true}) {
        SCOPED_TRACE(profile);
        Record test;
        auto backend = std::make_unique<TestBackend>(test);
        rt::Session s(b.model(), std::move(backend), profile);
        EXPECT_EQ(test.synchronizes, 0u);
        s.run(in);
        // Once per node when profiling, and once at the end of every run.
        EXPECT_EQ(test.synchronizes, profile ? 3u + 1u : 1u);
        s.run(in);
        EXPECT_EQ(test.synchronizes, profile ? 8u : 2u);
        if (!profile) continue;
        ASSERT_EQ(s.profile().size(), 3u);
        EXPECT_EQ(s.profile()[0].device_calls, 1u);
        EXPECT_EQ(s.profile()[1].device_calls, 0u);  // a view launches nothing
        EXPECT_EQ(s.profile()[2].device_calls, 1u);
    }
}

TEST(SessionSeam, TheCpuBackendReportsNoDeviceCalls) {
    ModelBuilder b;
    b.input("x", DataType::int32).output("y");
    b.node("Add", {"x", "x"}, {"y"}, {}, "add");
    rt::Session s(b.model(), rt::RunOptions{.threads = 1, .profile = true});
    s.run({{"x", tensor(DataType::int32, {1}, std::vector<int32_t>{1})}});
    EXPECT_EQ(s.backend().device_calls(), 0u);
    ASSERT_EQ(s.profile().size(), 1u);
    EXPECT_EQ(s.profile()[0].device_calls, 0u);
    EXPECT_EQ(s.profile()[0].lowered_from, "");
}

}  // namespace
}  // namespace gguftool::rttest
