// Opening and listing a large GGUF file: our reader against llama.cpp's gguf_init_from_file, in the
// same run on the same file. The file (generated under /tmp) has 10,000 tensors and a
// 150,000-entry string array, like the tokenizer of a large-vocabulary model.
//
// With --gguf-tools PATH (antirez/gguf-tools, built by hand: no package ships it) the whole
// programs too: `gguftool dump FILE` against `PATH show FILE`, each run 20 times, interleaved,
// stdout to /dev/null; the median wall times, their ratio (goal: at most 1.0) and the minor page
// faults. Both print the header, every key with its value (arrays shortened) and one line per
// tensor; dump adds its summary table.
//
// Usage: bench_gguf_open [--dir DIR] [--gguftool PATH] [--gguf-tools PATH]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_setup.hpp"
#include "bench_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/reference.hpp"

namespace {

using namespace gguftool;
using Clock = std::chrono::steady_clock;

constexpr int kTensors = 10000;
constexpr int kTokens = 150000;

void write_sample(const std::string &path) {
    gguf::Writer w;
    w.add("general.architecture", gguf::MetaValue::str("llama"));
    w.add("general.name", gguf::MetaValue::str("gguf_open benchmark"));
    w.add("llama.block_count", gguf::MetaValue::u32(kTensors / 10));
    w.add("llama.context_length", gguf::MetaValue::u32(8192));
    w.add("tokenizer.ggml.model", gguf::MetaValue::str("gpt2"));
    std::vector<std::string> tokens;
    tokens.reserve(kTokens);
    for (int i = 0; i < kTokens; ++i) tokens.push_back(fmt::format("tok_{}_{:x}", i, i * 7919));
    w.add("tokenizer.ggml.tokens", gguf::MetaValue::array_of(tokens));
    const std::vector<uint8_t> data(64 * 4, 0);
    for (int i = 0; i < kTensors; ++i)
        w.add_tensor(fmt::format("blk.{}.t{}.weight", i / 10, i % 10), GgmlType::f32, {64}, data);
    w.write(path);
}

template <class F>
double median_ms(int runs, F &&f) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return bench::median(t);
}

uint64_t list_file(const gguf::File &f) {
    uint64_t sum = 0;
    for (const auto &e : f.metadata()) sum += e.key.size() + static_cast<uint64_t>(e.value.type());
    for (const auto &t : f.tensors()) sum += t.name.size() + t.bytes + t.offset;
    return sum;
}

// `gguftool dump` against `gguf-tools show` on `path`, interleaved; false if either failed.
bool compare_with_gguf_tools(const std::string &gguftool, const std::string &gguf_tools,
                             const std::string &path) {
    constexpr int kRuns = 20;
    struct Contender {
        const char *label;
        std::vector<std::string> argv;
        std::vector<double> seconds, faults;
    };
    Contender c[] = {{"gguftool dump", {gguftool, "dump", path}, {}, {}},
                     {"gguf-tools show", {gguf_tools, "show", path}, {}, {}}};
    for (int r = 0; r < kRuns; ++r)
        for (Contender &x : c) {
            const bench::ChildRun run = bench::run_child(x.argv, true);
            if (run.status != 0) {
                fmt::print(stderr, "{} failed (exit {})\n", x.label, run.status);
                return false;
            }
            x.seconds.push_back(run.seconds);
            x.faults.push_back(double(run.minor_faults));
        }
    for (const Contender &x : c)
        fmt::print("{:<16} {:9.3f} ms wall (median of {}), {:5.0f} minor page faults\n", x.label,
                   1e3 * bench::median(x.seconds), kRuns, bench::median(x.faults));
    const double ratio = bench::median(c[0].seconds) / bench::median(c[1].seconds);
    fmt::print("gguftool dump / gguf-tools show: {:.2f}x wall (goal <= 1.0x: {})\n", ratio,
               ratio <= 1.0 ? "met" : "NOT met");
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    bench::Setup s;
    s.own = {{"--gguf-tools", ""}};
    if (const int rc = bench::setup(argc, argv, "bench_gguf_open", s, "[--gguf-tools PATH]"))
        return rc;
    const std::string gguf_tools = s.own["--gguf-tools"];
    const auto lib = reference::ggml();
    if (!lib || !lib->gguf_init_from_file) {
        fmt::print(stderr, "llama.cpp's libggml-base.so is not available\n");
        return 1;
    }
    const std::string path = s.dir + "/many_tensors.gguf";
    write_sample(path);
    fmt::print("file: {} ({:.1f} MB, {} tensors, {}-entry string array)\n", path,
               std::filesystem::file_size(path) / 1e6, kTensors, kTokens);

    uint64_t sink = 0;
    const double ours = median_ms(21, [&] { sink += list_file(*gguf::File::open(path)); });
    const double ours_model = median_ms(21, [&] {
        const gguf::Model m = gguf::Model::open(path);
        sink += list_file(m.first());
    });
    const double llama = median_ms(7, [&] {
        reference::gguf_context *ctx = lib->gguf_init_from_file(path.c_str(), {true, nullptr});
        if (!ctx) throw std::runtime_error("llama.cpp could not read the benchmark file");
        sink += static_cast<uint64_t>(lib->gguf_get_n_tensors(ctx));
        lib->gguf_free(ctx);
    });

    fmt::print("gguftool File::open + list tensors and keys  {:9.3f} ms (median of 21)\n", ours);
    fmt::print("gguftool Model::open + list tensors and keys {:9.3f} ms (median of 21)\n",
               ours_model);
    fmt::print("llama.cpp gguf_init_from_file(no_alloc)      {:9.3f} ms (median of 7)\n", llama);
    fmt::print("speed-up (llama.cpp / File::open): {:.1f}x\n", llama / ours);
    const bool ok = gguf_tools.empty() || compare_with_gguf_tools(s.gguftool, gguf_tools, path);
    if (!std::getenv("KEEP")) std::filesystem::remove_all(s.dir);
    if (!ok) return 1;
    return sink == 0;  // keeps the work observable
}
