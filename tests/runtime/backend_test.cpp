// The backend seam: a backend with its own buffer type (standing in for device memory, reached
// only through upload/download copies) runs the same graphs with the same results, so the graph
// code relies on nothing but the Backend interface.
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

using rt::DeviceTensor;

class ForeignBackend final : public rt::Backend {
public:
    struct Buffer final : rt::DeviceBuffer {
        rt::Tensor memory;  // "device" memory: never handed out, only copied
    };
    size_t uploads = 0, downloads = 0, ops = 0;

    // The CPU backend's rows: its kernels through device copies (every output copied back), its
    // operators without a kernel (views, host values) as they are.
    ForeignBackend() {
        for (const std::string &op : cpu_->op_types()) {
            const rt::OpKernel *kernel = cpu_->kernel(op);
            if (!kernel) {
                register_kernel(op, {});
                continue;
            }
            register_kernel(op, [this, kernel](const rt::KernelArgs &a) {
                std::vector<DeviceTensor> copies;
                for (const DeviceTensor *t : a.inputs)
                    copies.push_back(t ? on_cpu(*t) : DeviceTensor{});
                std::vector<const DeviceTensor *> in;
                for (size_t i = 0; i < copies.size(); ++i)
                    in.push_back(a.inputs[i] ? &copies[i] : nullptr);
                ++ops;
                std::vector<DeviceTensor> out;
                for (const DeviceTensor &y : a.outputs)
                    out.push_back(cpu_->allocate(y.dtype, y.shape));
                (*kernel)(rt::KernelArgs{in, out, a.attributes});
                for (size_t k = 0; k < out.size(); ++k) copy_back(out[k], a.outputs[k]);
            });
        }
    }

    std::string name() const override { return "foreign"; }
    DeviceTensor allocate(DataType dtype, const rt::Shape &shape) override {
        auto b = std::make_shared<Buffer>();
        b->memory = rt::Tensor::allocate(dtype, shape);
        return {dtype, shape, b};
    }
    DeviceTensor upload(const rt::Tensor &host) override {
        ++uploads;
        auto b = std::make_shared<Buffer>();
        b->memory = rt::Tensor::copy_of(host.dtype(), host.shape(), host.bytes());
        return {host.dtype(), host.shape(), b};
    }
    rt::Tensor download(const DeviceTensor &t) override {
        ++downloads;
        const rt::Tensor &m = memory(t);
        return rt::Tensor::copy_of(t.dtype, t.shape, m.bytes());
    }

private:
    static const rt::Tensor &memory(const DeviceTensor &t) {
        auto *b = dynamic_cast<Buffer *>(t.buffer.get());
        if (!b) throw Error("not a foreign tensor");
        return b->memory;
    }
    DeviceTensor on_cpu(const DeviceTensor &t) {
        return cpu_->upload(memory(t).viewed_as(t.dtype, t.shape));
    }
    // The CPU's result `out` into the foreign tensor y.
    void copy_back(const DeviceTensor &out, DeviceTensor &y) {
        const rt::Tensor host = cpu_->download(out);
        auto *b = dynamic_cast<Buffer *>(y.buffer.get());
        ASSERT_TRUE(b);
        if (host.nbytes()) std::memcpy(b->memory.mutable_data(), host.data(), host.nbytes());
    }
    std::unique_ptr<rt::Backend> cpu_ = rt::make_cpu_backend(1);
};

TEST(Backend, ForeignBackendRunsTheNodeTests) {
    for (const fs::path &dir : all_node_test_dirs()) {
        SCOPED_TRACE(dir.string());
        const rt::Model model = rt::Model::load((dir / "model.onnx").string());
        rt::Inputs inputs;
        for (size_t k = 0; k < model.inputs().size(); ++k)
            inputs[model.inputs()[k].name] = rt::read_tensor_pb(
                (dir / "test_data_set_0" / fmt::format("input_{}.pb", k)).string());
        auto backend = std::make_unique<ForeignBackend>();
        ForeignBackend *foreign = backend.get();
        rt::Session s(model, std::move(backend));
        const rt::NamedTensors got = s.run(inputs);
        for (size_t k = 0; k < got.size(); ++k) {
            const rt::Tensor expected = rt::read_tensor_pb(
                (dir / "test_data_set_0" / fmt::format("output_{}.pb", k)).string());
            const rt::AllcloseResult c = rt::allclose(got[k].second, expected, true);
            EXPECT_TRUE(c.equal) << c.message;
        }
        EXPECT_EQ(foreign->uploads, inputs.size());
        EXPECT_GE(foreign->downloads, got.size());
        EXPECT_EQ(s.backend().name(), "foreign");
    }
}

TEST(Backend, ForeignBackendMatchesCpuOnAChain) {
    // Gather through a lookup table, Concat, Cast, Mul with broadcasting, OneHot.
    ModelBuilder m(13);
    m.output("y").output("oh");
    m.initializer("table", tensor(DataType::float32, {4}, std::vector<float>{-1.5f, 0.25f, 3, 8}));
    m.initializer("codes",
                  tensor(DataType::int64, {2, 3}, std::vector<int64_t>{0, 3, 1, 2, 2, -1}));
    m.initializer("scale",
                  tensor(DataType::float16, {2, 1}, std::vector<uint16_t>{0x3800, 0x4200}));
    m.initializer("depth", scalar_i64(4));
    m.initializer("values", tensor(DataType::int32, {2}, std::vector<int32_t>{0, 5}));
    m.node("Gather", {"table", "codes"}, {"v"}, {}, "lut");
    m.node("Cast", {"scale"}, {"s"}, {attr_int("to", 1)}, "cast");
    m.node("Mul", {"v", "s"}, {"w"}, {}, "mul");
    m.node("Concat", {"w", "w"}, {"y"}, {attr_int("axis", 1)}, "cat");
    m.node("OneHot", {"codes", "depth", "values"}, {"oh"}, {attr_int("axis", 1)}, "onehot");
    rt::Session cpu(m.model());
    rt::Session foreign(m.model(), std::make_unique<ForeignBackend>());
    const rt::NamedTensors a = cpu.run(), b = foreign.run();
    ASSERT_EQ(a.size(), 2u);
    for (size_t k = 0; k < a.size(); ++k)
        EXPECT_TRUE(rt::allclose(b[k].second, a[k].second, true).equal) << a[k].first;
    EXPECT_EQ(a[0].second.to_vector<float>(),
              (std::vector<float>{-0.75f, 4, 0.125f, -0.75f, 4, 0.125f, 9, 9, 24, 9, 9, 24}));
}

TEST(Backend, ForeignBackendMatchesCpuOnTheLoweringOperators) {
    // Every kernel the lowering's operators reach, through device copies only.
    ModelBuilder m(26);
    for (const char *o : {"sliced", "transposed", "neg", "quotient", "remainder", "minimum",
                          "equal", "selected", "shifted", "masked", "range", "shape", "float_bits"})
        m.output(o);
    m.initializer("x",
                  tensor(DataType::int32, {2, 3, 4},
                         std::vector<int32_t>{5,  -6, 7,   8,  -9, 10, 11, -12, 13,  14, 15, -16,
                                              17, 18, -19, 20, 21, 22, 23, 24,  -25, 26, 27, 28}));
    m.initializer("three", tensor(DataType::int32, {}, std::vector<int32_t>{3}));
    m.initializer("starts", tensor(DataType::int64, {2}, std::vector<int64_t>{-1, 0}));
    m.initializer("ends", tensor(DataType::int64, {2}, std::vector<int64_t>{INT64_MIN, 3}));
    m.initializer("axes", tensor(DataType::int64, {2}, std::vector<int64_t>{2, 1}));
    m.initializer("steps", tensor(DataType::int64, {2}, std::vector<int64_t>{-2, 2}));
    m.initializer("u", tensor(DataType::uint32, {3}, std::vector<uint32_t>{0xf0, 0x1234, 7}));
    m.initializer("by", tensor(DataType::uint32, {3}, std::vector<uint32_t>{4, 32, 1}));
    m.initializer("r0", scalar_i64(2));
    m.initializer("r1", scalar_i64(-7));
    m.initializer("r2", scalar_i64(-3));
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sliced"}, {}, "slice");
    m.node("Transpose", {"x"}, {"transposed"}, {attr_ints("perm", {2, 0, 1})}, "transpose");
    m.node("Neg", {"x"}, {"neg"}, {}, "neg");
    m.node("Div", {"x", "three"}, {"quotient"}, {}, "div");
    m.node("Mod", {"x", "three"}, {"remainder"}, {}, "mod");
    m.node("Min", {"x", "neg", "three"}, {"minimum"}, {}, "min");
    m.node("Equal", {"remainder", "three"}, {"equal"}, {}, "equal");
    m.node("Where", {"equal", "x", "neg"}, {"selected"}, {}, "where");
    m.node("BitShift", {"u", "by"}, {"shifted"}, {attr_string("direction", "RIGHT")}, "shift");
    m.node("BitwiseAnd", {"u", "by"}, {"masked"}, {}, "and");
    m.node("Range", {"r0", "r1", "r2"}, {"range"}, {}, "range");
    m.node("Shape", {"x"}, {"shape"}, {attr_int("start", 1)}, "shape");
    m.node("BitCast", {"x"}, {"float_bits"}, {attr_int("to", int64_t(DataType::float32))}, "bc");
    rt::Session cpu(m.model());
    rt::Session foreign(m.model(), std::make_unique<ForeignBackend>());
    const rt::NamedTensors a = cpu.run(), b = foreign.run();
    ASSERT_EQ(a.size(), 13u);
    for (size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(b[k].second.dtype(), a[k].second.dtype()) << a[k].first;
        EXPECT_TRUE(rt::allclose(b[k].second, a[k].second, true).equal) << a[k].first;
    }
    // Hand-checked: x[:, 0:3:2, -1::-2].
    EXPECT_EQ(a[0].second.shape(), (rt::Shape{2, 2, 2}));
    EXPECT_EQ(a[0].second.to_vector<int32_t>(),
              (std::vector<int32_t>{8, -6, -16, 14, 20, 18, 28, 26}));
    EXPECT_EQ(a[10].second.to_vector<int64_t>(), (std::vector<int64_t>{2, -1, -4}));
    EXPECT_EQ(a[8].second.to_vector<uint32_t>(), (std::vector<uint32_t>{0xf, 0, 3}));
}

}  // namespace
}  // namespace gguftool::rttest
