// export_model: select tensors, build the plan in the chosen mode, check it with ONNX's shape
// inference at the opset it imports, and write it inline or with external data.
#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>

#include "gguftool/lower.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "model_writer.hpp"
#include "plan.hpp"

namespace gguftool::onnx_export {
namespace {

using namespace detail;

std::vector<const gguf::TensorInfo *> select_tensors(const gguf::Model &model,
                                                     const std::vector<std::string> &globs) {
    std::vector<const gguf::TensorInfo *> out;
    for (const gguf::TensorInfo &t : model.tensors())
        if (gguf::name_matches(t.name, globs)) out.push_back(&t);
    return out;
}

// Refuses to write over any file of the input model.
void refuse_inputs(const gguf::Model &model, const std::vector<std::string> &outputs) {
    std::vector<std::string> inputs;
    for (const auto &shard : model.shards()) inputs.push_back(shard->path());
    for (const std::string &path : outputs) refuse_to_write_over(path, inputs);
}

// A plain tensor's ONNX type: floating ones take the output type unless asked to keep theirs;
// integers stay integers.
DataType plain_output_type(GgmlType type, const Options &opt) {
    const DataType stored = onnx_data_type(type);
    return is_floating(stored) && !opt.keep_plain_types ? opt.output_type : stored;
}

// Runs ONNX's shape inference, strict, on the graph with the payload initializers (types and
// dims, no data): a mistake of ours is reported before anything is written.
void check_shapes(const onnx::GraphProto &graph, const std::vector<Payload> &payloads,
                  int opset_version) {
    onnx::GraphProto g = graph;
    for (const Payload &p : payloads) {
        onnx::TensorProto &t = *g.add_initializer();
        t.set_name(p.name);
        t.set_data_type(onnx_number(p.data_type));
        for (int64_t d : p.dims) t.add_dims(d);
    }
    onnx::ShapeInferenceOptions options{true, 1, false};  // check types, throw on any error
    try {
        onnx::shape_inference::InferShapes(&g, {{onnx::ONNX_DOMAIN, opset_version}},
                                           onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &e) {
        throw Error(
            fmt::format("internal error: the generated graph fails ONNX shape "
                        "inference: {}",
                        e.what()));
    }
}

}  // namespace

namespace detail {

void emit_tensor(GraphBuilder &g, const gguf::Model &model, const gguf::TensorInfo &t, Mode mode,
                 DataType quantized_out, DataType plain_out, unsigned threads) {
    if (t.name.empty())  // ONNX value names are non-empty
        throw Error(model.shards().at(t.shard)->path(), t.file_offset,
                    "a tensor with an empty name cannot be a graph output");
    const gguf::TensorData source = gguf::TensorData::copy(*model.shards().at(t.shard), t);
    if (!traits(t.type).quantized) {
        emit_plain(g, t, source, model.first().byte_order() == gguf::ByteOrder::big, plain_out,
                   threads);
        return;
    }
    if (model.first().byte_order() == gguf::ByteOrder::big)
        throw Error(model.shards().at(t.shard)->path(), t.file_offset,
                    fmt::format("tensor {}: {} data of a big-endian file cannot be converted",
                                t.name, type_name(t.type)));
    switch (mode) {
        case Mode::packed:
            emit_packed(g, t, source, quantized_out);
            break;
        case Mode::unpack:
            if (!emit_unpack(g, t, quantized_out)) emit_packed(g, t, source, quantized_out);
            break;
        case Mode::dequantized:
            emit_dequantized(g, t, quantized_out, threads);
            break;
    }
}

std::string graph_name(const gguf::Model &model) {
    if (const gguf::MetadataEntry *e = model.first().find("general.name");
        e && e->value.type() == gguf::ValueType::string && !e->value.as_string().empty())
        return std::string(e->value.as_string());
    const std::string stem = std::filesystem::path(model.first().path()).stem().string();
    return stem.empty() ? "gguf" : stem;
}

}  // namespace detail

const char *mode_name(Mode m) {
    switch (m) {
        case Mode::packed:
            return "packed";
        case Mode::unpack:
            return "unpack";
        case Mode::dequantized:
            return "dequantized";
    }
    return "?";
}

std::optional<Mode> mode_from_name(std::string_view name) {
    for (Mode m : {Mode::packed, Mode::unpack, Mode::dequantized})
        if (name == mode_name(m)) return m;
    return std::nullopt;
}

std::optional<DataType> output_type_from_name(std::string_view name) {
    for (auto t : {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64})
        if (name == dtype_name(t)) return t;
    return std::nullopt;
}

Result export_model(const gguf::Model &model, const std::string &output, const Options &opt) {
    if (quant::output_size(opt.output_type) == 0)
        throw Error(fmt::format("output type {} is not float, float16, bfloat16 or double",
                                static_cast<int>(opt.output_type)));
    const std::vector<const gguf::TensorInfo *> tensors = select_tensors(model, opt.tensor_globs);
    if (tensors.empty() && !opt.tensor_globs.empty())
        throw Error(model.first().path(), std::nullopt,
                    fmt::format("no tensor matches {}", fmt::join(opt.tensor_globs, " or ")));
    const std::string data_path = output + std::string(kDataSuffix);
    refuse_inputs(model, {output, data_path});
    opset29::register_schemas();

    for (const auto &shard : model.shards()) prepare_input(shard->bytes());
    Plan plan;
    GraphBuilder g(plan, tensors);
    for (const gguf::TensorInfo *t : tensors)
        emit_tensor(g, model, *t, opt.mode, opt.output_type, plain_output_type(t->type, opt),
                    opt.threads);
    plan.graph.set_name(graph_name(model));
    int opset_version = model_opset(opt.mode, plan.graph);
    check_shapes(plan.graph, plan.payloads, opset_version);
    lower::Report lowered;
    if (opt.opset) {
        lower::ValueTypes types;
        for (const Payload &p : plan.payloads)
            types[p.name] = {onnx_number(p.data_type), int64_t(p.dims.size())};
        if (opt.mode != Mode::dequantized)
            lowered = lower::lower_graph(plan.graph, opset_version, *opt.opset, types);
        else if (*opt.opset < opset_version)
            throw Error(fmt::format("--mode dequantized needs opset {} or higher for its types",
                                    opset_version));
        opset_version = *opt.opset;
    }

    onnx::ModelProto m;
    m.set_ir_version(opt.opset ? lower::ir_version(*opt.opset) : int64_t(onnx::IR_VERSION));
    m.set_producer_name("gguftool");
    m.set_doc_string(fmt::format("{} converted by gguftool to-onnx --mode {}",
                                 std::filesystem::path(model.first().path()).filename().string(),
                                 mode_name(opt.mode)));
    onnx::OperatorSetIdProto &opset = *m.add_opset_import();
    opset.set_domain(onnx::ONNX_DOMAIN);
    opset.set_version(opset_version);
    Result r;
    r.notes = add_metadata_props(m, model, opt.max_array);
    *m.mutable_graph() = std::move(plan.graph);

    r.model_path = output;
    r.tensors = tensors.size();
    r.unpacked = plan.unpacked;
    r.packed = plan.packed;
    r.opset = opset_version;
    r.lowered_nodes = lowered.nodes_added;
    r.table_bytes = lowered.table_bytes;
    for (const Payload &p : plan.payloads) r.tensor_bytes += p.bytes;

    std::optional<InlineLayout> layout;
    if (!opt.external_data) {
        layout = layout_inline(m, plan.payloads);
        if (layout->total_size > std::min(opt.inline_limit, kProtobufLimit)) layout.reset();
    }
    OutputFile model_file(output);
    if (layout) {
        write_inline(*layout, plan.payloads, model_file, opt.progress);
        r.model_bytes = model_file.size();
        model_file.commit();
        model_file.keep();
        return r;
    }
    // Data first, then the model that refers to it: a model never points at a missing file.
    OutputFile data_file(data_path);
    const std::string location = std::filesystem::path(data_path).filename().string();
    write_external(std::move(m), plan.payloads, model_file, data_file, location, opt.progress);
    r.model_bytes = model_file.size();
    r.data_path = data_path;
    data_file.commit();
    model_file.commit();
    model_file.keep();
    data_file.keep();
    return r;
}

}  // namespace gguftool::onnx_export
