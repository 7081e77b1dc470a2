// gguftool run: execute an ONNX graph (DequantizePacked, Unpack and the standard operators the
// converter emits) and write, show, compare or time its outputs; or run ONNX node tests.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "commands.hpp"
#include "gguftool/runtime.hpp"
#include "output.hpp"
#include "run_compare.hpp"
#include "run_table.hpp"

namespace gguftool::cli {
namespace run {

namespace rt = gguftool::runtime;

struct Options {
    std::string model;
    std::vector<std::string> inputs;  // NAME=FILE
    std::string output_dir;
    std::string backend = "cpu";
    unsigned threads = 0;
    int device = 0;
    std::string compare;
    bool benchmark = false;
    std::string test_dir;
    bool exact = false;
    std::string weight_products = "fused";
};

// --weight-products: the RunOptions value of each spelling.
rt::WeightProducts weight_products(const std::string &name) {
    if (name == "float") return rt::WeightProducts::fused_float;
    if (name == "unfused") return rt::WeightProducts::unfused;
    return rt::WeightProducts::fused;
}

int usage(const std::string &what) {
    fmt::print(stderr, "gguftool run: {}\nRun with --help for more information.\n", what);
    return kExitUsage;
}

// The backend of --backend, --threads and --device; one other than the CPU says what it is on
// stderr (a device's name and what drives it), once.
std::unique_ptr<rt::Backend> make_backend(const Options &opt) {
    std::unique_ptr<rt::Backend> backend =
        rt::make_backend(opt.backend, {.threads = opt.threads, .device = opt.device});
    if (backend->name() != "cpu") fmt::print(stderr, "backend: {}\n", backend->description());
    return backend;
}

int run_tests(const Options &opt) {
    make_backend(opt);  // said once, and an unusable backend or device is an error before any test
    rt::RunOptions ro;
    ro.backend = opt.backend;
    ro.threads = opt.threads;
    ro.device = opt.device;
    ro.weight_products = weight_products(opt.weight_products);
    const std::vector<rt::NodeTestResult> results = rt::run_node_tests(opt.test_dir, opt.exact, ro);
    size_t passed = 0;
    for (const rt::NodeTestResult &r : results) {
        if (r.passed) {
            ++passed;
            fmt::print("PASS {}\n", r.name);
        } else {
            fmt::print("FAIL {}: {}\n", r.name, r.message);
        }
    }
    fmt::print("{} passed, {} failed\n", passed, results.size() - passed);
    return passed == results.size() ? kExitOk : kExitInvalid;
}

// The file an output is written to: its name with path separators replaced.
std::string output_file(const std::string &dir, const std::string &name) {
    std::string safe = name;
    for (char &c : safe)
        if (c == '/' || c == '\\' || c == '\0') c = '_';
    if (safe.empty() || safe == "." || safe == "..") safe = "_" + safe;
    return (std::filesystem::path(dir) / (safe + ".npy")).string();
}

// The summary row of an output: its first values, "..." when there are more.
void print_summary(const OutputTable &table, const std::string &name, const rt::Tensor &t) {
    constexpr uint64_t kShown = 8;
    std::string values;
    const uint64_t n = std::min<uint64_t>(kShown, t.elements());
    if (n > 0) {
        // The first values through a small Cast: floats as float (double for double), integers
        // as int64 (uint64 printed directly).
        const DataType as = t.dtype() == DataType::float64 ? DataType::float64
                            : is_floating(t.dtype())       ? DataType::float32
                                                           : DataType::int64;
        const rt::Tensor part = rt::Tensor::copy_of(
            t.dtype(), {int64_t(n)}, t.bytes().subspan(0, size_t(n * dtype_size(t.dtype()))));
        const rt::Tensor v = rt::cast_tensor(part, as);
        for (uint64_t i = 0; i < n; ++i) {
            if (t.dtype() == DataType::uint64)
                values += fmt::format(" {}", t.data_as<uint64_t>()[i]);
            else if (as == DataType::float64)
                values += fmt::format(" {}", v.data_as<double>()[i]);
            else if (as == DataType::float32)
                values += fmt::format(" {}", v.data_as<float>()[i]);
            else
                values += fmt::format(" {}", v.data_as<int64_t>()[i]);
        }
        if (t.elements() > n) values += " ...";
    }
    table.print_row(name, t, std::string_view(values).substr(values.empty() ? 0 : 1));
}

// Per original node the session lowered for its backend (NodeProfile::lowered_from): the device
// calls and time of the nodes it became, in the order the nodes ran.
void print_lowered_summary(const std::vector<rt::NodeProfile> &profile, bool calls) {
    std::vector<std::string> order;
    std::map<std::string, std::pair<uint64_t, double>> totals;  // calls, seconds
    for (const rt::NodeProfile &p : profile) {
        if (p.lowered_from.empty()) continue;
        auto [it, added] = totals.try_emplace(p.lowered_from, 0, 0.0);
        if (added) order.push_back(p.lowered_from);
        it->second.first += p.device_calls;
        it->second.second += p.seconds;
    }
    if (order.empty()) return;
    fmt::print("\nlowered for the backend ({} {}):\n", order.size(), plural(order.size(), "node"));
    for (const std::string &from : order) {
        const auto &[n, seconds] = totals.at(from);
        if (calls)
            fmt::print("  {}: {} {}, {:.3f} ms\n", from, n, plural(n, "call"), seconds * 1e3);
        else
            fmt::print("  {}: {:.3f} ms\n", from, seconds * 1e3);
    }
}

// The per-node table; a `backend` column for a backend other than the CPU (whose nodes may fall
// back to the CPU), a `calls` column when the backend launches device operators.
void print_benchmark(const std::vector<rt::NodeProfile> &profile, double total_seconds,
                     bool backends, bool calls) {
    size_t width = 9;  // "all nodes"
    for (const rt::NodeProfile &p : profile) width = std::max(width, p.node.size());
    width = std::min<size_t>(width, 48);
    const auto row = [&](std::string_view node, std::string_view op, double seconds, uint64_t bytes,
                         std::string_view rate, std::string_view backend, uint64_t n) {
        fmt::print("{:<{}}  {:<20}  {:>10.3f}  {:>12}  {:>8}", node, width, op, seconds * 1e3,
                   bytes, rate);
        if (backends) fmt::print("  {:<7}", backend);
        if (calls) fmt::print("  {:>6}", n);
        fmt::print("\n");
    };
    fmt::print("\n{:<{}}  {:<20}  {:>10}  {:>12}  {:>8}{}{}\n", "node", width, "op", "time ms",
               "bytes", "GB/s", backends ? fmt::format("  {:<7}", "backend") : "",
               calls ? fmt::format("  {:>6}", "calls") : "");
    double node_seconds = 0;
    uint64_t node_bytes = 0, node_calls = 0;
    for (const rt::NodeProfile &p : profile) {
        const uint64_t bytes = p.bytes_read + p.bytes_written;
        node_seconds += p.seconds;
        node_bytes += bytes;
        node_calls += p.device_calls;
        const std::string rate =
            bytes && p.seconds > 0 ? fmt::format("{:.2f}", bytes / p.seconds / 1e9) : "-";
        row(p.node, p.op, p.seconds, bytes, rate, p.backend, p.device_calls);
    }
    const std::string rate = node_bytes && node_seconds > 0
                                 ? fmt::format("{:.2f}", node_bytes / node_seconds / 1e9)
                                 : "-";
    row("all nodes", "", node_seconds, node_bytes, rate, "", node_calls);
    fmt::print("wall time (load excluded, output handling included): {:.3f} ms\n",
               total_seconds * 1e3);
    print_lowered_summary(profile, calls);
}

int run_model(const Options &opt) {
    std::vector<std::pair<std::string, std::string>> input_files;  // NAME, FILE
    for (const std::string &spec : opt.inputs) {
        const size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            return usage(fmt::format("--input \"{}\" is not NAME=FILE", spec));
        input_files.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    }
    const rt::Model model = rt::Model::load(opt.model);

    // Inputs: .npy or .pb. A bfloat16 input also accepts raw uint16 words.
    rt::Inputs inputs;
    for (const auto &[name, file] : input_files) {
        rt::Tensor t = rt::read_tensor_file(file);
        for (const rt::ValueInfo &v : model.inputs())
            if (v.name == name && v.dtype == DataType::bfloat16 && t.dtype() == DataType::uint16)
                t = rt::Tensor::view(DataType::bfloat16, t.shape(), t.bytes(), t.owner());
        if (!inputs.emplace(name, std::move(t)).second)
            return usage(fmt::format("--input {} is given twice", name));
    }

    std::unique_ptr<gguf::Model> gguf;
    if (!opt.compare.empty()) gguf = std::make_unique<gguf::Model>(gguf::Model::open(opt.compare));
    if (!opt.output_dir.empty()) std::filesystem::create_directories(opt.output_dir);

    rt::Session session(model, make_backend(opt),
                        rt::RunOptions{.threads = opt.threads,
                                       .profile = opt.benchmark,
                                       .weight_products = weight_products(opt.weight_products)});
    // Where the nodes run: on the backend, or on the CPU for what the backend cannot run.
    if (session.backend().name() != "cpu")
        fmt::print(stderr, "{}\n", rt::placement_summary(session.placement()));
    CompareTally tally;
    std::set<std::string> files;
    // The table of outputs: the summary (the default), or --compare's results.
    const bool summary = opt.output_dir.empty() && !gguf;
    const OutputTable table(model);
    if (gguf)
        table.print_header(kCompareHeader);
    else if (summary)
        table.print_header("first values");
    const auto start = std::chrono::steady_clock::now();
    session.run(inputs, [&](const std::string &name, const rt::Tensor &value) {
        if (!opt.output_dir.empty()) {
            const std::string file = output_file(opt.output_dir, name);
            if (!files.insert(file).second)
                throw Error(file, std::nullopt,
                            fmt::format("two outputs map to this file (\"{}\")", name));
            rt::write_npy(file, value);
        }
        if (gguf) compare_output(table, *gguf, name, value, opt.threads, tally);
        if (summary) print_summary(table, name, value);
        std::fflush(stdout);
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!opt.output_dir.empty())
        fmt::print("wrote {} {} to {}\n", files.size(), plural(files.size(), "output"),
                   opt.output_dir);
    if (gguf)
        fmt::print("compare: {} match, {} differ, {} not compared\n", tally.matched,
                   tally.differing, tally.not_compared);
    if (opt.benchmark)
        print_benchmark(session.profile(), seconds, session.backend().name() != "cpu",
                        session.backend().device_calls() > 0);
    return tally.differing ? kExitInvalid : kExitOk;
}

int run(const Options &opt) {
    if (!opt.test_dir.empty()) {
        if (!opt.model.empty()) return usage("give MODEL or --test-dir, not both");
        if (!opt.inputs.empty() || !opt.output_dir.empty() || !opt.compare.empty() || opt.benchmark)
            return usage(
                "--input, --output-dir, --compare and --benchmark do not apply to --test-dir");
        return run_tests(opt);
    }
    if (opt.model.empty()) return usage("MODEL (or --test-dir DIR) is required");
    if (opt.exact) return usage("--exact applies to --test-dir only");
    return run_model(opt);
}

}  // namespace run

Runner add_run(CLI::App &app) {
    auto opt = std::make_shared<run::Options>();
    auto *cmd = app.add_subcommand(kRunCommand.name, kRunCommand.summary);
    cmd->add_option("MODEL", opt->model, "ONNX model (external data is read beside it)");
    cmd->add_option("--input", opt->inputs,
                    "Bind graph input NAME to a .npy or .pb file (repeatable)")
        ->type_name("NAME=FILE")
        ->allow_extra_args(false);
    cmd->add_option("--output-dir", opt->output_dir, "Write every graph output as DIR/<name>.npy")
        ->type_name("DIR");
    cmd->add_option("--backend", opt->backend, "Execution backend")
        ->check(CLI::IsMember(runtime::backend_names()))
        ->capture_default_str();
    cmd->add_option("--threads", opt->threads, "Threads (0 = all cores)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    cmd->add_option("--device", opt->device, "Device number, for a backend with devices")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N")
        ->capture_default_str();
    cmd->add_option("--compare", opt->compare,
                    "Check each output against the GGUF tensor of the same name, bit for bit")
        ->type_name("MODEL.gguf");
    cmd->add_flag("--benchmark", opt->benchmark,
                  "Report the time and GB/s (and device calls) of each node");
    cmd->add_option("--test-dir", opt->test_dir,
                    "Run ONNX backend node tests: one test directory or a folder of them")
        ->type_name("DIR");
    cmd->add_flag("--exact", opt->exact, "With --test-dir: compare floats bit for bit");
    cmd->add_option("--weight-products", opt->weight_products,
                    "Products with DequantizePacked weights on the CPU: fused (int8 activations "
                    "where few rows), float (fused, bit for bit unfused) or unfused")
        ->check(CLI::IsMember({"fused", "float", "unfused"}))
        ->capture_default_str();
    return [opt] { return run::run(*opt); };
}

}  // namespace gguftool::cli
