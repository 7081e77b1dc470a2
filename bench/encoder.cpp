// bench_encoder: a synthetic bert-base-sized embedding model (random weights, real shapes: 12
// layers, 768 hidden, 12 heads, n_ff 3072, bert-bge's vocabulary of 30522 WordPiece tokens, CLS
// pooling) written in F16 and quantized to Q8_0 by llama.cpp's own llama_model_quantize; then, side
// by side in one run, embeddings per second of one batch (--batch sequences of --seq tokens):
//   llama.cpp     libllama on the GGUF, every sequence in one llama_decode (as llama-embedding);
//   onnxruntime   the package lowered to opset 21 (F16: its weights as float) or, for quantized
//                 types, --weights nbits (MatMulNBits, int8 activations: accuracy_level 4);
//   gguftool run  the executor on the opset-29 package.
// Same threads for all; medians of --reps runs after a warm-up.
//
//   bench_encoder [--layers N] [--batch N] [--seq N] [--reps N] [--threads N] [--types F16,Q8_0]
//                 [--dir DIR]
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench_setup.hpp"
#include "bench_support.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/half.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/runtime.hpp"
#include "llama_vocabs.hpp"
#include "random.hpp"

namespace gguftool::bench {
namespace {

namespace fs = std::filesystem;
using gguf::MetaValue;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

constexpr uint32_t kEmbd = 768, kHeads = 12, kFf = 3072, kCtx = 512;

// The F16 bert model: weights N(0, 0.02), LayerNorms 1 and 0, CLS pooling.
void write_bert(const std::string &path, uint32_t layers) {
    const gguf::Model vocab =
        gguf::Model::open(testkit::llama_vocab_dir() + "/ggml-vocab-bert-bge.gguf");
    const uint64_t V = vocab.first().find("tokenizer.ggml.tokens")->value.array_size();
    gguf::Writer w;
    w.add("general.architecture", MetaValue::str("bert"));
    w.add("general.name", MetaValue::str("gguftool bench (random bert-base)"));
    w.add("bert.context_length", MetaValue::u32(kCtx));
    w.add("bert.embedding_length", MetaValue::u32(kEmbd));
    w.add("bert.block_count", MetaValue::u32(layers));
    w.add("bert.feed_forward_length", MetaValue::u32(kFf));
    w.add("bert.attention.head_count", MetaValue::u32(kHeads));
    w.add("bert.attention.layer_norm_epsilon", MetaValue::f32(1e-12f));
    w.add("bert.attention.causal", MetaValue::boolean(false));
    w.add("bert.pooling_type", MetaValue::u32(2));
    for (const gguf::MetadataEntry &e : vocab.first().metadata())
        if (e.key.starts_with("tokenizer.")) w.add(gguf::MetadataItem::of(e));
    testkit::Random rng(1);
    auto f16 = [&](const std::string &name, std::vector<uint64_t> dims) {
        uint64_t n = 1;
        for (uint64_t d : dims) n *= d;
        std::vector<uint8_t> b(n * 2);
        for (uint64_t i = 0; i < n; ++i) {
            const uint16_t h = f32_to_fp16(float(0.02 * rng.normal_paired()));
            b[2 * i] = uint8_t(h), b[2 * i + 1] = uint8_t(h >> 8);
        }
        w.add_tensor(name, GgmlType::f16, std::move(dims), std::move(b));
    };
    auto f32 = [&](const std::string &name, uint64_t n, float v) {
        std::vector<uint8_t> b(n * 4);
        for (uint64_t i = 0; i < n; ++i) std::memcpy(b.data() + 4 * i, &v, 4);
        w.add_tensor(name, GgmlType::f32, {n}, std::move(b));
    };
    auto layer_norm = [&](const std::string &name) {
        f32(name + ".weight", kEmbd, 1.0f);
        f32(name + ".bias", kEmbd, 0.0f);
    };
    f16("token_embd.weight", {kEmbd, V});
    f16("position_embd.weight", {kEmbd, kCtx});
    {  // F32: llama.cpp adds its row 0 (ggml_add has no f32 + f16)
        std::vector<uint8_t> b(2 * kEmbd * 4);
        for (uint32_t i = 0; i < 2 * kEmbd; ++i) {
            const float v = float(0.02 * rng.normal_paired());
            std::memcpy(b.data() + 4 * i, &v, 4);
        }
        w.add_tensor("token_types.weight", GgmlType::f32, {kEmbd, 2}, std::move(b));
    }
    layer_norm("token_embd_norm");
    for (uint32_t il = 0; il < layers; ++il) {
        const std::string b = fmt::format("blk.{}.", il);
        for (const char *m : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            f16(b + m + ".weight", {kEmbd, kEmbd});
            f32(b + m + ".bias", kEmbd, 0.0f);
        }
        layer_norm(b + "attn_output_norm");
        f16(b + "ffn_up.weight", {kEmbd, kFf});
        f32(b + "ffn_up.bias", kFf, 0.0f);
        f16(b + "ffn_down.weight", {kFf, kEmbd});
        f32(b + "ffn_down.bias", kEmbd, 0.0f);
        layer_norm(b + "layer_output_norm");
    }
    w.write(path);
}

// [CLS] words [SEP], as bench/encoder_ort_bench.mjs makes them.
std::vector<std::vector<int32_t>> batch_ids(int batch, int seq) {
    std::vector<std::vector<int32_t>> out(static_cast<size_t>(batch),
                                          std::vector<int32_t>(static_cast<size_t>(seq)));
    for (int b = 0; b < batch; ++b)
        for (int i = 0; i < seq; ++i)
            out[b][i] = i == 0 ? 101 : i == seq - 1 ? 102 : 1000 + (b * 7919 + i * 104729) % 29000;
    return out;
}

struct Row {
    std::string name;
    double load_s = 0, run_s = 0;
};

Row run_llama(const std::string &gguf, int batch, int seq, int reps, unsigned threads) {
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama: " + why);
    Row r{"llama.cpp (libllama)"};
    auto t0 = Clock::now();
    reference::LlamaModel::Options o;
    o.embeddings = true;
    o.n_ctx = seq;
    o.n_seq = batch;
    o.threads = threads;
    reference::LlamaModel m(lib, gguf, o);
    r.load_s = since(t0);
    const auto seqs = batch_ids(batch, seq);
    m.decode_sequences(seqs);  // warm-up
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
        m.clear();
        t0 = Clock::now();
        m.decode_sequences(seqs);
        t.push_back(since(t0));
    }
    r.run_s = median(t);
    return r;
}

Row run_executor(const std::string &package, int batch, int seq, int reps, unsigned threads) {
    Row r{"gguftool run (opset 29)"};
    auto t0 = Clock::now();
    runtime::RunOptions ro;
    ro.threads = threads;
    runtime::Model model = runtime::Model::load(package + "/onnx/model.onnx");
    bool types = false;
    for (const runtime::ValueInfo &v : model.inputs()) types |= v.name == "token_type_ids";
    runtime::Session session(std::move(model), ro);
    r.load_s = since(t0);
    std::vector<int64_t> ids;
    for (const auto &s : batch_ids(batch, seq)) ids.insert(ids.end(), s.begin(), s.end());
    const runtime::Shape shape{batch, seq};
    runtime::Inputs in;
    in["input_ids"] = runtime::Tensor::from_values(DataType::int64, shape, ids);
    in["attention_mask"] =
        runtime::Tensor::from_values(DataType::int64, shape, std::vector<int64_t>(ids.size(), 1));
    if (types)
        in["token_type_ids"] = runtime::Tensor::from_values(DataType::int64, shape,
                                                            std::vector<int64_t>(ids.size(), 0));
    session.run(in);  // warm-up
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
        t0 = Clock::now();
        session.run(in);
        t.push_back(since(t0));
    }
    r.run_s = median(t);
    return r;
}

Row run_ort(const std::string &package, const std::string &form, int batch, int seq, int reps,
            unsigned threads) {
    const ChildRun c = testkit::run(
        {GGUFTOOL_NODE, std::string(GGUFTOOL_SOURCE_DIR) + "/bench/encoder_ort_bench.mjs",
         package + "/onnx/model.onnx", std::to_string(batch), std::to_string(seq),
         std::to_string(reps), std::to_string(threads)});
    if (c.status != 0) throw std::runtime_error("onnxruntime: " + c.err);
    const nlohmann::json j = nlohmann::json::parse(c.out);
    return {"onnxruntime (" + form + ")", j["session_s"].get<double>(),
            median(j["run_s"].get<std::vector<double>>())};
}

int main_(int argc, char **argv) {
    Setup s;
    s.own = {{"--layers", "12"}, {"--batch", "8"},   {"--seq", "128"},
             {"--reps", "5"},    {"--threads", "0"}, {"--types", "F16,Q8_0"}};
    if (int rc = setup(argc, argv, "bench_encoder", s,
                       "[--layers N] [--batch N] [--seq N] [--reps N] [--threads N] "
                       "[--types F16,Q8_0]"))
        return rc;
    const uint32_t layers = uint32_t(std::stoul(s.own["--layers"]));
    const int batch = std::stoi(s.own["--batch"]), seq = std::stoi(s.own["--seq"]),
              reps = std::stoi(s.own["--reps"]);
    const unsigned threads = thread_count(unsigned(std::stoul(s.own["--threads"])));
    const fs::path dir = s.dir;
    fmt::print(
        "bench_encoder: bert, {} layers, n_embd {}, {} heads, n_ff {}, vocab bert-bge; "
        "batch {} x {} tokens; {} threads; work in {}\n",
        layers, kEmbd, kHeads, kFf, batch, seq, threads, s.dir);
    const std::string f16 = (dir / "model-F16.gguf").string();
    auto t0 = Clock::now();
    write_bert(f16, layers);
    fmt::print("  wrote the F16 model in {:.1f} s\n", since(t0));
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama: " + why);

    std::stringstream types(s.own["--types"]);
    for (std::string type; std::getline(types, type, ',');) {
        std::string gguf = f16;
        if (type != "F16") {
            gguf = (dir / ("model-" + type + ".gguf")).string();
            const std::optional<int> ftype = reference::llama_ftype_from_name(type);
            if (!ftype) throw std::runtime_error("unknown type " + type);
            reference::quantize_model(lib, f16, gguf, *ftype, 0, {});
        }
        const gguf::Model model = gguf::Model::open(gguf);
        decoder::Options packed, ort;
        packed.graph = ort.graph = decoder::Graph::encoder;
        const bool nbits = type != "F16";
        ort.opset = 21;
        if (nbits) ort.weights = decoder::Weights::nbits;
        const std::string p29 = (dir / (type + "-opset29")).string(),
                          p21 = (dir / (type + "-ort")).string();
        decoder::export_decoder(model, p29, packed);
        decoder::export_decoder(model, p21, ort);
        const std::vector<Row> rows = {
            run_llama(gguf, batch, seq, reps, threads),
            run_ort(p21, nbits ? "nbits, accuracy 4" : "lowered, float weights", batch, seq, reps,
                    threads),
            run_executor(p29, batch, seq, reps, threads)};
        fmt::print("\n{} ({:.0f} MiB)\n", type, double(fs::file_size(gguf)) / (1 << 20));
        fmt::print("  {:<38} {:>8} {:>10} {:>12} {:>12}\n", "", "load s", "batch s", "embd/s",
                   "x llama.cpp");
        for (const Row &r : rows)
            fmt::print("  {:<38} {:>8.2f} {:>10.3f} {:>12.1f} {:>12.2f}\n", r.name, r.load_s,
                       r.run_s, batch / r.run_s, rows[0].run_s / r.run_s);
        std::error_code ec;
        fs::remove_all(p29, ec);
        fs::remove_all(p21, ec);
        if (gguf != f16) fs::remove(gguf, ec);
    }
    return 0;
}

}  // namespace
}  // namespace gguftool::bench

int main(int argc, char **argv) {
    try {
        return gguftool::bench::main_(argc, argv);
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_encoder: {}\n", e.what());
        return 1;
    }
}
