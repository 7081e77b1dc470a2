// Opening and listing a large GGUF file: our reader against llama.cpp's gguf_init_from_file, in the
// same run on the same file. The file (generated under /tmp) has 10,000 tensors and a
// 150,000-entry string array, like the tokenizer of a large-vocabulary model.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

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
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

uint64_t list_file(const gguf::File &f) {
    uint64_t sum = 0;
    for (const auto &e : f.metadata()) sum += e.key.size() + static_cast<uint64_t>(e.value.type());
    for (const auto &t : f.tensors()) sum += t.name.size() + t.bytes + t.offset;
    return sum;
}

}  // namespace

int main() {
    const auto lib = reference::ggml();
    if (!lib || !lib->gguf_init_from_file) {
        fmt::print(stderr, "llama.cpp's libggml-base.so is not available\n");
        return 1;
    }
    const char *tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/gguftool-bench-XXXXXX";
    if (!::mkdtemp(dir.data())) return 1;
    const std::string path = dir + "/many_tensors.gguf";
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
    if (!std::getenv("KEEP")) std::filesystem::remove_all(dir);

    fmt::print("gguftool File::open + list tensors and keys  {:9.3f} ms (median of 21)\n", ours);
    fmt::print("gguftool Model::open + list tensors and keys {:9.3f} ms (median of 21)\n",
               ours_model);
    fmt::print("llama.cpp gguf_init_from_file(no_alloc)      {:9.3f} ms (median of 7)\n", llama);
    fmt::print("speed-up (llama.cpp / File::open): {:.1f}x\n", llama / ours);
    return sink == 0;  // keeps the work observable
}
