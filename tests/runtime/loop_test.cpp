// Loop: the body runs once per iteration with the loop-carried values, reads outer values (an
// initializer, a graph input, another node's output), stops at the trip count or when the body's
// condition turns false, and what it does not support is an error naming the node.
#include <gtest/gtest.h>

#include "gguftool/runtime.hpp"
#include "onnx_builder.hpp"

namespace gguftool {
namespace {

using runtime::Tensor;
using testkit::ModelBuilder;

Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
    return Tensor::from_values(DataType::float32, std::move(shape), v);
}
Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
    return Tensor::from_values(DataType::int64, std::move(shape), v);
}

// body(i, cond, acc) = (cond_out, acc + x · (i + 1)): x a graph input of the outer graph, the
// factor from an outer initializer `one`. The condition turns false once acc's first element
// reaches `stop` (an outer node's output).
onnx::GraphProto sum_body(bool with_condition) {
    ModelBuilder b;
    b.input("i", DataType::int64, {}).input("cond", DataType::bool_, {}).input("acc");
    b.node("Cast", {"i"}, {"i_f"}, {testkit::attr_int("to", 1)});
    b.node("Add", {"i_f", "one"}, {"factor"});
    b.node("Mul", {"x", "factor"}, {"term"});
    b.node("Add", {"acc", "term"}, {"acc_out"});
    if (with_condition) {
        b.node("Gather", {"acc_out", "zero_index"}, {"first"});
        b.node("Less", {"first", "stop"}, {"cond_out"});
    } else {
        b.node("Identity", {"cond"}, {"cond_out"});
    }
    b.output("cond_out").output("acc_out");
    return b.proto().graph();
}

ModelBuilder loop_model(const onnx::GraphProto &body, bool with_cond) {
    ModelBuilder b(21);
    b.input("x", DataType::float32, {2}).input("m", DataType::int64, {});
    b.initializer("one", f32({}, {1.0f}));
    b.initializer("zero_index", i64({}, {0}));
    b.initializer("acc0", f32({2}, {0, 0}));
    b.initializer("limit", f32({}, {10.0f}));
    b.node("Identity", {"limit"}, {"stop"});
    b.initializer("yes", Tensor::from_values(DataType::bool_, {}, std::vector<uint8_t>{1}));
    onnx::NodeProto &n = b.node("Loop", {"m", with_cond ? "yes" : "", "acc0"}, {"total"});
    onnx::AttributeProto &a = *n.add_attribute();
    a.set_name("body");
    a.set_type(onnx::AttributeProto::GRAPH);
    *a.mutable_g() = body;
    b.output("total");
    return b;
}

std::vector<float> run(const ModelBuilder &b, int64_t m) {
    runtime::Session s(b.model());
    const auto out = s.run({{"x", f32({2}, {1, 2})}, {"m", i64({}, {m})}});
    return out.at(0).second.to_vector<float>();
}

TEST(Loop, CarriesItsValueThroughEveryIteration) {
    const ModelBuilder b = loop_model(sum_body(false), false);
    EXPECT_EQ(run(b, 0), (std::vector<float>{0, 0}));
    EXPECT_EQ(run(b, 1), (std::vector<float>{1, 2}));
    EXPECT_EQ(run(b, 3), (std::vector<float>{6, 12}));  // x · (1 + 2 + 3)
}

TEST(Loop, StopsWhenTheBodysConditionTurnsFalse) {
    // acc[0] after each iteration: 1, 3, 6, 10, 15: the condition acc[0] < 10 is false after the
    // fourth, which still counts.
    const ModelBuilder b = loop_model(sum_body(true), true);
    EXPECT_EQ(run(b, 100), (std::vector<float>{10, 20}));
    EXPECT_EQ(run(b, 2), (std::vector<float>{3, 6}));
}

TEST(Loop, RefusesWhatItDoesNotSupport) {
    {  // no trip count
        ModelBuilder b = loop_model(sum_body(true), true);
        b.proto().mutable_graph()->mutable_node(1)->set_input(0, "");
        runtime::Session s(b.model());
        EXPECT_THROW(s.run({{"x", f32({2}, {1, 2})}, {"m", i64({}, {1})}}), Error);
    }
    {  // a trip count past the limit
        const ModelBuilder b = loop_model(sum_body(false), false);
        try {
            run(b, int64_t(1) << 40);
            FAIL() << "no error";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find("trip count"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("Loop"), std::string::npos) << e.what();
        }
    }
    {  // a scan output
        onnx::GraphProto body = sum_body(false);
        body.add_output()->set_name("term");
        const ModelBuilder b = loop_model(body, false);
        try {
            run(b, 1);
            FAIL() << "no error";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find("scan outputs"), std::string::npos) << e.what();
        }
    }
    {  // a body node's error names the iteration and the node
        onnx::GraphProto body = sum_body(false);
        body.mutable_node(2)->set_input(1, "missing");
        try {
            const ModelBuilder b = loop_model(body, false);
            run(b, 1);
            FAIL() << "no error";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace gguftool
