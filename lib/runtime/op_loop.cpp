// Loop-11/13/...: runs its body graph once per iteration, on the node's own backend, the
// loop-carried values passed from one iteration to the next. The body is loaded with the model
// (model.cpp: load_subgraphs), its outer-scope values appended to the node's inputs, so they are
// ordered and kept alive like any input. No kernel: the body's nodes run their own.
#include <fmt/format.h>

#include <unordered_map>

#include "model_impl.hpp"

namespace gguftool::runtime::detail {
namespace {

// The most iterations a Loop runs: a trip count from a model is untrusted, and an endless loop is
// a hang.
constexpr int64_t kMaxIterations = int64_t(1) << 24;

// A body value by name, or an error naming it.
const DeviceTensor &lookup(const std::unordered_map<std::string, DeviceTensor> &env,
                           const std::string &name, const std::string &where) {
    const auto it = env.find(name);
    if (it == env.end()) throw Error(fmt::format("{}: value \"{}\" is not computed", where, name));
    return it->second;
}

// Loop: inputs M (trip count, INT64 scalar), cond (BOOL scalar, optional) and the N initial
// loop-carried values; body inputs (iteration number, condition, the N values), outputs
// (condition, the N values). Outputs: the N final values. Scan outputs are not supported, nor is
// a loop without a trip count (it may never end).
void run_loop(OpContext &ctx) {
    const Model::Impl &body = ctx.subgraph(0).impl();
    const size_t declared = ctx.declared_inputs();
    const size_t outer = ctx.input_count() - declared;
    if (declared < 2) throw Error("Loop needs inputs M and cond (either may be empty)");
    const size_t carried = declared - 2;
    if (body.inputs.size() != 2 + carried + outer)
        throw Error(
            fmt::format("the body takes {} inputs, but the node gives {} loop-carried "
                        "values (the body needs 2 more)",
                        body.inputs.size() - outer, carried));
    if (body.outputs.size() != 1 + carried)
        throw Error(
            fmt::format("the body has {} outputs: scan outputs are not supported (the "
                        "body must give the condition and the {} loop-carried values)",
                        body.outputs.size(), carried));
    if (ctx.node().output_size() != int(carried))
        throw Error(
            fmt::format("the node has {} outputs, needs {}", ctx.node().output_size(), carried));
    if (!ctx.has_input(0)) throw Error("a Loop without a trip count M is not supported");
    const std::vector<int64_t> m = ctx.index_list(0, "M", false, true);
    if (m.size() != 1 || m[0] < 0 || m[0] > kMaxIterations)
        throw Error(fmt::format("trip count M must be one value in [0, {}]", kMaxIterations));
    bool cond = true;
    if (ctx.has_input(1)) {
        const Tensor c = ctx.host_input(1);
        if (c.dtype() != DataType::bool_ || c.elements() != 1)
            throw Error("input cond must be one bool");
        cond = c.data()[0] != 0;
    }

    Backend &backend = ctx.backend();
    std::unordered_map<std::string, DeviceTensor> env;
    for (const auto &[name, tensor] : body.initializers) env[name] = backend.upload(tensor);
    for (size_t j = 0; j < outer; ++j)
        env[body.inputs[2 + carried + j].name] = ctx.input(declared + j);
    std::vector<DeviceTensor> values;
    for (size_t j = 0; j < carried; ++j) values.push_back(ctx.input(2 + j));

    for (int64_t i = 0; i < m[0] && cond; ++i) {
        env[body.inputs[0].name] =
            backend.upload(Tensor::from_values(DataType::int64, {}, std::vector<int64_t>{i}));
        env[body.inputs[1].name] = backend.upload(
            Tensor::from_values(DataType::bool_, {}, std::vector<uint8_t>{uint8_t(cond)}));
        for (size_t j = 0; j < carried; ++j) env[body.inputs[2 + j].name] = values[j];
        for (const Model::Impl::Node &node : body.order) {
            const std::string where = fmt::format("iteration {}: {}", i, node.label);
            std::vector<const DeviceTensor *> in;
            for (const std::string &name : node.proto->input())
                in.push_back(name.empty() ? nullptr : &lookup(env, name, where));
            try {
                OpContext c(*node.op, *node.proto, backend, ctx.external(), std::move(in));
                c.set_subgraphs(node.subgraphs, node.declared_inputs);
                node.op->run(c);
                for (int k = 0; k < node.proto->output_size(); ++k)
                    env[node.proto->output(k)] = std::move(c.outputs()[size_t(k)]);
            } catch (const Error &e) {
                throw Error(fmt::format("{}: {}", where, e.problem()));
            }
        }
        const Tensor c = backend.download(lookup(env, body.outputs[0].name, "the body"));
        if (c.dtype() != DataType::bool_ || c.elements() != 1)
            throw Error("the body's condition output must be one bool");
        cond = c.data()[0] != 0;
        for (size_t j = 0; j < carried; ++j)
            values[j] = lookup(env, body.outputs[1 + j].name, "the body");
    }
    for (size_t j = 0; j < carried; ++j) ctx.set_output(j, values[j]);
}

// Output k is loop-carried value k: the type of input 2 + k.
DataType carried_dtype(const onnx::NodeProto &, std::span<const DataType> inputs, size_t output) {
    return output + 2 < inputs.size() ? inputs[output + 2] : DataType::undefined;
}

}  // namespace

std::span<const OpDef> loop_ops() {
    // Loop's later versions only widened the types a value may have (sequences, optionals, new
    // element types).
    static const std::vector<OpDef> rows = {
        {.op_type = "Loop",
         .since = 11,
         .same_as_later = {13, 16, 19, 21, 23, 24, 25},
         .inputs = {0, kMany},  // M and cond may be empty; run_loop checks there are two
         .outputs = {0, kMany},
         .attributes = {"body"},
         .run = run_loop,
         .output_dtype = carried_dtype},
    };
    return rows;
}

}  // namespace gguftool::runtime::detail
