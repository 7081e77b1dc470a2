// Loading models: external data (mapped, validated, confined to the model's directory), malformed
// files, graph structure errors (each naming the node), input binding and streaming outputs.
#include <random>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

// A q4_0 DequantizePacked of initializer "w", 4 blocks = 72 bytes, + a float initializer output.
ModelBuilder dq_of_initializer() {
    ModelBuilder b;
    b.node("DequantizePacked", {"w"}, {"y"},
           {attr_string("format", "gguf:q4_0"), attr_ints("shape", {4, 32})}, "dq");
    b.output("y");
    return b;
}

std::vector<uint8_t> q4_0_blocks(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> b(n * 18);
    for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(rng());
    for (size_t k = 0; k < n; ++k) {  // finite scales: 0x3800 = 0.5
        b[k * 18] = 0x00;
        b[k * 18 + 1] = uint8_t(0x34 + k);
    }
    return b;
}

void set_external(onnx::TensorProto &t, const std::string &location, int64_t offset,
                  int64_t length) {
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    t.clear_external_data();
    auto add = [&](const char *k, const std::string &v) {
        auto *e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
    };
    add("location", location);
    if (offset >= 0) add("offset", std::to_string(offset));
    if (length >= 0) add("length", std::to_string(length));
}

std::string load_error(const std::string &path) {
    try {
        rt::run_model(path);
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

TEST(Model, ExternalDataIsMappedAndValidated) {
    TempDir tmp;
    const std::vector<uint8_t> blocks = q4_0_blocks(4, 1);
    // Data file: 100 bytes of padding, the blocks, 10 more bytes.
    std::string data(100, '\x55');
    data.append(blocks.begin(), blocks.end());
    data.append(10, '\x66');
    fs::create_directories(tmp.file("sub"));
    write_file(tmp.file("sub/weights.bin"), data);

    // Reference: the same bytes inline.
    ModelBuilder inline_model = dq_of_initializer();
    inline_model.initializer("w", bytes_u8(blocks));
    const rt::Tensor expected = run1(inline_model);

    ModelBuilder b = dq_of_initializer();
    b.initializer("w", bytes_u8(blocks));
    set_external(b.initializer_proto("w"), "sub/weights.bin", 100, 72);
    b.save(tmp.file("model.onnx"));
    const rt::NamedTensors out = rt::run_model(tmp.file("model.onnx"));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(rt::allclose(out[0].second, expected, true).equal);

    // Without length, the dims decide the size; "./" is fine.
    set_external(b.initializer_proto("w"), "./sub/weights.bin", 100, -1);
    b.save(tmp.file("model.onnx"));
    EXPECT_TRUE(
        rt::allclose(rt::run_model(tmp.file("model.onnx"))[0].second, expected, true).equal);

    const auto expect_load_error = [&](const std::string &location, int64_t offset, int64_t length,
                                       const std::string &fragment) {
        set_external(b.initializer_proto("w"), location, offset, length);
        b.save(tmp.file("model.onnx"));
        const std::string e = load_error(tmp.file("model.onnx"));
        EXPECT_NE(e.find("initializer \"w\""), std::string::npos) << e;
        EXPECT_NE(e.find(fragment), std::string::npos) << location << ": " << e;
    };
    expect_load_error("sub/weights.bin", 111, 72, "lie outside");
    expect_load_error("sub/weights.bin", 1000, 72, "lie outside");
    expect_load_error("sub/weights.bin", int64_t(1) << 62, 72, "lie outside");
    expect_load_error("sub/weights.bin", 100, 71, "length 71 does not match the 72 bytes");
    expect_load_error("/etc/passwd", 0, 72, "absolute path");
    expect_load_error(tmp.file("sub/weights.bin"), 100, 72, "absolute path");
    expect_load_error("../weights.bin", 0, 72, "leaves the model's directory");
    expect_load_error("sub/../../weights.bin", 0, 72, "leaves the model's directory");
    expect_load_error("missing.bin", 0, 72, "cannot open");
    expect_load_error("sub", 0, 72, "not a regular file");
    expect_load_error("", 0, 72, "no location");

    // Malformed numbers.
    set_external(b.initializer_proto("w"), "sub/weights.bin", 100, 72);
    b.initializer_proto("w").mutable_external_data(1)->set_value("-5");
    b.save(tmp.file("model.onnx"));
    EXPECT_NE(load_error(tmp.file("model.onnx")).find("not a non-negative integer"),
              std::string::npos);
}

TEST(Model, RawDataMustMatchDims) {
    ModelBuilder b = dq_of_initializer();
    b.initializer("w", bytes_u8(q4_0_blocks(4, 2)));
    b.initializer_proto("w").mutable_raw_data()->pop_back();
    try {
        b.model();
        FAIL();
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("raw_data is 71 bytes"), std::string::npos)
            << e.what();
    }
    // Dims whose product overflows, and negative dims.
    ModelBuilder c = dq_of_initializer();
    c.initializer("w", bytes_u8({}));
    c.initializer_proto("w").clear_dims();
    for (int i = 0; i < 4; ++i) c.initializer_proto("w").add_dims(int64_t(1) << 40);
    EXPECT_THROW(c.model(), Error);
    c.initializer_proto("w").clear_dims();
    c.initializer_proto("w").add_dims(-3);
    EXPECT_THROW(c.model(), Error);
    // Typed data with the wrong count.
    ModelBuilder d;
    d.output("f");
    onnx::TensorProto *t = d.proto().mutable_graph()->add_initializer();
    t->set_name("f");
    t->set_data_type(int32_t(DataType::float32));
    t->add_dims(3);
    t->add_float_data(1);
    t->add_float_data(2);
    EXPECT_THROW(d.model(), Error);
    t->add_float_data(3);
    EXPECT_EQ(run1(d).to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

// Every truncation and random corruption of a valid model file gives a model or an Error.
TEST(Model, MalformedFilesNeverCrash) {
    TempDir tmp;
    ModelBuilder b = dq_of_initializer();
    b.initializer("w", bytes_u8(q4_0_blocks(4, 3)));
    const std::string good = b.proto().SerializeAsString();
    const std::string path = tmp.file("m.onnx");
    size_t errors = 0;
    for (size_t n = 0; n < good.size(); ++n) {
        write_file(path, good.substr(0, n));
        try {
            rt::run_model(path);
        } catch (const Error &) {
            ++errors;
        }
    }
    EXPECT_GT(errors, good.size() / 2);
    std::mt19937_64 rng(4);
    for (int i = 0; i < 300; ++i) {
        std::string bad = good;
        for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = char(rng());
        write_file(path, bad);
        try {
            rt::run_model(path);
        } catch (const Error &) {
        }
    }
    write_file(path, "this is not protobuf at all \xff\xff\xff");
    EXPECT_NE(load_error(path).find("not a valid ONNX model"), std::string::npos);
    EXPECT_NE(load_error(tmp.file("nonexistent.onnx")).find("cannot open"), std::string::npos);
}

std::string model_error(const ModelBuilder &b) {
    try {
        b.model();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

TEST(Model, GraphErrorsNameTheNode) {
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Conv", {"a"}, {"y"}, {}, "conv");
        EXPECT_NE(model_error(b).find("node \"conv\" (Conv): unsupported operator Conv"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Identity", {"a"}, {"y"}, {}, "id").set_domain("ai.onnx.ml");
        EXPECT_NE(model_error(b).find("node \"id\""), std::string::npos);
        EXPECT_NE(model_error(b).find("unsupported operator domain \"ai.onnx.ml\""),
                  std::string::npos);
    }
    {
        // com.microsoft's operators are known, its other ones are not.
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Identity", {"a"}, {"y"}, {}, "id").set_domain("com.microsoft");
        EXPECT_NE(model_error(b).find("the model imports no version of the com.microsoft domain"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b(30);
        b.input("a").output("y");
        b.node("Identity", {"a"}, {"y"}, {}, "id");
        EXPECT_NE(model_error(b).find("unsupported opset 30"), std::string::npos) << model_error(b);
    }
    {
        ModelBuilder b(8);
        b.input("a").input("d").input("v").output("y");
        b.node("OneHot", {"a", "d", "v"}, {"y"}, {}, "oh");
        EXPECT_NE(model_error(b).find("node \"oh\" (OneHot): unsupported opset 8 for OneHot "
                                      "(supported from opset 9)"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b(17);
        b.input("x").input("c").output("y");
        b.node("Unpack", {"x", "c"}, {"y"}, {attr_int("bits", 4)}, "up");
        EXPECT_NE(model_error(b).find("node \"up\" (Unpack): unsupported opset 17"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Identity", {"nope"}, {"y"}, {}, "id");
        EXPECT_NE(model_error(b).find("node \"id\" (Identity-25): input \"nope\" is not a graph "
                                      "input, an initializer or any node's output"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Add", {"a", "z"}, {"y"}, {}, "add");
        b.node("Identity", {"y"}, {"z"}, {}, "loop");
        EXPECT_NE(model_error(b).find("the graph has a cycle through this node"), std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Identity", {"a"}, {"y"}, {}, "one");
        b.node("Identity", {"a"}, {"y"}, {}, "two");
        EXPECT_NE(
            model_error(b).find("node \"two\" (Identity-25): output \"y\" is already produced"),
            std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.input("a").output("y").output("ghost");
        b.node("Identity", {"a"}, {"y"}, {}, "id");
        EXPECT_NE(model_error(b).find("graph output \"ghost\" is not produced"), std::string::npos);
    }
    {
        ModelBuilder b;
        b.input("a").output("y");
        b.node("Add", {"a"}, {"y"}, {}, "add");
        EXPECT_NE(model_error(b).find("node \"add\" (Add-14): has 1 inputs, needs 2"),
                  std::string::npos)
            << model_error(b);
    }
    {
        ModelBuilder b;
        b.proto().clear_opset_import();
        b.input("a").output("y");
        b.node("Identity", {"a"}, {"y"}, {}, "id");
        EXPECT_NE(model_error(b).find("imports no version of the default ONNX domain"),
                  std::string::npos);
    }
}

TEST(Model, NodesInAnyOrder) {
    // y = (a + b) * c, nodes written last-first.
    ModelBuilder b;
    b.input("a").input("b").input("c").output("y");
    b.node("Mul", {"s", "c"}, {"y"}, {}, "mul");
    b.node("Add", {"a", "b"}, {"s"}, {}, "add");
    const auto f = [](std::vector<float> v) {
        return tensor(DataType::float32, {int64_t(v.size())}, v);
    };
    const rt::Tensor y = run1(b, {{"a", f({1, 2})}, {"b", f({3, 4})}, {"c", f({10, 100})}});
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{40, 600}));
}

TEST(Model, InputBinding) {
    ModelBuilder b;
    b.input("x", DataType::float32, {2, -1}).output("y");
    b.node("Identity", {"x"}, {"y"}, {}, "id");
    const rt::Model m = b.model();
    ASSERT_EQ(m.inputs().size(), 1u);
    EXPECT_EQ(m.inputs()[0].dtype, DataType::float32);
    rt::Session s(m);
    const rt::Tensor ok = tensor(DataType::float32, {2, 3}, std::vector<float>(6, 1.5f));
    EXPECT_EQ(s.run({{"x", ok}}).at(0).second.shape(), (rt::Shape{2, 3}));
    const auto err = [&](const rt::Inputs &in) {
        try {
            s.run(in);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(err({}).find("graph input \"x\" was not given"), std::string::npos);
    EXPECT_NE(err({{"x", ok}, {"z", ok}}).find("the graph has no input \"z\""), std::string::npos);
    EXPECT_NE(err({{"x", tensor(DataType::float64, {2, 3}, std::vector<double>(6))}})
                  .find("graph input \"x\" is double but the graph declares float"),
              std::string::npos);
    EXPECT_NE(err({{"x", tensor(DataType::float32, {3, 2}, std::vector<float>(6))}})
                  .find("has shape [3, 2] but the graph declares [2, ?]"),
              std::string::npos);
}

TEST(Model, InitializerCanBeOverriddenWhenAlsoAnInput) {
    ModelBuilder b;
    b.input("w").output("y");
    b.initializer("w", tensor(DataType::int64, {1}, std::vector<int64_t>{7}));
    b.node("Identity", {"w"}, {"y"}, {}, "id");
    EXPECT_TRUE(b.model().inputs().empty());
    EXPECT_EQ(run1(b).to_vector<int64_t>(), (std::vector<int64_t>{7}));
    EXPECT_EQ(run1(b, {{"w", tensor(DataType::int64, {1}, std::vector<int64_t>{9})}})
                  .to_vector<int64_t>(),
              (std::vector<int64_t>{9}));
}

TEST(Model, StreamingHandsOutEveryOutputOnce) {
    ModelBuilder b;
    b.input("a").output("x1").output("x2").output("a");
    b.node("Add", {"a", "a"}, {"x1"}, {}, "double");
    b.node("Mul", {"x1", "a"}, {"x2"}, {}, "square");
    rt::Session s(b.model());
    std::vector<std::string> seen;
    s.run({{"a", tensor(DataType::int32, {2}, std::vector<int32_t>{3, -4})}},
          [&](const std::string &name, const rt::Tensor &t) {
              seen.push_back(name);
              if (name == "x2") {
                  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{18, 32}));
              }
          });
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "x1", "x2"}));
    // Profiling records every node.
    rt::Session p(b.model(), rt::RunOptions{.backend = "cpu", .threads = 1, .profile = true});
    p.run({{"a", tensor(DataType::int32, {2}, std::vector<int32_t>{1, 2})}});
    ASSERT_EQ(p.profile().size(), 2u);
    EXPECT_EQ(p.profile()[0].node, "double");
    EXPECT_EQ(p.profile()[0].op, "Add-14");  // the newest Add up to opset 29
    EXPECT_EQ(p.profile()[0].bytes_read, 16u);
    EXPECT_EQ(p.profile()[0].bytes_written, 8u);
}

TEST(Model, BackendsByName) {
    EXPECT_EQ(rt::backend_names(), (std::vector<std::string>{"cpu", "ascend"}));
    EXPECT_EQ(rt::make_backend("cpu")->name(), "cpu");
    try {
        rt::make_backend("tpu");
        ADD_FAILURE() << "made a backend \"tpu\"";
    } catch (const Error &e) {
        EXPECT_EQ(std::string(e.what()), "unknown backend \"tpu\" (available: cpu, ascend)");
    }
}

TEST(Model, TheCpuBackendHasOnlyDeviceZero) {
    EXPECT_EQ(rt::make_backend("cpu", {.threads = 1, .device = 0})->description(), "cpu, 1 thread");
    try {
        rt::make_backend("cpu", {.device = 1});
        ADD_FAILURE() << "made the cpu backend on device 1";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("device 1"), std::string::npos) << e.what();
    }
    ModelBuilder b;
    b.input("a").output("a");
    EXPECT_THROW(rt::Session(b.model(), rt::RunOptions{.device = 2}), Error);
}

}  // namespace
}  // namespace gguftool::rttest
