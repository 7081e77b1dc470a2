// bench_decoder: a synthetic model (random weights, real shapes: a ~1.1B llama by default, head
// size 64, GQA 4:1, vocabulary 32000; --arch qwen3moe, a ~1.5B mixture of experts) written in F16
// and quantized to Q4_K_M by llama.cpp's own llama_model_quantize; then, side by side in one run:
//   export        gguftool to-onnx --graph decoder against cp of the GGUF;
//   onnxruntime   session creation time and peak RSS, prefill of --prompt tokens, decode tokens/s
//                 (nbits packages; the lowered one with --ort-lowered 1; none with --ort 0);
//   gguftool run  the executor on the opset-29 package (weights as DequantizePacked, products
//                 fused: docs/RUNTIME.md), the same, on --threads threads and on one; with
//                 --unfused 1 also unfused (each weight decoded to float32 at every step);
//   llama.cpp     libllama on the GGUF itself, the same, on the same threads and on one.
// Each contender runs in a process of its own, its peak RSS measured: onnxruntime in node, the
// executor and libllama in this program run again (--child), --repeat times, interleaved (the
// table gives medians and ranges). Then the targets against llama.cpp (decode and prefill speed,
// peak RSS against the GGUF and the KV cache, load time, two threads against one) and where the
// executor's decode step goes: per operator type its time, the bytes it reads and the bandwidth.
//
//   bench_decoder [--arch llama|qwen3moe] [--layers N] [--prompt N] [--steps N] [--threads N]
//                 [--type FTYPE] [--model GGUF] [--repeat N] [--ort 0] [--ort-lowered 1] [--unfused
//                 1]
//                 [--dir DIR] [--keep 1] [--gguftool PATH]
// --type: the llama-quantize file type to quantize to (Q4_K_M, the default; Q4_0, IQ4_XS, ...).
// --model: a GGUF made by an earlier run (--keep 1 keeps it) instead of a new one.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "bench_setup.hpp"
#include "bench_support.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/half.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::bench {
namespace {

namespace fs = std::filesystem;
using gguf::MetaValue;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Shape {
    std::string arch = "llama";
    uint32_t embd = 2048, layers = 22, heads = 32, kv_heads = 8, ff = 5632, vocab = 32000,
             ctx = 2048;
    uint32_t experts = 0, used = 0;  // a mixture of experts (qwen3moe) when experts > 0
};

// The shapes --arch names: llama (~1.1B, TinyLlama's), qwen3moe (~1.5B in all: 18 layers of 16
// experts of 1536, 4 used, q/k norms; ~0.4B active per token).
Shape shape_of(const std::string &arch) {
    if (arch == "llama") return {};
    if (arch == "qwen3moe")
        return {.arch = arch,
                .embd = 1024,
                .layers = 18,
                .heads = 16,
                .kv_heads = 4,
                .ff = 1536,
                .experts = 16,
                .used = 4};
    throw std::runtime_error("unknown --arch " + arch + " (llama, qwen3moe)");
}

// F16 values, normal-ish (sum of uniforms), std `scale`, from a fast generator seeded by `seed`.
std::function<void(gguf::ByteSink &)> random_f16(uint64_t count, float scale, uint64_t seed) {
    return [=](gguf::ByteSink &sink) {
        std::mt19937_64 rng(seed);
        std::vector<uint16_t> buf(1 << 16);
        for (uint64_t done = 0; done < count;) {
            const size_t n = size_t(std::min<uint64_t>(buf.size(), count - done));
            for (size_t i = 0; i < n; ++i) {
                const uint64_t r = rng();
                const float u = float((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) +
                                      ((r >> 48) & 0xFFFF)) /
                                    65536.0f -
                                2.0f;  // sum of 4 uniforms: mean 0, std ~0.577
                buf[i] = f32_to_fp16(u * scale * 1.732f);
            }
            sink.write(buf.data(), n * 2);
            done += n;
        }
    };
}

std::function<void(gguf::ByteSink &)> ones_f32(uint64_t count) {
    return [=](gguf::ByteSink &sink) {
        const std::vector<float> v(count, 1.0f);
        sink.write(v.data(), count * 4);
    };
}

void write_model(const std::string &path, const Shape &s) {
    gguf::Header h;
    auto add = [&](std::string k, MetaValue v) { h.metadata.push_back({std::move(k), v}); };
    auto key = [&](const char *k) { return s.arch + "." + k; };
    add("general.architecture", MetaValue::str(s.arch));
    add("general.name", MetaValue::str(fmt::format("gguftool bench (random {})", s.arch)));
    add("general.file_type", MetaValue::u32(1));
    add(key("context_length"), MetaValue::u32(s.ctx));
    add(key("embedding_length"), MetaValue::u32(s.embd));
    add(key("block_count"), MetaValue::u32(s.layers));
    add(key("feed_forward_length"), MetaValue::u32(s.ff));
    add(key("attention.head_count"), MetaValue::u32(s.heads));
    add(key("attention.head_count_kv"), MetaValue::u32(s.kv_heads));
    add(key("rope.dimension_count"), MetaValue::u32(s.embd / s.heads));
    add(key("rope.freq_base"), MetaValue::f32(10000.0f));
    add(key("attention.layer_norm_rms_epsilon"), MetaValue::f32(1e-5f));
    add(key("vocab_size"), MetaValue::u32(s.vocab));
    if (s.experts) {
        add(key("expert_count"), MetaValue::u32(s.experts));
        add(key("expert_used_count"), MetaValue::u32(s.used));
        add(key("expert_feed_forward_length"), MetaValue::u32(s.ff));
    }
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<float> scores = {0, 0, 0};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(fmt::format("<0x{:02X}>", b));
        scores.push_back(0);
        types.push_back(6);
    }
    for (uint32_t i = uint32_t(tokens.size()); i < s.vocab; ++i) {
        tokens.push_back(fmt::format("\xe2\x96\x81t{}", i));
        scores.push_back(-float(i));
        types.push_back(1);
    }
    add("tokenizer.ggml.model", MetaValue::str("llama"));
    add("tokenizer.ggml.tokens", MetaValue::array_of(tokens));
    add("tokenizer.ggml.scores", MetaValue::array_of(scores));
    add("tokenizer.ggml.token_type", MetaValue::array_of(types));
    add("tokenizer.ggml.bos_token_id", MetaValue::u32(1));
    add("tokenizer.ggml.eos_token_id", MetaValue::u32(2));
    add("tokenizer.ggml.unknown_token_id", MetaValue::u32(0));

    std::vector<gguf::TensorData> data;
    uint64_t seed = 1;
    auto f16 = [&](std::string name, std::vector<uint64_t> dims, float scale) {
        uint64_t n = 1;
        for (uint64_t d : dims) n *= d;
        h.tensors.push_back({std::move(name), uint32_t(GgmlType::f16), dims, 0});
        data.push_back(gguf::TensorData::produced(n * 2, random_f16(n, scale, seed++)));
    };
    auto norm = [&](std::string name, uint32_t n) {
        h.tensors.push_back({std::move(name), uint32_t(GgmlType::f32), {n}, 0});
        data.push_back(gguf::TensorData::produced(uint64_t(n) * 4, ones_f32(n)));
    };
    const uint32_t D = s.embd / s.heads;
    f16("token_embd.weight", {s.embd, s.vocab}, 1.0f);
    norm("output_norm.weight", s.embd);
    f16("output.weight", {s.embd, s.vocab}, 0.02f);
    for (uint32_t il = 0; il < s.layers; ++il) {
        auto n = [il](const char *w) { return fmt::format("blk.{}.{}", il, w); };
        norm(n("attn_norm.weight"), s.embd);
        f16(n("attn_q.weight"), {s.embd, s.heads * D}, 0.02f);
        f16(n("attn_k.weight"), {s.embd, s.kv_heads * D}, 0.02f);
        f16(n("attn_v.weight"), {s.embd, s.kv_heads * D}, 0.02f);
        f16(n("attn_output.weight"), {s.heads * D, s.embd}, 0.02f);
        norm(n("ffn_norm.weight"), s.embd);
        if (s.experts == 0) {
            f16(n("ffn_gate.weight"), {s.embd, s.ff}, 0.02f);
            f16(n("ffn_up.weight"), {s.embd, s.ff}, 0.02f);
            f16(n("ffn_down.weight"), {s.ff, s.embd}, 0.02f);
            continue;
        }
        norm(n("attn_q_norm.weight"), D);
        norm(n("attn_k_norm.weight"), D);
        // The router, which llama.cpp's quantizer leaves as it is (F16 here); spread so that
        // tokens pick different experts.
        h.tensors.push_back(
            {n("ffn_gate_inp.weight"), uint32_t(GgmlType::f16), {s.embd, s.experts}, 0});
        data.push_back(
            gguf::TensorData::produced(uint64_t(s.embd) * s.experts * 2,
                                       random_f16(uint64_t(s.embd) * s.experts, 0.5f, seed++)));
        f16(n("ffn_gate_exps.weight"), {s.embd, s.ff, s.experts}, 0.02f);
        f16(n("ffn_up_exps.weight"), {s.embd, s.ff, s.experts}, 0.02f);
        f16(n("ffn_down_exps.weight"), {s.ff, s.embd, s.experts}, 0.02f);
    }
    OutputFile out(path);
    gguf::write_model(out, h, data);
    out.commit();
    out.keep();
}

struct Row {
    std::string name;
    double load_s = 0, rss_mib = 0, prefill_s = 0, step_s = 0;
    // The executor's last decode step, profiled: seconds and bytes read per operator type
    // ("DequantizePackedGemm-1", "MatMul-13", ...), and the seconds of all nodes.
    std::map<std::string, double> op_s, op_bytes;
    double profiled_s = 0;
};

// A child's row as JSON, both ways (rss_mib is measured by the parent).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Row, name, load_s, prefill_s, step_s, op_s, op_bytes, profiled_s)

// A row measured by this program run again as a child (`--child KIND ...`, see main), so that its
// peak RSS is its own.
Row in_child(const std::vector<std::string> &args) {
    std::vector<std::string> argv = {"/proc/self/exe", "--child"};
    argv.insert(argv.end(), args.begin(), args.end());
    testkit::ProcessOptions o;
    o.err = testkit::Output::inherit;
    const testkit::ProcessResult r = testkit::run(argv, o);
    if (r.status != 0) throw std::runtime_error("the child process failed: " + args[0]);
    Row row = nlohmann::json::parse(r.out).get<Row>();
    row.rss_mib = double(r.max_rss_kib) / 1024;
    return row;
}

// Repeated runs of one contender: the median of each measure and its range.
struct Runs {
    std::vector<Row> rows;
    std::vector<double> of(double Row::*m) const {
        std::vector<double> v;
        for (const Row &r : rows) v.push_back(r.*m);
        return v;
    }
    double med(double Row::*m) const { return median(of(m)); }
    // "1.23" or "1.23 (1.20-1.31)" when repeated.
    std::string text(double Row::*m, double scale = 1, int digits = 2) const {
        const std::vector<double> v = of(m);
        const double lo = *std::min_element(v.begin(), v.end()) * scale,
                     hi = *std::max_element(v.begin(), v.end()) * scale;
        if (v.size() == 1) return fmt::format("{:.{}f}", med(m) * scale, digits);
        return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", med(m) * scale, digits, lo, digits, hi,
                           digits);
    }
    // Decode tokens/s: the median step's inverse, and the range.
    std::string tok_s() const {
        std::vector<double> v;
        for (const Row &r : rows) v.push_back(1 / r.step_s);
        std::sort(v.begin(), v.end());
        if (v.size() == 1) return fmt::format("{:.2f}", v[0]);
        return fmt::format("{:.2f} ({:.2f}-{:.2f})", median(v), v.front(), v.back());
    }
};

std::vector<int64_t> prompt_ids(int n, int start) {
    std::vector<int64_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = (start + int64_t(i) * 7919) % 31000 + 3;
    return ids;
}

Row run_llama(const std::string &gguf, int prompt, int steps, unsigned threads) {
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama: " + why);
    Row r;
    r.name = fmt::format("llama.cpp (libllama), {} thr.", threads);
    auto t0 = Clock::now();
    reference::LlamaModel::Options o;
    o.n_ctx = prompt + steps + 16;
    o.threads = threads;
    reference::LlamaModel m(lib, gguf, o);
    r.load_s = since(t0);
    std::vector<int32_t> ids;
    for (int64_t v : prompt_ids(prompt, 0)) ids.push_back(int32_t(v));
    t0 = Clock::now();
    m.decode(ids, 0);
    r.prefill_s = since(t0);
    std::vector<double> st;
    for (int s = 0; s < steps; ++s) {
        const std::vector<int32_t> one = {int32_t(prompt_ids(1, prompt + s)[0])};
        t0 = Clock::now();
        m.decode(one, prompt + s);
        st.push_back(since(t0));
    }
    r.step_s = median(st);
    return r;
}

// The executor ("gguftool run") on the opset-29 package: `mode` its weight products.
Row run_executor(const std::string &package, const decoder::Hparams &h, int prompt, int steps,
                 unsigned threads, runtime::WeightProducts mode, bool profile) {
    Row r;
    r.name = fmt::format("gguftool run{}, {} thr.",
                         mode == runtime::WeightProducts::unfused ? " (unfused)" : "", threads);
    auto t0 = Clock::now();
    runtime::RunOptions ro;
    ro.threads = threads;
    ro.profile = profile;
    ro.weight_products = mode;
    runtime::Session session(runtime::Model::load(package + "/onnx/model.onnx"), ro);
    r.load_s = since(t0);
    // The generation loop of Session::run_step: each present.* carried to the next step's
    // past_key_values.* (the cache appended in place), the logits handed out.
    runtime::Inputs in;
    runtime::Session::Carry carry;
    for (int64_t il = 0; il < h.n_layer; ++il)
        for (const char *kv : {"key", "value"}) {
            const std::string past = fmt::format("past_key_values.{}.{}", il, kv);
            carry.emplace_back(fmt::format("present.{}.{}", il, kv), past);
            in[past] = runtime::Tensor::zeros(DataType::float32,
                                              runtime::Shape{1, h.n_head_kv, 0, h.head_dim});
        }
    auto step = [&](int n, int pos) {
        std::vector<int64_t> positions(n), mask(pos + n, 1);
        for (int i = 0; i < n; ++i) positions[i] = pos + i;
        in["input_ids"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, n}, prompt_ids(n, pos));
        in["position_ids"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, n}, positions);
        in["attention_mask"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, pos + n}, mask);
        session.run_step(in, carry);
        for (const auto &[present, past] : carry) in.erase(past);
    };
    t0 = Clock::now();
    step(prompt, 0);
    r.prefill_s = since(t0);
    std::vector<double> st;
    for (int s = 0; s < steps; ++s) {
        t0 = Clock::now();
        step(1, prompt + s);
        st.push_back(since(t0));
    }
    r.step_s = median(st);
    // The last step's profile, per operator type.
    for (const runtime::NodeProfile &p : session.profile()) {
        r.profiled_s += p.seconds;
        r.op_s[p.op] += p.seconds;
        r.op_bytes[p.op] += double(p.bytes_read);
    }
    return r;
}

// bench_decoder --child KIND GGUF PACKAGE PROMPT STEPS THREADS: one row, as JSON. KIND: llama,
// executor, executor-unfused, profile.
int child(char **argv) {
    const std::string kind = argv[2], gguf = argv[3], package = argv[4];
    const int prompt = std::stoi(argv[5]), steps = std::stoi(argv[6]);
    const unsigned threads = unsigned(std::stoul(argv[7]));
    const Row r = kind == "llama"
                      ? run_llama(gguf, prompt, steps, threads)
                      : run_executor(package, decoder::read_hparams(gguf::Model::open(gguf)),
                                     prompt, steps, threads,
                                     kind == "executor-unfused" ? runtime::WeightProducts::unfused
                                                                : runtime::WeightProducts::fused,
                                     kind == "profile");
    fmt::print("{}\n", nlohmann::json(r).dump());
    return 0;
}

// The machine's read bandwidth on `threads` threads, GB/s: the best of 5 sums of a 512 MiB buffer
// (what a decoding step at best reads its weights at).
double read_bandwidth(unsigned threads) {
    const size_t n = (size_t(512) << 20) / 8;
    std::vector<uint64_t> buf(n, 1);
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
        std::vector<uint64_t> sums(threads);
        const auto t0 = Clock::now();
        parallel_for(n, threads, n / threads, [&](uint64_t b, uint64_t e) {
            uint64_t s = 0;
            for (uint64_t i = b; i < e; ++i) s += buf[i];
            sums[b * threads / n] = s;
        });
        best = std::max(best, double(n * 8) / since(t0) / 1e9);
        if (std::accumulate(sums.begin(), sums.end(), uint64_t(0)) != n) return 0;
    }
    return best;
}

// The model file: the one --model names, or a synthetic one written in F16 and quantized to
// `qtype` by llama_model_quantize.
std::string make_model(const Setup &s, const std::string &qtype, const Shape &shape,
                       unsigned threads) {
    if (s.own.at("--model") != "") return s.own.at("--model");
    const fs::path dir = s.dir;
    const std::string f16 = (dir / "model-f16.gguf").string(),
                      out = (dir / ("model-" + qtype + ".gguf")).string();
    auto t0 = Clock::now();
    write_model(f16, shape);
    fmt::print("  wrote the F16 model in {:.1f} s ({:.2f} GiB)\n", since(t0),
               double(fs::file_size(f16)) / (1 << 30));
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama: " + why);
    t0 = Clock::now();
    const std::optional<int> ftype = reference::llama_ftype_from_name(qtype);
    if (!ftype) throw std::runtime_error("unknown --type " + qtype);
    reference::quantize_model(lib, f16, out, *ftype, threads);
    fmt::print("  quantized to {} by llama_model_quantize in {:.1f} s ({:.2f} GiB)\n", qtype,
               since(t0), double(fs::file_size(out)) / (1 << 30));
    fs::remove(f16);
    return out;
}

int main_(int argc, char **argv) {
    if (argc == 8 && std::string_view(argv[1]) == "--child") return child(argv);
    Setup s;
    s.own = {{"--layers", "0"}, {"--prompt", "128"},  {"--steps", "8"},       {"--threads", "0"},
             {"--keep", "0"},   {"--type", "Q4_K_M"}, {"--ort-lowered", "0"}, {"--ort", "1"},
             {"--model", ""},   {"--repeat", "1"},    {"--unfused", "0"},     {"--arch", "llama"}};
    if (int rc = setup(
            argc, argv, "bench_decoder", s,
            "[--arch llama|qwen3moe] [--layers N] [--prompt N] [--steps N] [--threads N] [--type "
            "Q4_K_M|Q4_0|IQ4_XS|...] [--model GGUF] [--repeat N] [--ort 0] "
            "[--ort-lowered 1] [--unfused 1] [--keep 1]"))
        return rc;
    const std::string qtype = s.own["--type"];
    Shape shape = shape_of(s.own["--arch"]);
    if (s.own["--layers"] != "0") shape.layers = uint32_t(std::stoul(s.own["--layers"]));
    const int prompt = std::stoi(s.own["--prompt"]), steps = std::stoi(s.own["--steps"]);
    const int repeat = std::max(1, std::stoi(s.own["--repeat"]));
    const unsigned threads = thread_count(unsigned(std::stoul(s.own["--threads"])));
    const bool ort = s.own["--ort"] != "0";
    const fs::path dir = s.dir;
    fmt::print(
        "bench_decoder: {}, {} layers, n_embd {}, {} heads ({} KV) of {}, n_ff {}{}, vocab {}; "
        "{} threads; work in {}\n",
        shape.arch, shape.layers, shape.embd, shape.heads, shape.kv_heads, shape.embd / shape.heads,
        shape.ff,
        shape.experts ? fmt::format(" ({} experts, {} used)", shape.experts, shape.used) : "",
        shape.vocab, threads, s.dir);
    const std::string q4 = make_model(s, qtype, shape, threads);
    const double gguf_gib = double(fs::file_size(q4)) / (1 << 30);

    // Export against cp: the opset-29 package always; the others for onnxruntime.
    const std::string pkg21 = (dir / "pkg-opset21").string(),
                      pkg29 = (dir / "pkg-opset29").string(), pkgnb = (dir / "pkg-nbits").string(),
                      pkgnb4 = (dir / "pkg-nbits-acc4").string();
    const ChildRun cp = run_child({"/bin/cp", q4, (dir / "copy.gguf").string()}, true);
    fs::remove(dir / "copy.gguf");
    const ChildRun ex29 =
        run_child({s.gguftool, "to-onnx", q4, pkg29, "--graph", "decoder", "-q"}, true);
    if (ex29.status != 0) throw std::runtime_error("the export failed");
    fmt::print("export: to-onnx --graph decoder {:.2f} s, cp of the GGUF {:.2f} s ({:.1f}x)\n",
               ex29.seconds, cp.seconds, ex29.seconds / cp.seconds);
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(q4));

    std::vector<Runs> table;
    if (ort) {
        const ChildRun ex21 = run_child(
            {s.gguftool, "to-onnx", q4, pkg21, "--graph", "decoder", "--opset", "21", "-q"}, true);
        const ChildRun exnb = run_child({s.gguftool, "to-onnx", q4, pkgnb, "--graph", "decoder",
                                         "--weights", "nbits", "--accuracy-level", "0", "-q"},
                                        true);
        const ChildRun exnb4 = run_child({s.gguftool, "to-onnx", q4, pkgnb4, "--graph", "decoder",
                                          "--weights", "nbits", "--accuracy-level", "4", "-q"},
                                         true);
        if (ex21.status != 0 || exnb.status != 0 || exnb4.status != 0)
            throw std::runtime_error("the export failed");
        fmt::print("export --opset 21 {:.2f} s; nbits {:.2f} s, package {:.2f} GiB\n", ex21.seconds,
                   exnb.seconds,
                   double(fs::file_size(pkgnb + "/onnx/model.onnx_data") +
                          fs::file_size(pkgnb + "/onnx/model.onnx")) /
                       (1 << 30));
        // onnxruntime, on the lowered package and on the nbits one.
        auto ort_row = [&](const std::string &name, const std::string &pkg) {
            Row row;
            row.name = name;
            testkit::ProcessOptions o;
            o.err = testkit::Output::inherit;
            const testkit::ProcessResult r = testkit::run(
                {GGUFTOOL_NODE, GGUFTOOL_SOURCE_DIR "/bench/decoder_ort_bench.mjs",
                 pkg + "/onnx/model.onnx", std::to_string(h.n_layer), std::to_string(h.n_head_kv),
                 std::to_string(h.head_dim), std::to_string(prompt), std::to_string(steps),
                 std::to_string(threads)},
                o);
            if (r.status != 0) throw std::runtime_error("onnxruntime failed on " + pkg);
            const nlohmann::json j = nlohmann::json::parse(r.out);
            row.load_s = j["session_s"];
            row.rss_mib = double(r.max_rss_kib) / 1024;
            row.prefill_s = j["prefill_s"];
            row.step_s = median(j["step_s"].get<std::vector<double>>());
            return row;
        };
        auto ort_runs = [&](const std::string &name, const std::string &pkg) {
            Runs runs;
            for (int i = 0; i < repeat; ++i) runs.rows.push_back(ort_row(name, pkg));
            return runs;
        };
        // The lowered package: onnxruntime folds the decoding of every weight into float32
        // constants while it creates the session (24 GiB were not enough for ~1.1B parameters on
        // the developers' machine: the kernel's OOM killer ended it), so it runs only when asked.
        if (s.own["--ort-lowered"] != "0")
            table.push_back(ort_runs("onnxruntime 1.30 (lowered, 21)", pkg21));
        table.push_back(ort_runs("onnxruntime 1.30 (nbits, acc. 0)", pkgnb));
        table.push_back(ort_runs("onnxruntime 1.30 (nbits, acc. 4)", pkgnb4));
    }
    // The executor and llama.cpp on `threads` threads and on one, the runs interleaved.
    auto args = [&](const char *kind, const std::string &package, unsigned t) {
        return std::vector<std::string>{
            kind, q4, package, std::to_string(prompt), std::to_string(steps), std::to_string(t)};
    };
    Runs ours, ours1, llama, llama1, unfused;
    for (int i = 0; i < repeat; ++i) {
        ours.rows.push_back(in_child(args("executor", pkg29, threads)));
        llama.rows.push_back(in_child(args("llama", "", threads)));
        ours1.rows.push_back(in_child(args("executor", pkg29, 1)));
        llama1.rows.push_back(in_child(args("llama", "", 1)));
    }
    if (s.own["--unfused"] != "0")
        unfused.rows.push_back(in_child(args("executor-unfused", pkg29, threads)));
    const Row profile = in_child(args("profile", pkg29, threads));
    table.push_back(ours);
    if (!unfused.rows.empty()) table.push_back(unfused);
    table.push_back(llama);
    table.push_back(ours1);
    table.push_back(llama1);

    const double ll_prefill = llama.med(&Row::prefill_s), ll_step = llama.med(&Row::step_s);
    fmt::print("\n{} ({:.2f} GiB), prompt {}, {} steps, {} repeat(s): median (range)\n", qtype,
               gguf_gib, prompt, steps, repeat);
    fmt::print("{:<34} {:>18} {:>22} {:>22} {:>22} {:>16}\n", "", "load s", "peak RSS MiB",
               fmt::format("prefill {} s", prompt), "decode tok/s", "vs llama.cpp");
    for (const Runs &r : table)
        fmt::print("{:<34} {:>18} {:>22} {:>22} {:>22} {:>16}\n", r.rows[0].name,
                   r.text(&Row::load_s), r.text(&Row::rss_mib, 1, 0), r.text(&Row::prefill_s),
                   r.tok_s(),
                   fmt::format("{:.2f}x / {:.2f}x", ll_prefill / r.med(&Row::prefill_s),
                               ll_step / r.med(&Row::step_s)));
    fmt::print(
        "(vs llama.cpp: speed relative to llama.cpp's on {} threads, prefill / decode; > 1 is "
        "faster; peak RSS of each contender's own process)\n",
        threads);

    // The targets, for the executor against llama.cpp on the same threads.
    const double gguf_mib = gguf_gib * 1024;
    const double kv_mib = 2.0 * double(h.n_layer) * double(h.n_head_kv) * double(h.head_dim) *
                          double(prompt + steps) * 4 / (1 << 20);
    auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    const double decode = ll_step / ours.med(&Row::step_s),
                 prefill = ll_prefill / ours.med(&Row::prefill_s),
                 rss = ours.med(&Row::rss_mib) / (gguf_mib + kv_mib),
                 load = ours.med(&Row::load_s) / llama.med(&Row::load_s),
                 scaling = ours1.med(&Row::step_s) / ours.med(&Row::step_s),
                 llama_scaling = llama1.med(&Row::step_s) / ll_step;
    fmt::print(
        "\ntargets, gguftool run against llama.cpp ({} threads):\n"
        "  decode {:.2f}x (>= 1.0x: {}), prefill {:.2f}x (>= 1.0x: {})\n"
        "  peak RSS {:.0f} MiB, {:.2f}x the GGUF's {:.0f} MiB + the KV cache's {:.1f} MiB "
        "(<= 1.1x: {}); llama.cpp's {:.0f} MiB\n"
        "  load {:.3f} s, {:.2f}x llama.cpp's {:.3f} s (<= 2x: {})\n"
        "  decode on {} threads {:.2f}x one thread's (>= 1.7x: {}; llama.cpp {:.2f}x)\n",
        threads, decode, verdict(decode >= 1.0), prefill, verdict(prefill >= 1.0),
        ours.med(&Row::rss_mib), rss, gguf_mib, kv_mib, verdict(rss <= 1.1),
        llama.med(&Row::rss_mib), ours.med(&Row::load_s), load, llama.med(&Row::load_s),
        verdict(load <= 2.0), threads, scaling, verdict(scaling >= 1.7), llama_scaling);

    // Where the executor's decode step goes (its profiled last step), and what bounds it.
    uint64_t params = 0;
    for (const gguf::TensorInfo &t : gguf::Model::open(q4).tensors()) {
        uint64_t n = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) n *= t.ne[d];
        params += n;
    }
    std::vector<std::pair<double, std::string>> ops;
    for (const auto &[op, sec] : profile.op_s) ops.emplace_back(sec, op);
    std::sort(ops.rbegin(), ops.rend());
    const double scale = ours.med(&Row::step_s) / profile.profiled_s;
    fmt::print(
        "gguftool run's decode step, {:.1f} ms (profiled: {:.1f} ms, shares scaled to the "
        "median step):\n",
        ours.med(&Row::step_s) * 1e3, profile.profiled_s * 1e3);
    for (size_t i = 0; i < ops.size() && i < 6; ++i) {
        const double bytes = profile.op_bytes.at(ops[i].second);
        fmt::print("  {:<28} {:7.2f} ms  {:6.1f}%  reads {:8.1f} MiB  {:6.1f} GB/s\n",
                   ops[i].second, ops[i].first * scale * 1e3,
                   100 * ops[i].first / profile.profiled_s, bytes / (1 << 20),
                   bytes / (ops[i].first * scale) / 1e9);
    }
    const double weight_bytes = double(fs::file_size(q4));
    fmt::print(
        "  weights: {:.2f} bits each ({:.2f} GiB for {:.2f}B parameters); reading them once per "
        "token at llama.cpp's decode speed takes {:.1f} GB/s, at ours {:.1f} GB/s on {} threads "
        "and {:.1f} GB/s on one\n",
        8 * weight_bytes / double(params), gguf_gib, double(params) / 1e9,
        weight_bytes / ll_step / 1e9, weight_bytes / ours.med(&Row::step_s) / 1e9, threads,
        weight_bytes / ours1.med(&Row::step_s) / 1e9);
    fmt::print(
        "  the machine reads memory at {:.1f} GB/s on one thread, {:.1f} GB/s on {} (a sum "
        "over 512 MiB, best of 5)\n",
        read_bandwidth(1), read_bandwidth(threads), threads);
    if (s.own["--keep"] == "0") fs::remove_all(dir);
    return 0;
}

}  // namespace
}  // namespace gguftool::bench

int main(int argc, char **argv) {
    try {
        return gguftool::bench::main_(argc, argv);
    } catch (const std::exception &e) {
        fmt::print(stderr, "bench_decoder: {}\n", e.what());
        return 1;
    }
}
