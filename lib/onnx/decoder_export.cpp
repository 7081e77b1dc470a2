// export_decoder: the package directory (onnx/model.onnx + model.onnx_data, config.json,
// generation_config.json or, for an encoder, sentence-transformers' pooling files), written under
// a temporary name beside OUT and renamed into place.
#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "decoder.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/onnx_schemas.hpp"
#include "gguftool/output_file.hpp"
#include "gguftool/tokenizer_export.hpp"
#include "model_writer.hpp"

namespace gguftool::decoder {
namespace {

namespace fs = std::filesystem;
using namespace onnx_export::detail;

// config.json as transformers.js (src/configs.js getNormalizedConfig) and Optimum read it.
// A float as the shortest decimal that reads back as it (1e-05, not 9.999999747378752e-06).
double shortest(float f) {
    return std::stod(fmt::format("{}", f));
}

// The ids generation stops at: llama.cpp's end-of-generation set (llama_vocab_is_eog:
// tokenizer::end_of_generation_ids), or the EOS key alone when the vocabulary cannot be read
// (the package then has no tokenizer either, and the notes say why).
std::vector<int64_t> stop_ids(const gguf::Model &model, const Hparams &h) {
    try {
        const std::vector<int32_t> eog = tokenizer::end_of_generation_ids(model.first());
        return {eog.begin(), eog.end()};
    } catch (const Error &) {
        return h.eos >= 0 ? std::vector<int64_t>{h.eos} : std::vector<int64_t>{};
    }
}

// eos_token_id as transformers (and transformers.js' generate(): EosTokenCriteria) read it: one id,
// or the list when generation stops at several (as Llama 3.1's configs list them).
void put_eos(nlohmann::ordered_json &c, const std::vector<int64_t> &stop) {
    if (stop.size() == 1)
        c["eos_token_id"] = stop[0];
    else if (!stop.empty())
        c["eos_token_id"] = stop;
}

// The encoder's class: the row's own for an encoder-only architecture, else the decoder's
// headless model (Qwen3ForCausalLM -> Qwen3Model).
std::string encoder_class(const detail::ArchRow &row) {
    std::string c(row.hf_class);
    if (const size_t at = c.rfind("ForCausalLM"); row.decoder && at != std::string::npos)
        c.replace(at, std::string::npos, "Model");
    return c;
}

nlohmann::ordered_json config_json(const Hparams &h, const detail::ArchRow &row,
                                   const std::vector<int64_t> &stop) {
    const bool encoder = h.graph == Graph::encoder;
    nlohmann::ordered_json c;
    c["architectures"] = {encoder ? encoder_class(row) : std::string(row.hf_class)};
    c["model_type"] = std::string(row.model_type);
    c["hidden_size"] = h.n_embd;
    c["intermediate_size"] = h.n_ff;
    c["num_hidden_layers"] = h.n_layer;
    c["num_attention_heads"] = h.n_head;
    c["num_key_value_heads"] = h.n_head_kv;
    c["head_dim"] = h.head_dim;
    c["vocab_size"] = h.n_vocab;
    c["max_position_embeddings"] = h.n_ctx_train;
    if (row.bert_layout) {
        c["layer_norm_eps"] = shortest(h.norm_eps);
        c["type_vocab_size"] = h.n_token_types;
        c["position_embedding_type"] = row.positions == detail::Positions::absolute ? "absolute"
                                       : row.positions == detail::Positions::alibi  ? "alibi"
                                                                                    : "rotary";
    } else {
        c["rms_norm_eps"] = shortest(h.rms_eps);
    }
    if (row.positions == detail::Positions::rope) c["rope_theta"] = shortest(h.rope.freq_base);
    if (!encoder) c["tie_word_embeddings"] = h.tied;
    if (encoder) c["is_causal"] = h.causal;
    if (h.n_swa > 0) c["sliding_window"] = h.n_swa;
    if (h.attn_softcap != 0) c["attn_logit_softcapping"] = shortest(h.attn_softcap);
    if (h.final_softcap != 0) c["final_logit_softcapping"] = shortest(h.final_softcap);
    if (h.bos >= 0) c["bos_token_id"] = h.bos;
    put_eos(c, stop);
    if (h.pad >= 0) c["pad_token_id"] = h.pad;
    c["torch_dtype"] = "float32";
    c["use_cache"] = !encoder;
    c["transformers.js_config"] = {{"use_external_data_format", true}, {"dtype", "fp32"}};
    return c;
}

nlohmann::ordered_json generation_config_json(const Hparams &h, const std::vector<int64_t> &stop) {
    nlohmann::ordered_json c;
    if (h.bos >= 0) c["bos_token_id"] = h.bos;
    put_eos(c, stop);
    if (h.pad >= 0) c["pad_token_id"] = h.pad;
    return c;
}

void write_text(const std::string &path, const std::string &text) {
    OutputFile f(path);
    f.write(text.data(), text.size());
    f.commit();
    f.keep();
}

// sentence-transformers' layout of the pooling (sentence_transformers/models/Pooling.py's
// config keys): modules.json, 1_Pooling/config.json and the 2_Normalize module (L2, as llama.cpp's
// embedding tools normalise: common_embd_normalize's default). Nothing when the model does not
// pool.
void write_pooling(const fs::path &dir, const Hparams &h) {
    if (h.pooling == Pooling::none) return;
    nlohmann::ordered_json modules = nlohmann::ordered_json::array();
    modules.push_back({{"idx", 0},
                       {"name", "0"},
                       {"path", ""},
                       {"type", "sentence_transformers.models.Transformer"}});
    modules.push_back({{"idx", 1},
                       {"name", "1"},
                       {"path", "1_Pooling"},
                       {"type", "sentence_transformers.models.Pooling"}});
    modules.push_back({{"idx", 2},
                       {"name", "2"},
                       {"path", "2_Normalize"},
                       {"type", "sentence_transformers.models.Normalize"}});
    write_text((dir / "modules.json").string(), modules.dump(2) + "\n");
    nlohmann::ordered_json p;
    p["word_embedding_dimension"] = h.n_embd;
    p["pooling_mode_cls_token"] = h.pooling == Pooling::cls;
    p["pooling_mode_mean_tokens"] = h.pooling == Pooling::mean;
    p["pooling_mode_max_tokens"] = false;
    p["pooling_mode_mean_sqrt_len_tokens"] = false;
    p["pooling_mode_weightedmean_tokens"] = false;
    p["pooling_mode_lasttoken"] = h.pooling == Pooling::last;
    p["include_prompt"] = true;
    std::error_code ec;
    for (const char *sub : {"1_Pooling", "2_Normalize"})
        if (!fs::create_directories(dir / sub, ec) && ec)
            throw Error((dir / sub).string(), std::nullopt,
                        fmt::format("cannot create: {}", ec.message()));
    write_text((dir / "1_Pooling" / "config.json").string(), p.dump(2) + "\n");
}

// The graph with its weight nodes lowered to `opset`: the weight nodes (inputs: initializers
// only) move first, are lowered on their own (the computation is written for `opset` already),
// and the computation follows; the experts' decoders inside Loop bodies are lowered in place.
void lower_weights(onnx::GraphProto &graph, const std::vector<int> &weight_nodes,
                   const std::vector<Payload> &payloads, int opset) {
    std::vector<bool> is_weight(graph.node_size(), false);
    for (int i : weight_nodes) is_weight[i] = true;
    onnx::GraphProto weights, rest;
    for (int i = 0; i < graph.node_size(); ++i)
        *(is_weight[i] ? weights.add_node() : rest.add_node()) = graph.node(i);
    weights.mutable_initializer()->Swap(graph.mutable_initializer());
    lower::ValueTypes types;
    for (const Payload &p : payloads)
        types[p.name] = {onnx_number(p.data_type), int64_t(p.dims.size())};
    lower::lower_graph(weights, 29, opset, types);
    // The experts' weights are decoded inside the Loop bodies (decoder_graph.cpp, moe()).
    for (onnx::NodeProto &n : *rest.mutable_node())
        for (onnx::AttributeProto &a : *n.mutable_attribute())
            if (a.type() == onnx::AttributeProto::GRAPH)
                lower::lower_graph(*a.mutable_g(), 29, opset, types);
    graph.mutable_node()->Clear();
    for (const onnx::NodeProto &n : weights.node()) *graph.add_node() = n;
    for (const onnx::NodeProto &n : rest.node()) *graph.add_node() = n;
    graph.mutable_initializer()->Swap(weights.mutable_initializer());
}

// The temporary directory beside `out`, removed unless released.
class TempDir {
public:
    explicit TempDir(const fs::path &out)
        : path_(out.parent_path() /
                fmt::format(".{}.partial-{}", out.filename().string(), getpid())) {
        std::error_code ec;
        fs::remove_all(path_, ec);
        if (!fs::create_directories(path_ / "onnx", ec) || ec)
            throw Error(out.string(), std::nullopt,
                        fmt::format("cannot create {}: {}", path_.string(), ec.message()));
    }
    ~TempDir() {
        if (!released_) {
            std::error_code ec;
            fs::remove_all(path_, ec);
        }
    }
    const fs::path &path() const { return path_; }
    void release() { released_ = true; }

private:
    fs::path path_;
    bool released_ = false;
};

}  // namespace

Result export_decoder(const gguf::Model &model, const std::string &out_dir, const Options &opt) {
    const Hparams h = read_hparams(model, opt.graph);
    const bool encoder = opt.graph == Graph::encoder;
    const detail::ArchRow &row = *detail::find_arch(h.arch);
    if (opt.opset && (*opt.opset < lower::kMinOpset || *opt.opset > lower::kMaxOpset))
        throw Error(fmt::format("--opset {}: the lowering targets opsets {} to {}", *opt.opset,
                                lower::kMinOpset, lower::kMaxOpset));
    if (opt.weight_type != DataType::float32 && opt.weight_type != DataType::float16)
        throw Error("the decoder's weights are float or float16");
    const fs::path out = fs::absolute(fs::path(out_dir)).lexically_normal();
    std::error_code ec;
    if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec)))
        throw Error(out_dir, std::nullopt, "exists (the package is written to a new directory)");
    if (out.filename().empty()) throw Error(out_dir, std::nullopt, "not a directory name");
    opset29::register_schemas();

    for (const auto &shard : model.shards()) prepare_input(shard->bytes());
    const int opset = opt.opset.value_or(opt.weights == Weights::nbits ? 21 : 29);
    Plan plan;
    GraphBuilder g(plan, {});
    g.declare_outputs = false;
    Result r;
    const std::vector<int> weight_nodes = detail::emit_decoder(g, model, h, opt, opset, &r.forms);
    plan.graph.set_name(graph_name(model));
    if (opset != 29) lower_weights(plan.graph, weight_nodes, plan.payloads, opset);

    onnx::ModelProto m;
    m.set_ir_version(opset != 29 ? lower::ir_version(opset) : int64_t(onnx::IR_VERSION));
    m.set_producer_name("gguftool");
    m.set_doc_string(fmt::format("{} converted by gguftool to-onnx --graph {}",
                                 fs::path(model.first().path()).filename().string(),
                                 encoder ? "encoder" : "decoder"));
    onnx::OperatorSetIdProto &imp = *m.add_opset_import();
    imp.set_domain(onnx::ONNX_DOMAIN);
    imp.set_version(opset);
    if (opt.weights == Weights::nbits) {
        onnx::OperatorSetIdProto &ms = *m.add_opset_import();
        ms.set_domain("com.microsoft");
        ms.set_version(1);
    }
    add_metadata_props(m, model, 64);

    r.hparams = h;
    r.opset = opset;
    r.nodes = size_t(plan.graph.node_size());
    r.packed = plan.packed;
    for (const Payload &p : plan.payloads) r.tensor_bytes += p.bytes;
    *m.mutable_graph() = std::move(plan.graph);

    TempDir tmp(out);
    {
        OutputFile model_file((tmp.path() / "onnx" / "model.onnx").string());
        OutputFile data_file((tmp.path() / "onnx" / "model.onnx_data").string());
        write_external(std::move(m), plan.payloads, model_file, data_file, "model.onnx_data",
                       opt.progress);
        data_file.commit();
        model_file.commit();
        model_file.keep();
        data_file.keep();
    }
    const std::vector<int64_t> stop = stop_ids(model, h);
    write_text((tmp.path() / "config.json").string(), config_json(h, row, stop).dump(2) + "\n");
    if (!encoder)
        write_text((tmp.path() / "generation_config.json").string(),
                   generation_config_json(h, stop).dump(2) + "\n");
    write_pooling(tmp.path(), h);
    // The tokenizer (gguftool/tokenizer_export.hpp): a vocabulary no tokenizer.json can express
    // leaves the package without one, said in the notes; the graph does not depend on it.
    try {
        tokenizer::TokenizerFiles files = tokenizer::build_tokenizer_files(model);
        if (encoder && h.pooling == Pooling::last) {
            // Last-token pooling reads the last column (transformers.js' last_token pooling):
            // batches are padded on the left.
            auto config = nlohmann::ordered_json::parse(files.tokenizer_config_json);
            config["padding_side"] = "left";
            files.tokenizer_config_json = config.dump(2) + "\n";
        }
        tokenizer::write_tokenizer_files(files, tmp.path().string());
        r.tokenizer = true;
    } catch (const Error &e) {
        r.notes.push_back(fmt::format("no tokenizer.json: {}", e.what()));
    }
    if (opset == 29)
        r.notes.push_back(
            "opset 29 (DequantizePacked): gguftool run and generate run this package; "
            "onnxruntime and transformers.js refuse the opset: --opset 21, or --weights nbits, "
            "writes one they load");
    if (encoder && model.find_tensor("dense_2.weight"))
        r.notes.push_back(
            "the Dense modules (dense_2, dense_3) are in the graph: last_hidden_state is each "
            "token's projected vector, as llama.cpp's per-token embeddings are");
    if (fs::exists(out, ec)) fs::remove(out, ec);  // an empty directory (checked above)
    if (::rename(tmp.path().c_str(), out.c_str()) != 0)
        throw Error(out_dir, std::nullopt,
                    fmt::format("cannot rename {} into place: {}", tmp.path().string(),
                                std::strerror(errno)));
    tmp.release();
    r.directory = out.string();
    r.model_path = (out / "onnx" / "model.onnx").string();
    r.data_path = (out / "onnx" / "model.onnx_data").string();
    return r;
}

}  // namespace gguftool::decoder
