// bench_decoder: a synthetic model (random weights, real shapes: a ~1.1B llama by default, head
// size 64, GQA 4:1, vocabulary 32000; --arch qwen3moe, a ~1.5B mixture of experts) written in F16
// and quantized to Q4_K_M by llama.cpp's own llama_model_quantize; then, side by side in one run:
//   export        gguftool to-onnx --graph decoder (opset 21, lowered) against cp of the GGUF;
//   onnxruntime   session creation time and peak RSS, prefill of --prompt tokens, decode tokens/s;
//   gguftool run  the executor on the opset-29 package (weights as DequantizePacked), the same,
//                 and where its decode step's time goes (DequantizePacked, MatMul/Gemm, the rest);
//   llama.cpp     libllama on the GGUF itself, the same, with the same threads.
// Each contender runs in a process of its own, its peak RSS measured: onnxruntime in node, the
// executor and libllama in this program run again (--child).
//
//   bench_decoder [--arch llama|qwen3moe] [--layers N] [--prompt N] [--steps N] [--threads N]
//                 [--type FTYPE] [--dir DIR] [--keep 1] [--gguftool PATH]
// --type: the llama-quantize file type to quantize to (Q4_K_M, the default; Q4_0, IQ4_XS, ...).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
    // The executor's last decode step, profiled: seconds in DequantizePacked, in MatMul and Gemm,
    // and the float32 bytes the products read.
    double decode_s = 0, matmul_s = 0, matmul_bytes = 0, profiled_s = 0;
};

// A child's row as JSON, both ways (rss_mib is measured by the parent).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Row, name, load_s, prefill_s, step_s, decode_s, matmul_s,
                                   matmul_bytes, profiled_s)

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

std::vector<int64_t> prompt_ids(int n, int start) {
    std::vector<int64_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = (start + int64_t(i) * 7919) % 31000 + 3;
    return ids;
}

Row run_llama(const std::string &gguf, int prompt, int steps, unsigned threads) {
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) throw std::runtime_error("libllama: " + why);
    Row r{"llama.cpp (libllama)"};
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

Row run_executor(const std::string &package, const decoder::Hparams &h, int prompt, int steps,
                 unsigned threads, bool profile) {
    Row r{"gguftool run (opset 29)"};
    auto t0 = Clock::now();
    runtime::RunOptions ro;
    ro.threads = threads;
    ro.profile = profile;
    runtime::Session session(runtime::Model::load(package + "/onnx/model.onnx"), ro);
    r.load_s = since(t0);
    runtime::Inputs in;
    for (int64_t il = 0; il < h.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            in[fmt::format("past_key_values.{}.{}", il, kv)] = runtime::Tensor::zeros(
                DataType::float32, runtime::Shape{1, h.n_head_kv, 0, h.head_dim});
    auto step = [&](int n, int pos) {
        std::vector<int64_t> positions(n), mask(pos + n, 1);
        for (int i = 0; i < n; ++i) positions[i] = pos + i;
        in["input_ids"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, n}, prompt_ids(n, pos));
        in["position_ids"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, n}, positions);
        in["attention_mask"] =
            runtime::Tensor::from_values(DataType::int64, runtime::Shape{1, pos + n}, mask);
        for (auto &[name, t] : session.run(in))
            if (name != "logits") in["past_key_values." + name.substr(8)] = t;
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
    // The last step's profile.
    for (const runtime::NodeProfile &p : session.profile()) {
        r.profiled_s += p.seconds;
        if (p.op.starts_with("DequantizePacked")) r.decode_s += p.seconds;
        if (p.op.starts_with("MatMul") || p.op.starts_with("Gemm")) {
            r.matmul_s += p.seconds;
            r.matmul_bytes += double(p.bytes_read);
        }
    }
    return r;
}

// bench_decoder --child executor|profile|llama GGUF PACKAGE PROMPT STEPS THREADS: one row, as JSON.
int child(char **argv) {
    const std::string kind = argv[2], gguf = argv[3], package = argv[4];
    const int prompt = std::stoi(argv[5]), steps = std::stoi(argv[6]);
    const unsigned threads = unsigned(std::stoul(argv[7]));
    const Row r = kind == "llama"
                      ? run_llama(gguf, prompt, steps, threads)
                      : run_executor(package, decoder::read_hparams(gguf::Model::open(gguf)),
                                     prompt, steps, threads, kind == "profile");
    fmt::print("{}\n", nlohmann::json(r).dump());
    return 0;
}

int main_(int argc, char **argv) {
    if (argc == 8 && std::string_view(argv[1]) == "--child") return child(argv);
    Setup s;
    s.own = {{"--layers", "0"}, {"--prompt", "128"},  {"--steps", "8"},    {"--threads", "0"},
             {"--keep", "0"},   {"--type", "Q4_K_M"}, {"--arch", "llama"}, {"--ort-lowered", "0"}};
    if (int rc =
            setup(argc, argv, "bench_decoder", s,
                  "[--arch llama|qwen3moe] [--layers N] [--prompt N] [--steps N] [--threads N] "
                  "[--type Q4_K_M|Q4_0|IQ4_XS|...] [--ort-lowered 1] [--keep 1]"))
        return rc;
    const std::string qtype = s.own["--type"];
    Shape shape = shape_of(s.own["--arch"]);
    if (s.own["--layers"] != "0") shape.layers = uint32_t(std::stoul(s.own["--layers"]));
    const int prompt = std::stoi(s.own["--prompt"]), steps = std::stoi(s.own["--steps"]);
    const unsigned threads = thread_count(unsigned(std::stoul(s.own["--threads"])));
    const fs::path dir = s.dir;
    const std::string f16 = (dir / "model-f16.gguf").string(),
                      q4 = (dir / ("model-" + qtype + ".gguf")).string();
    fmt::print(
        "bench_decoder: {}, {} layers, n_embd {}, {} heads ({} KV) of {}, n_ff {}{}, vocab {}; "
        "{} threads; work in {}\n",
        shape.arch, shape.layers, shape.embd, shape.heads, shape.kv_heads, shape.embd / shape.heads,
        shape.ff,
        shape.experts ? fmt::format(" ({} experts, {} used)", shape.experts, shape.used) : "",
        shape.vocab, threads, s.dir);
    auto t0 = Clock::now();
    write_model(f16, shape);
    fmt::print("  wrote the F16 model in {:.1f} s ({:.2f} GiB)\n", since(t0),
               double(fs::file_size(f16)) / (1 << 30));
    std::string why;
    auto lib = reference::load_llama(&why);
    if (!lib) {
        fmt::print(stderr, "bench_decoder: libllama: {}\n", why);
        return 1;
    }
    t0 = Clock::now();
    const std::optional<int> ftype = reference::llama_ftype_from_name(qtype);
    if (!ftype) {
        fmt::print(stderr, "bench_decoder: unknown --type {}\n", qtype);
        return 2;
    }
    reference::quantize_model(lib, f16, q4, *ftype, threads);
    fmt::print("  quantized to {} by llama_model_quantize in {:.1f} s ({:.2f} GiB)\n", qtype,
               since(t0), double(fs::file_size(q4)) / (1 << 30));
    fs::remove(f16);

    // Export against cp.
    const std::string pkg21 = (dir / "pkg-opset21").string(),
                      pkg29 = (dir / "pkg-opset29").string(), pkgnb = (dir / "pkg-nbits").string(),
                      pkgnb4 = (dir / "pkg-nbits-acc4").string();
    const ChildRun cp = run_child({"/bin/cp", q4, (dir / "copy.gguf").string()}, true);
    fs::remove(dir / "copy.gguf");
    const ChildRun ex21 = run_child(
        {s.gguftool, "to-onnx", q4, pkg21, "--graph", "decoder", "--opset", "21", "-q"}, true);
    const ChildRun ex29 =
        run_child({s.gguftool, "to-onnx", q4, pkg29, "--graph", "decoder", "-q"}, true);
    const ChildRun exnb = run_child({s.gguftool, "to-onnx", q4, pkgnb, "--graph", "decoder",
                                     "--weights", "nbits", "--accuracy-level", "0", "-q"},
                                    true);
    const ChildRun exnb4 = run_child({s.gguftool, "to-onnx", q4, pkgnb4, "--graph", "decoder",
                                      "--weights", "nbits", "--accuracy-level", "4", "-q"},
                                     true);
    if (ex21.status != 0 || ex29.status != 0 || exnb.status != 0 || exnb4.status != 0) {
        fmt::print(stderr, "bench_decoder: the export failed\n");
        return 1;
    }
    const decoder::Hparams h = decoder::read_hparams(gguf::Model::open(q4));

    // onnxruntime, on the lowered package and on the nbits one.
    auto ort_row = [&](const std::string &name, const std::string &pkg) {
        Row row{name};
        testkit::ProcessOptions o;
        o.err = testkit::Output::inherit;
        const testkit::ProcessResult r =
            testkit::run({GGUFTOOL_NODE, GGUFTOOL_SOURCE_DIR "/bench/decoder_ort_bench.mjs",
                          pkg + "/onnx/model.onnx", std::to_string(h.n_layer),
                          std::to_string(h.n_head_kv), std::to_string(h.head_dim),
                          std::to_string(prompt), std::to_string(steps), std::to_string(threads)},
                         o);
        if (r.status != 0) throw std::runtime_error("onnxruntime failed on " + pkg);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        row.load_s = j["session_s"];
        row.rss_mib = double(r.max_rss_kib) / 1024;
        row.prefill_s = j["prefill_s"];
        row.step_s = median(j["step_s"].get<std::vector<double>>());
        return row;
    };
    // The lowered package: onnxruntime folds the decoding of every weight into float32 constants
    // while it creates the session (24 GiB were not enough for ~1.1B parameters on the
    // developers' machine: the kernel's OOM killer ended it), so it runs only when asked.
    std::vector<Row> rows;
    if (s.own["--ort-lowered"] != "0")
        rows.push_back(ort_row("onnxruntime 1.30 (lowered, 21)", pkg21));
    rows.push_back(ort_row("onnxruntime 1.30 (nbits, acc. 0)", pkgnb));
    rows.push_back(ort_row("onnxruntime 1.30 (nbits, acc. 4)", pkgnb4));
    const Row ort4 = rows.back();  // a copy: rows grows below
    const std::vector<std::string> sizes = {std::to_string(prompt), std::to_string(steps),
                                            std::to_string(threads)};
    auto child_args = [&](const char *kind, const std::string &package) {
        std::vector<std::string> a = {kind, q4, package};
        a.insert(a.end(), sizes.begin(), sizes.end());
        return a;
    };
    Row ours = in_child(child_args("executor", pkg29));
    {
        const Row p = in_child(child_args("profile", pkg29));
        ours.decode_s = p.decode_s / p.profiled_s * ours.step_s;  // the profiled run's shares
        ours.matmul_s = p.matmul_s / p.profiled_s * ours.step_s;
        ours.matmul_bytes = p.matmul_bytes;
    }
    const Row llama = in_child(child_args("llama", ""));

    fmt::print(
        "\nexport: to-onnx --graph decoder --opset 21 {:.2f} s, opset 29 {:.2f} s, cp of "
        "the GGUF {:.2f} s (ratio {:.1f}x / {:.1f}x); package {:.2f} GiB for a {:.2f} GiB "
        "GGUF\n",
        ex21.seconds, ex29.seconds, cp.seconds, ex21.seconds / cp.seconds,
        ex29.seconds / cp.seconds,
        double(fs::file_size(pkg21 + "/onnx/model.onnx_data") +
               fs::file_size(pkg21 + "/onnx/model.onnx")) /
            (1 << 30),
        double(fs::file_size(q4)) / (1 << 30));
    fmt::print("{:<30} {:>10} {:>10} {:>14} {:>12} {:>14}\n", "", "load s", "peak RSS",
               fmt::format("prefill {} s", prompt), "decode tok/s", "vs llama.cpp");
    fmt::print("nbits export {:.2f} s; GGUF {:.2f} GiB, nbits package {:.2f} GiB\n", exnb.seconds,
               double(fs::file_size(q4)) / (1 << 30),
               double(fs::file_size(pkgnb + "/onnx/model.onnx_data") +
                      fs::file_size(pkgnb + "/onnx/model.onnx")) /
                   (1 << 30));
    rows.push_back(ours);
    rows.push_back(llama);
    for (const Row &r : rows)
        fmt::print("{:<30} {:>10.2f} {:>10} {:>14.2f} {:>12.2f} {:>14}\n", r.name, r.load_s,
                   r.rss_mib > 0 ? fmt::format("{:.0f} MiB", r.rss_mib) : "-", r.prefill_s,
                   1.0 / r.step_s,
                   fmt::format("{:.2f}x / {:.2f}x", llama.prefill_s / r.prefill_s,
                               llama.step_s / r.step_s));
    fmt::print(
        "(vs llama.cpp: speed relative to llama.cpp's, prefill / decode; > 1 is faster; peak "
        "RSS of each contender's own process)\n");
    const double gguf_mib = double(fs::file_size(q4)) / (1 << 20);
    auto verdict = [](bool met) { return met ? "met" : "NOT met"; };
    // The targets' RSS bound: 1.3x for the dense model (the nbits issue), 1.5x for a mixture of
    // experts (the MoE issue).
    const double rss_target = shape.experts ? 1.5 : 1.3;
    fmt::print(
        "\ntargets, onnxruntime nbits acc. 4 against llama.cpp:\n"
        "  decode {:.2f}x (>= 0.8x: {}), prefill {:.2f}x (>= 0.8x: {})\n"
        "  peak RSS {:.2f}x the GGUF's {:.0f} MiB (<= {:.1f}x: {}); session {:.2f} s, {:.1f}x "
        "llama.cpp's load (<= 2x: {})\n",
        llama.step_s / ort4.step_s, verdict(llama.step_s / ort4.step_s >= 0.8),
        llama.prefill_s / ort4.prefill_s, verdict(llama.prefill_s / ort4.prefill_s >= 0.8),
        ort4.rss_mib / gguf_mib, gguf_mib, rss_target,
        verdict(ort4.rss_mib <= rss_target * gguf_mib), ort4.load_s, ort4.load_s / llama.load_s,
        verdict(ort4.load_s <= 2 * llama.load_s));
    // gguftool run decodes every weight to float32 at every step, then multiplies: a fused
    // decode-and-multiply would read the GGUF's bytes once instead of writing and reading the
    // float32 weights. Estimate: the products' time scaled by the bytes they would read.
    const double rest = ours.step_s - ours.decode_s - ours.matmul_s;
    const double fused =
        rest + ours.matmul_s * double(fs::file_size(q4)) / std::max(1.0, ours.matmul_bytes);
    fmt::print(
        "gguftool run, a decode step of {:.0f} ms: DequantizePacked {:.0f} ms, MatMul/Gemm {:.0f} "
        "ms ({:.2f} GiB of float32 read), the rest {:.0f} ms; a fused decode-and-multiply "
        "reading the {:.2f} GiB of GGUF blocks at the products' bandwidth: ~{:.0f} ms, ~{:.1f} "
        "tok/s ({:.2f}x llama.cpp) (estimate)\n",
        ours.step_s * 1e3, ours.decode_s * 1e3, ours.matmul_s * 1e3, ours.matmul_bytes / (1 << 30),
        rest * 1e3, double(fs::file_size(q4)) / (1 << 30), fused * 1e3, 1 / fused,
        llama.step_s / fused);
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
