// Side-by-side dequantization benchmark: for every quantized format, a tensor decoding to 64 MiB of
// FLOAT is decoded by us on one thread and on all threads, and by llama.cpp's dequantize_row_<type>
// (one thread, as it is written), on the same buffers in the same run; memset of the output buffer
// gives a store-bandwidth ceiling, and a non-temporal fill on one thread and split over all
// threads shows how far more threads can go. Reports GB/s of output (median of the repetitions)
// and, per format, whether the single-thread goal is met: at least 2x llama.cpp, or at least
// 0.85x the memset ceiling where llama.cpp already runs near it.
//
//   bench_dequant [--json] [--format NAME] [--target NAME] [--reps N] [--mib N]
#include <fmt/format.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "formats/dispatch.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

namespace {

using namespace gguftool;
using namespace gguftool::bench;

struct Options : FormatOptions {
    std::string target;
    Options() { mib = 64; }
};

struct Row {
    std::string name;
    double ours1 = 0, oursN = 0, memset = 0, zeros = 0, stream1 = 0, streamN = 0;
    std::optional<double> llama;  // no llama.cpp decoder for q8_1
    std::optional<bool> matches;  // our output equals llama.cpp's, bit for bit (NaN = NaN)

    // The single-thread goal: 2x llama.cpp, or 0.85x the memset ceiling of the same run (which
    // is all a decoder can reach where llama.cpp already runs near it).
    bool goal_met() const {
        return (llama && ours1 >= 2 * *llama) || ours1 >= kGoalOfMemset * memset;
    }
    static constexpr double kGoalOfMemset = 0.85;
};

[[noreturn]] void usage(const std::string &why) {
    bench::usage("bench_dequant", "[--target NAME]", why);
}

Options parse(int argc, char **argv) {
    Options o;
    parse_format_options(argc, argv, "bench_dequant", "[--target NAME]", o,
                         [&](const std::string &name, const std::string &value) {
                             if (name != "--target") return false;
                             o.target = value;
                             return true;
                         });
    return o;
}

void force_target(const std::string &name) {
    for (int64_t t : simd::usable_targets()) {
        std::string tn = hwy::TargetName(t);
        if (strcasecmp(tn.c_str(), name.c_str()) == 0) {
            simd::force_target(t);
            return;
        }
    }
    std::string have;
    for (int64_t t : simd::usable_targets()) have += std::string(" ") + hwy::TargetName(t);
    usage("target " + name + " is not available here (have:" + have + ")");
}

// Fills [p, p + n) with 1.0f using non-temporal stores (p 64-byte aligned, n a multiple of 64), 32
// bytes at a time where the CPU has AVX (16-byte stores do not reach one core's full store rate).
// Not zeros: on this VM two cores write zeros about twice as fast as any other data, and decoder
// output is other data.
#if defined(__x86_64__)
__attribute__((target("avx"))) void stream_fill_avx(uint8_t *p, size_t n) {
    const __m256i one = _mm256_set1_epi32(0x3f800000);
    for (size_t i = 0; i < n; i += 32) _mm256_stream_si256(reinterpret_cast<__m256i *>(p + i), one);
    _mm_sfence();
}
#endif

void stream_fill(uint8_t *p, size_t n) {
#if defined(__x86_64__)
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx) return stream_fill_avx(p, n);
    const __m128i one = _mm_set1_epi32(0x3f800000);
    for (size_t i = 0; i < n; i += 16) _mm_stream_si128(reinterpret_cast<__m128i *>(p + i), one);
    _mm_sfence();
#else
    std::fill_n(reinterpret_cast<float *>(p), n / 4, 1.0f);
#endif
}

Row run(const reference::Ggml &g, GgmlType t, const Options &o) {
    const TypeTraits &tt = traits(t);
    const size_t elements = o.mib * (size_t(1) << 20) / 4 / tt.block_size * tt.block_size;
    const size_t out_bytes = elements * 4;
    const std::vector<uint8_t> in = make_input(g, t, elements / tt.block_size);
    const AlignedFloats out = aligned_floats(elements);
    const AlignedFloats check = aligned_floats(elements);
    const auto llama = g.dequantize_row[static_cast<uint32_t>(t)];

    Row r;
    r.name = tt.name;
    auto ours = [&](unsigned threads) { quant::decode_f32(t, in, elements, out.get(), threads); };
    auto theirs = [&] { llama(in.data(), out.get(), int64_t(elements)); };
    // The ceiling: memset of the output with bytes that are not zero. On this VM zeros are
    // written 2-3x as fast as any other data (memset 0 measured 44-75 GB/s on one thread, memset
    // 0x3f and plain or non-temporal stores of 1.0f 23-28 GB/s), and decoder output is other
    // data, so a zero fill is no ceiling for it; it is shown beside it (`zeros`).
    auto fill = [&] { std::memset(out.get(), 0x3f, out_bytes); };
    auto fill_zeros = [&] { std::memset(out.get(), 0, out_bytes); };
    // The store ceiling with every core writing, next to one core's: if all cores together write
    // no faster than one, no decoder can scale beyond it either. Non-temporal stores, as the
    // decoders use for outputs this large (glibc's memset switches store kind with the size,
    // so memset of half the buffer per thread would measure something else).
    const unsigned threads = thread_count(0);
    auto stream = [&](unsigned n_threads) {
        auto *bytes = reinterpret_cast<uint8_t *>(out.get());
        const size_t part = out_bytes / n_threads / 64 * 64;
        std::vector<std::thread> pool;
        for (unsigned k = 0; k < n_threads; ++k) {
            const size_t begin = k * part, end = k + 1 == n_threads ? out_bytes : begin + part;
            pool.emplace_back([=] { stream_fill(bytes + begin, end - begin); });
        }
        for (std::thread &t : pool) t.join();
    };

    // Warm-up (pages faulted in, thread pool started) and a bit-exactness check on this buffer.
    fill();
    ours(0);
    ours(1);
    if (llama) {
        llama(in.data(), check.get(), int64_t(elements));
        r.matches = testkit::first_difference(out.get(), check.get(), elements,
                                              testkit::Nans::any) == elements;
    }

    std::vector<double> t1, tn, tl, tm, tz, ts1, tsn;
    for (int i = 0; i < o.reps; ++i) {  // interleaved, so all see the same machine state
        t1.push_back(seconds([&] { ours(1); }));
        tn.push_back(seconds([&] { ours(0); }));
        if (llama) tl.push_back(seconds(theirs));
        tm.push_back(seconds(fill));
        tz.push_back(seconds(fill_zeros));
        ts1.push_back(seconds([&] { stream(1); }));
        tsn.push_back(seconds([&] { stream(threads); }));
    }
    const double gb = double(out_bytes) / 1e9;
    r.ours1 = gb / median(t1);
    r.oursN = gb / median(tn);
    if (llama) r.llama = gb / median(tl);
    r.memset = gb / median(tm);
    r.zeros = gb / median(tz);
    r.stream1 = gb / median(ts1);
    r.streamN = gb / median(tsn);
    return r;
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    const auto g = ggml_or_exit("bench_dequant");
    if (!o.target.empty()) force_target(o.target);
    const unsigned threads = thread_count(0);

    std::vector<GgmlType> types;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
        if (type_traits(id)->quantized && (!o.format || *o.format == GgmlType(id)))
            types.push_back(GgmlType(id));

    std::vector<Row> rows;
    std::vector<double> vs_llama, scaling, store_scaling;
    for (GgmlType t : types) {
        try {
            rows.push_back(run(*g, t, o));
        } catch (const std::exception &e) {
            std::fprintf(stderr, "bench_dequant: %s: %s\n", type_name(t), e.what());
            continue;
        }
        const Row &r = rows.back();
        if (r.llama) vs_llama.push_back(r.ours1 / *r.llama);
        scaling.push_back(r.oursN / r.ours1);
        store_scaling.push_back(r.streamN / r.stream1);
        if (!o.json) std::fprintf(stderr, "%s done\n", r.name.c_str());
    }

    if (o.json) {
        nlohmann::json j;
        j["target"] = quant::active_target();
        j["threads"] = threads;
        j["output_mib"] = o.mib;
        j["repetitions"] = o.reps;
        j["unit"] = "GB/s of FLOAT output (1e9 bytes), median";
        for (const Row &r : rows) {
            nlohmann::json x = {{"format", r.name},
                                {"ours_1_thread", r.ours1},
                                {"ours_all_threads", r.oursN},
                                {"memset", r.memset},
                                {"memset_zeros", r.zeros},
                                {"stream_1_thread", r.stream1},
                                {"stream_all_threads", r.streamN},
                                {"all_over_1", r.oursN / r.ours1},
                                {"matches_llama",
                                 r.matches ? nlohmann::json(*r.matches) : nlohmann::json(nullptr)}};
            x["llama"] = r.llama ? nlohmann::json(*r.llama) : nlohmann::json(nullptr);
            x["ours_1_over_llama"] =
                r.llama ? nlohmann::json(r.ours1 / *r.llama) : nlohmann::json(nullptr);
            x["ours_1_over_memset"] = r.ours1 / r.memset;
            x["goal_met"] = r.goal_met();
            j["formats"].push_back(x);
        }
        j["geomean_ours_1_over_llama"] =
            vs_llama.empty() ? nlohmann::json(nullptr) : nlohmann::json(geomean(vs_llama));
        j["geomean_all_over_1"] = geomean(scaling);
        j["geomean_stream_all_over_1"] = geomean(store_scaling);
        j["goal"] =
            fmt::format("ours_1_thread >= 2x llama or >= {:.2f}x memset", Row::kGoalOfMemset);
        j["goal_met_formats"] =
            std::count_if(rows.begin(), rows.end(), [](const Row &r) { return r.goal_met(); });
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }

    std::printf(
        "dequantization, GB/s of FLOAT output (%zu MiB, median of %d), target %s, %u threads\n"
        "memset 1T: memset of the output with 0x3f bytes (the ceiling); zeros 1T: with zeros\n"
        "goal: ours 1T >= 2x llama 1T, or >= %.2fx memset 1T\n\n",
        o.mib, o.reps, quant::active_target(), threads, Row::kGoalOfMemset);
    std::printf("%-8s %9s %9s %9s %10s %8s %9s %10s %9s %9s %10s  %s\n", "format", "ours 1T",
                "ours allT", "llama 1T", "ours/llama", "allT/1T", "memset 1T", "ours/memset",
                "zeros 1T", "stream 1T", "stream allT", "goal");
    size_t met = 0;
    for (const Row &r : rows) {
        const std::string llama = r.llama ? fmt::format("{:.2f}", *r.llama) : "-";
        const std::string ratio = r.llama ? fmt::format("{:.2f}x", r.ours1 / *r.llama) : "-";
        met += r.goal_met();
        std::printf("%-8s %9.2f %9.2f %9s %10s %7.2fx %9.2f %10.2fx %9.2f %9.2f %10.2f  %s%s\n",
                    r.name.c_str(), r.ours1, r.oursN, llama.c_str(), ratio.c_str(),
                    r.oursN / r.ours1, r.memset, r.ours1 / r.memset, r.zeros, r.stream1, r.streamN,
                    r.goal_met() ? "met" : "NOT met",
                    r.matches.value_or(true) ? "" : "  MISMATCH vs llama.cpp");
    }
    const std::string vs = vs_llama.empty() ? "-" : fmt::format("{:.2f}x", geomean(vs_llama));
    std::printf(
        "\ngeomean ours 1T / llama: %s   geomean allT / 1T: %.2fx   stream allT / 1T: "
        "%.2fx\ngoal (>= 2x llama or >= %.2fx memset) met by %zu of %zu formats\n",
        vs.c_str(), geomean(scaling), geomean(store_scaling), Row::kGoalOfMemset, met, rows.size());
    return 0;
}
