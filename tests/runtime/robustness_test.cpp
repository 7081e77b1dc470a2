// Structured mutation of the node tests (the repository's, and GGUFTOOL_SHARED_DIR's if present):
// attributes set to edge values, inputs of random shapes and bytes. Every run must end in outputs
// or a gguftool::Error, never a crash (the sanitizer build runs this too).
#include <random>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

constexpr int64_t kEdgeInts[] = {INT64_MIN,
                                 -65,
                                 -9,
                                 -3,
                                 -2,
                                 -1,
                                 0,
                                 1,
                                 2,
                                 3,
                                 4,
                                 5,
                                 7,
                                 8,
                                 9,
                                 10,
                                 11,
                                 16,
                                 31,
                                 32,
                                 63,
                                 64,
                                 256,
                                 257,
                                 int64_t(1) << 31,
                                 int64_t(1) << 40,
                                 int64_t(1) << 62,
                                 INT64_MAX};

int64_t edge(std::mt19937_64 &rng) {
    return kEdgeInts[rng() % std::size(kEdgeInts)];
}

rt::Tensor random_tensor(DataType t, std::mt19937_64 &rng) {
    rt::Shape shape(rng() % 4);
    for (int64_t &d : shape) d = int64_t(rng() % 6);
    if (t == DataType::int64 && rng() % 2) {  // scalars like count and depth
        return scalar_i64(rng() % 3 ? int64_t(rng() % 40) : edge(rng));
    }
    rt::Tensor x = rt::Tensor::allocate(t, shape);
    for (size_t i = 0; i < x.nbytes(); ++i) x.mutable_data()[i] = uint8_t(rng());
    return x;
}

void mutate_attributes(onnx::NodeProto &n, std::mt19937_64 &rng) {
    const int choice = int(rng() % 4);
    if (choice == 0 && n.attribute_size() > 0) {
        n.mutable_attribute()->DeleteSubrange(int(rng() % uint64_t(n.attribute_size())), 1);
        return;
    }
    static const char *names[] = {"axis", "bits",  "radix",        "group_size",
                                  "axes", "shape", "output_dtype", "format"};
    onnx::AttributeProto *a = nullptr;
    const std::string name = names[rng() % std::size(names)];
    for (auto &x : *n.mutable_attribute())
        if (x.name() == name) a = &x;
    if (!a) {
        a = n.add_attribute();
        a->set_name(name);
    }
    a->clear_ints();
    if (name == "format") {
        a->set_type(onnx::AttributeProto::STRING);
        static const char *formats[] = {"gguf:q4_0", "gguf:iq2_xxs", "gguf:q2_k", "gguf:tq1_0",
                                        "x"};
        a->set_s(formats[rng() % std::size(formats)]);
    } else if (name == "axes" || name == "shape" || rng() % 8 == 0) {
        a->set_type(onnx::AttributeProto::INTS);
        const size_t k = rng() % 4;
        for (size_t i = 0; i < k; ++i) a->add_ints(rng() % 2 ? edge(rng) : int64_t(rng() % 300));
    } else {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(edge(rng));
    }
}

TEST(Robustness, MutatedNodeTestsNeverCrash) {
    std::mt19937_64 rng(12345);
    size_t runs = 0, errors = 0;
    for (const fs::path &dir : all_node_test_dirs()) {
        const onnx::ModelProto base = testkit::load_model(dir / "model.onnx");
        for (int iter = 0; iter < 60; ++iter) {
            onnx::ModelProto m = base;
            onnx::GraphProto &g = *m.mutable_graph();
            if (iter % 3 != 2) mutate_attributes(*g.mutable_node(0), rng);
            // Undeclare the input types so mutated inputs reach the operator.
            for (auto &in : *g.mutable_input()) in.clear_type();
            for (auto &out : *g.mutable_output()) out.clear_type();
            rt::Inputs inputs;
            for (int k = 0; k < g.input_size(); ++k) {
                const rt::Tensor original = rt::read_tensor_pb(
                    (dir / "test_data_set_0" / fmt::format("input_{}.pb", k)).string());
                inputs[g.input(k).name()] =
                    iter % 3 == 0 ? original : random_tensor(original.dtype(), rng);
            }
            ++runs;
            try {
                rt::Session s(rt::Model::from_proto(m));
                s.run(inputs);
            } catch (const Error &) {
                ++errors;
            }
        }
    }
    EXPECT_GT(runs, 1000u);
    EXPECT_GT(errors, 0u);
    EXPECT_LT(errors, runs);
}

}  // namespace
}  // namespace gguftool::rttest
