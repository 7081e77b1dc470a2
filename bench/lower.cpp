// Side-by-side benchmark of the lowered DequantizePacked (gguftool/lower.hpp): for every quantized
// format, a model of one DequantizePacked node (x an initializer of llama.cpp-quantized bytes,
// FLOAT output of 16 MiB by default) lowered to standard operators at --opset, run by our
// executor (all threads) and by onnxruntime (bench/ort_bench.mjs; 1 thread and all threads, its
// constant folding off so that the runs decode), next to our native decoder (1 and all threads)
// and llama.cpp's dequantize_row_<type> (one thread). GB/s of FLOAT output, medians. onnxruntime's
// output is compared with llama.cpp's bit for bit (q8_1, which llama.cpp cannot decode: with ours).
// Last, onnxruntime's session-creation time for testdata/sample.gguf exported lowered and
// dequantized. A format not lowered yet, or an operator our executor lacks, shows n/a.
//
//   bench_lower [--json] [--format NAME] [--opset N] [--reps N] [--mib N]
#include "gguftool/lower.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "gguftool/error.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/opset29.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"
#include "gguftool/runtime/session.hpp"
#include "onnx_builder.hpp"
#include "process.hpp"

namespace {

using namespace gguftool;
using namespace gguftool::bench;
namespace fs = std::filesystem;

struct Options : FormatOptions {
    int opset = lower::kDefaultOpset;
};

using Speed = std::optional<double>;  // GB/s, nullopt: not measured (the reason is in a note)

struct Row {
    std::string name;
    std::optional<size_t> nodes;  // lower::Report::nodes_added
    double ours1 = 0, oursN = 0;
    Speed exec, ort1, ortN, llama;
    Speed ort_folded;  // onnxruntime with constant folding on: a run only hands the output back
    std::optional<bool> ort_matches;  // onnxruntime's output equals the reference bit for bit
    std::vector<std::string> notes;
};

[[noreturn]] void usage(const std::string &why) {
    bench::usage("bench_lower", "[--opset N]", why);
}

Options parse(int argc, char **argv) {
    Options o;
    parse_format_options(
        argc, argv, "bench_lower", "[--opset N]", o,
        [&](const std::string &name, const std::string &value) {
            if (name != "--opset") return false;
            o.opset = std::stoi(value);
            if (o.opset < lower::kMinOpset || o.opset > lower::kMaxOpset)
                usage(fmt::format("--opset must be {}..{}", lower::kMinOpset, lower::kMaxOpset));
            return true;
        });
    return o;
}

// One DequantizePacked node decoding the initializer `bytes` to FLOAT of shape [elements].
onnx::ModelProto packed_model(GgmlType t, const std::vector<uint8_t> &bytes, size_t elements) {
    testkit::ModelBuilder m(29, "bench", 10);
    m.bytes_initializer("x", bytes);
    m.dequantize_packed("dequantize", "x", "y", t, {int64_t(elements)}, DataType::float32);
    m.output("y", DataType::float32, {int64_t(elements)});
    return m.proto();
}

struct OrtTimes {
    double session_ms = 0;
    std::vector<double> run_ms;
};

// Runs bench/ort_bench.mjs; throws Error with its message when it fails.
OrtTimes run_ort(const std::string &model, unsigned threads, int reps, bool no_fold,
                 const std::string &out = "") {
    std::vector<std::string> argv = {GGUFTOOL_NODE, GGUFTOOL_ORT_BENCH, model,
                                     std::to_string(threads), std::to_string(reps)};
    if (no_fold) argv.push_back("--no-fold");
    if (!out.empty()) argv.insert(argv.end(), {"--out", out});
    testkit::ProcessOptions o;
    o.err = testkit::Output::merge;
    testkit::ProcessResult r;
    try {
        r = testkit::run(argv, o);
    } catch (const std::exception &) {
        throw Error("cannot run node");
    }
    std::string text = r.out;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (r.status != 0 || text.empty() || text[0] != '{') throw Error(text);
    const nlohmann::json j = nlohmann::json::parse(text);
    return {j.at("session_ms").get<double>(), j.at("run_ms").get<std::vector<double>>()};
}

Row run(const reference::Ggml &g, GgmlType t, const Options &o, const std::string &dir) {
    const TypeTraits &tt = traits(t);
    const size_t elements = o.mib * (size_t(1) << 20) / 4 / tt.block_size * tt.block_size;
    const size_t out_bytes = elements * 4;
    const double gb = double(out_bytes) / 1e9;
    const std::vector<uint8_t> in = make_input(g, t, elements / tt.block_size);
    const AlignedFloats out = aligned_floats(elements);
    const AlignedFloats want = aligned_floats(elements);  // the reference decode
    const auto llama = g.dequantize_row[static_cast<uint32_t>(t)];
    const unsigned threads = thread_count(0);

    Row r;
    r.name = tt.name;
    auto ours = [&](unsigned n) { quant::decode_f32(t, in, elements, out.get(), n); };
    if (llama) {
        llama(in.data(), want.get(), int64_t(elements));
    } else {
        quant::decode_f32(t, in, elements, want.get(), 0);
        r.notes.push_back("llama.cpp has no decoder: onnxruntime's output is compared with ours");
    }

    // The lowered model, our executor's session on it, and onnxruntime's timings and output.
    std::optional<runtime::Session> session;
    const std::string model_path = dir + "/" + r.name + ".onnx";
    try {
        onnx::ModelProto m = packed_model(t, in, elements);
        r.nodes = lower::lower_model(m, {o.opset}).nodes_added;
        testkit::save_model(m, model_path);
        try {
            session.emplace(runtime::Model::from_proto(m), runtime::RunOptions{});
            session->run();  // warm-up
        } catch (const Error &e) {
            session.reset();
            r.notes.push_back(std::string("our executor: ") + e.what());
        }
    } catch (const Error &e) {
        r.notes.push_back(std::string("not lowered: ") + e.what());
    }
    if (r.nodes) try {
            const std::string dump = dir + "/" + r.name + ".raw";
            const OrtTimes all = run_ort(model_path, threads, o.reps, true, dump);
            const OrtTimes one = run_ort(model_path, 1, o.reps, true);
            const OrtTimes folded = run_ort(model_path, threads, o.reps, false);
            r.ortN = gb / (median(all.run_ms) / 1e3);
            r.ort1 = gb / (median(one.run_ms) / 1e3);
            r.ort_folded = gb / (median(folded.run_ms) / 1e3);
            std::ifstream f(dump, std::ios::binary);
            f.read(reinterpret_cast<char *>(out.get()), std::streamsize(out_bytes));
            r.ort_matches = f.gcount() == std::streamsize(out_bytes) && f.peek() == EOF &&
                            testkit::first_difference(out.get(), want.get(), elements,
                                                      testkit::Nans::any) == elements;
        } catch (const Error &e) {
            r.notes.push_back(std::string("onnxruntime: ") + e.what());
        }

    ours(0);  // warm-up
    ours(1);
    std::vector<double> t1, tn, tl, te;
    for (int i = 0; i < o.reps; ++i) {  // interleaved, so all see the same machine state
        t1.push_back(seconds([&] { ours(1); }));
        tn.push_back(seconds([&] { ours(0); }));
        if (llama) tl.push_back(seconds([&] { llama(in.data(), out.get(), int64_t(elements)); }));
        if (session) te.push_back(seconds([&] { session->run(); }));
    }
    r.ours1 = gb / median(t1);
    r.oursN = gb / median(tn);
    if (llama) r.llama = gb / median(tl);
    if (session) r.exec = gb / median(te);
    return r;
}

// Median onnxruntime session creation (default options: constant folding on) over 5 processes
// for testdata/sample.gguf exported with `options`, or why it could not be measured.
std::string sample_session(const onnx_export::Options &options, const std::string &path) {
    try {
        onnx_export::export_model(gguf::Model::open(GGUFTOOL_SAMPLE_GGUF), path, options);
        std::vector<double> ms;
        for (int i = 0; i < 5; ++i) ms.push_back(run_ort(path, 0, 1, false).session_ms);
        return fmt::format("{:.1f} ms", median(ms));
    } catch (const std::exception &e) {
        return std::string("n/a (") + e.what() + ")";
    }
}

nlohmann::json opt(const Speed &v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
std::string cell(const Speed &v) {
    return v ? fmt::format("{:.2f}", *v) : "n/a";
}
std::string times(const Speed &v) {
    return v ? fmt::format("{:.2f}x", *v) : "n/a";
}
Speed ratio(const Speed &a, const Speed &b) {
    return a && b ? Speed(*a / *b) : std::nullopt;
}
Speed geo(const std::vector<Row> &rows, Speed (*f)(const Row &)) {
    std::vector<double> v;
    for (const Row &r : rows)
        if (Speed x = f(r)) v.push_back(*x);
    return v.empty() ? std::nullopt : Speed(geomean(v));
}
Speed ortN_over_llama(const Row &r) {
    return ratio(r.ortN, r.llama);
}
Speed ort1_over_llama(const Row &r) {
    return ratio(r.ort1, r.llama);
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    const auto g = ggml_or_exit("bench_lower");
    if (std::string(GGUFTOOL_NODE).empty()) {
        std::fprintf(stderr, "bench_lower: no node binary was found at configure time\n");
        return 1;
    }
    char tmpl[] = "/tmp/bench_lower.XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("bench_lower: mkdtemp");
        return 1;
    }
    const std::string dir = tmpl;
    const unsigned threads = thread_count(0);

    std::vector<Row> rows;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const GgmlType t = GgmlType(id);
        if (!type_traits(id)->quantized || (o.format && *o.format != t)) continue;
        try {
            rows.push_back(run(*g, t, o, dir));
        } catch (const std::exception &e) {
            std::fprintf(stderr, "bench_lower: %s: %s\n", type_name(t), e.what());
            continue;
        }
        if (!o.json) std::fprintf(stderr, "%s done\n", rows.back().name.c_str());
    }
    onnx_export::Options lowered, dequantized;
    lowered.opset = o.opset;
    dequantized.mode = onnx_export::Mode::dequantized;
    const std::string session_lowered = sample_session(lowered, dir + "/sample_lowered.onnx");
    const std::string session_dequantized =
        sample_session(dequantized, dir + "/sample_dequantized.onnx");
    fs::remove_all(dir);
    const Speed geoN = geo(rows, ortN_over_llama), geo1 = geo(rows, ort1_over_llama);

    if (o.json) {
        nlohmann::json j;
        j["opset"] = o.opset;
        j["threads"] = threads;
        j["output_mib"] = o.mib;
        j["repetitions"] = o.reps;
        j["unit"] = "GB/s of FLOAT output (1e9 bytes), median";
        j["nodes"] = "lower::Report::nodes_added (both Reshapes included)";
        for (const Row &r : rows)
            j["formats"].push_back(
                {{"format", r.name},
                 {"nodes", r.nodes ? nlohmann::json(*r.nodes) : nlohmann::json(nullptr)},
                 {"ours_1_thread", r.ours1},
                 {"ours_all_threads", r.oursN},
                 {"executor_lowered_all_threads", opt(r.exec)},
                 {"ort_1_thread", opt(r.ort1)},
                 {"ort_all_threads", opt(r.ortN)},
                 {"ort_folded_all_threads", opt(r.ort_folded)},
                 {"llama", opt(r.llama)},
                 {"ort_all_over_llama", opt(ortN_over_llama(r))},
                 {"ort_1_over_llama", opt(ort1_over_llama(r))},
                 {"ort_matches",
                  r.ort_matches ? nlohmann::json(*r.ort_matches) : nlohmann::json(nullptr)},
                 {"notes", r.notes}});
        j["geomean_ort_all_over_llama"] = opt(geoN);
        j["geomean_ort_1_over_llama"] = opt(geo1);
        j["target_ort_all_over_llama"] = 0.5;
        j["ort_session_sample_lowered"] = session_lowered;
        j["ort_session_sample_dequantized"] = session_dequantized;
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }

    fmt::print(
        "lowered DequantizePacked (opset {}), GB/s of FLOAT output ({} MiB, median of {}), {} "
        "threads\n"
        "nodes: lower::Report::nodes_added (both Reshapes included); exec: our executor on the "
        "lowered model;\nort: onnxruntime on it, constant folding off (its runs in its own "
        "process, not interleaved with ours);\nort fold: constant folding on, so the graph is "
        "computed at "
        "session creation and a run only hands the output back (the ceiling through "
        "onnxruntime-node)\n\n",
        o.opset, o.mib, o.reps, threads);
    fmt::print("{:<8} {:>5} {:>8} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9}\n",
               "format", "nodes", "ours 1T", "ours allT", "exec allT", "ort 1T", "ort allT",
               "ort fold", "llama 1T", "ortN/llama", "ort1/llama", "ort=llama");
    for (const Row &r : rows)
        fmt::print(
            "{:<8} {:>5} {:>8.2f} {:>9.2f} {:>9} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9}\n",
            r.name, r.nodes ? std::to_string(*r.nodes) : "-", r.ours1, r.oursN, cell(r.exec),
            cell(r.ort1), cell(r.ortN), cell(r.ort_folded), cell(r.llama),
            times(ortN_over_llama(r)), times(ort1_over_llama(r)),
            r.ort_matches ? (*r.ort_matches ? "ok" : "MISMATCH") : "-");
    fmt::print("\nnotes:\n");
    for (const Row &r : rows)
        for (const std::string &n : r.notes) fmt::print("  {}: {}\n", r.name, n);
    fmt::print(
        "\ngeomean over formats: ort allT / llama {}, ort 1T / llama {} (target: ort allT / llama "
        ">= 0.50x: {})\n",
        times(geoN), times(geo1),
        !geoN          ? "not measured"
        : *geoN >= 0.5 ? "met"
                       : "NOT met");
    fmt::print(
        "onnxruntime session creation (default options), testdata/sample.gguf, median of 5: "
        "to-onnx --opset {}: {}; --mode dequantized: {}\n",
        o.opset, session_lowered, session_dequantized);
    return 0;
}
