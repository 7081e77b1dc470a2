// `gguftool dump --values N` and `--stats`, checked against llama.cpp's dequantize_row_* of the
// same bytes (read from the file by llama.cpp's reader).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "cli_support.hpp"

namespace gguftool::test {
namespace {

using nlohmann::json;

// The JSON numbers of `values` are the decoded floats exactly (shortest round-trip text).
void expect_values(const json &values, const std::vector<float> &want, size_t n,
                   const std::string &name) {
    ASSERT_EQ(values.size(), std::min(n, want.size())) << name;
    for (size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(want[i])) {
            EXPECT_TRUE(values[i].is_null()) << name << "[" << i << "]";
            continue;
        }
        ASSERT_TRUE(values[i].is_number()) << name << "[" << i << "]";
        const float got = float(values[i].get<double>());
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want[i]))
            << name << "[" << i << "]: " << got << " vs llama.cpp " << want[i];
    }
}

template <class T>
RefStats stats_of(const std::vector<T> &v) {
    return ref_stats(std::vector<double>(v.begin(), v.end()));
}

void expect_stats(const json &s, const RefStats &want, uint64_t count, const std::string &name) {
    EXPECT_EQ(s["count"].get<uint64_t>(), count) << name;
    EXPECT_EQ(s["nan"].get<uint64_t>(), want.nan) << name;
    EXPECT_EQ(s["inf"].get<uint64_t>(), want.inf) << name;
    EXPECT_EQ(s["finite"].get<uint64_t>(), want.finite) << name;
    EXPECT_EQ(s["min"].get<double>(), want.min) << name;
    EXPECT_EQ(s["max"].get<double>(), want.max) << name;
    EXPECT_TRUE(near_rel(s["mean"].get<double>(), want.mean, want.std))
        << name << ": mean " << s["mean"] << " vs " << want.mean;
    EXPECT_TRUE(near_rel(s["std"].get<double>(), want.std))
        << name << ": std " << s["std"] << " vs " << want.std;
}

// Every tensor of `path`: --values and --stats against llama.cpp's decoding. Returns how many
// tensors were compared.
size_t expect_values_and_stats_match_llama(const std::string &path, size_t n) {
    const json doc = dump_json({"--values", std::to_string(n), "--stats", path});
    const std::vector<LlamaTensorView> ref = llama_tensors(path);
    EXPECT_EQ(doc["tensors"].size(), ref.size());
    size_t compared = 0;
    for (size_t i = 0; i < ref.size() && i < doc["tensors"].size(); ++i) {
        const json &t = doc["tensors"][i];
        EXPECT_EQ(t["name"], ref[i].name);
        const std::vector<float> want = llama_decode(llama(), GgmlType(ref[i].type), ref[i].bytes);
        EXPECT_FALSE(want.empty()) << ref[i].name << ": llama.cpp cannot decode it";
        if (want.empty()) continue;
        EXPECT_FALSE(t.contains("decode_error")) << ref[i].name << ": " << t["decode_error"];
        if (!t.contains("values") || !t.contains("stats")) {
            ADD_FAILURE() << ref[i].name << " has no values or stats";
            continue;
        }
        expect_values(t["values"], want, n, ref[i].name);
        expect_stats(t["stats"], ref_stats(want), want.size(), ref[i].name);
        ++compared;
    }
    return compared;
}

TEST(DumpValues, SampleMatchesLlamaDequantize) {
    ASSERT_NE(ggml(), nullptr);
    EXPECT_EQ(expect_values_and_stats_match_llama(kSample, 300), 21u);
}

TEST(DumpValues, SampleF32AndQ8_0Tensors) {
    ASSERT_NE(ggml(), nullptr);
    // The brief's two named cases, through --tensor: an f32 norm and the q8_0 attention output.
    const json doc = dump_json({"--values", "1000", "--tensor", "blk.0.attn_norm.weight",
                                "--tensor", "blk.0.attn_output.weight", kSample});
    ASSERT_EQ(doc["tensors"].size(), 2u);
    for (const LlamaTensorView &t : llama_tensors(kSample)) {
        for (const json &j : doc["tensors"]) {
            if (j["name"] != t.name) continue;
            EXPECT_EQ(j["type"], t.type == int(GgmlType::f32) ? "f32" : "q8_0");
            expect_values(j["values"], llama_decode(llama(), GgmlType(t.type), t.bytes), 1000,
                          t.name);
        }
    }
}

// Every type llama.cpp can decode: one tensor quantized by llama.cpp and one of arbitrary bytes
// (which reach codes a quantizer never writes, and NaN/Inf scales).
TEST(DumpValues, EveryQuantizedTypeMatchesLlamaDequantize) {
    const reference::Ggml *g = ggml();
    ASSERT_NE(g, nullptr);
    TempDir dir;
    const std::string path = dir.file("all-types.gguf");
    std::vector<LlamaTensor> tensors;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const TypeTraits &tt = *type_traits(id);
        const auto type = GgmlType(id);
        if (tt.removed || (tt.quantized && !g->dequantize_row[id]) ||
            (!tt.quantized && type != GgmlType::f32 && type != GgmlType::f16 &&
             type != GgmlType::bf16))
            continue;
        const int64_t ne0 = 512, rows = 3;
        const uint64_t n = uint64_t(ne0 * rows);
        tensors.push_back({std::string("t.") + tt.name + ".random",
                           type,
                           {ne0, rows},
                           filler(*row_bytes(type, n), id)});
        // Quantizers whose first use builds search tables for many seconds (ggml's
        // iq2xs_init_impl) are left out: their formats are covered by the random tensor.
        if (type == GgmlType::iq2_xxs || type == GgmlType::iq2_xs || type == GgmlType::iq2_s ||
            type == GgmlType::iq1_s || type == GgmlType::iq1_m)
            continue;
        std::vector<float> w = test_weights(n, id, 0.5f);
        std::vector<uint8_t> bytes;
        if (type == GgmlType::q8_k) {  // not in ggml_quantize_chunk: its reference row quantizer
            bytes.resize(*row_bytes(type, n));
            g->quantize_row_ref[id](w.data(), bytes.data(), int64_t(n));
        } else {
            bytes = llama_quantize(type, w, ne0);
        }
        tensors.push_back({std::string("t.") + tt.name, type, {ne0, rows}, std::move(bytes)});
    }
    ASSERT_GE(tensors.size(), 2 * 29u - 5) << "llama.cpp lacks decoders it should have";
    write_with_llama(llama(), path, tensors);
    EXPECT_EQ(expect_values_and_stats_match_llama(path, 700), tensors.size());
}

// Plain integer and f64 tensors: the values are the ones written (llama.cpp has no decoder to
// compare with); i64 must stay exact beyond 2^53.
TEST(DumpValues, IntegerAndF64TensorsAreExact) {
    ASSERT_NE(ggml(), nullptr);
    TempDir dir;
    const std::string path = dir.file("ints.gguf");
    const size_t n = 40;
    std::vector<int64_t> ints(n);
    for (size_t i = 0; i < n; ++i) ints[i] = int64_t(i * 37 % 201) - 100;
    std::vector<double> f64(n);
    for (size_t i = 0; i < n; ++i) f64[i] = double(i) * 0.1 - 3.0;
    const auto pack = [&](auto sample) {
        using T = decltype(sample);
        std::vector<uint8_t> b(n * sizeof(T));
        for (size_t i = 0; i < n; ++i) {
            T v = T(ints[i]);
            if constexpr (std::is_same_v<T, double>) v = f64[i];
            std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
        }
        return b;
    };
    std::vector<uint8_t> i64 = pack(int64_t());
    const int64_t big = (int64_t(1) << 62) + 1;  // not representable as a double
    std::memcpy(i64.data(), &big, 8);
    write_with_llama(llama(), path,
                     {{"i8", GgmlType::i8, {int64_t(n)}, pack(int8_t())},
                      {"i16", GgmlType::i16, {int64_t(n)}, pack(int16_t())},
                      {"i32", GgmlType::i32, {int64_t(n)}, pack(int32_t())},
                      {"i64", GgmlType::i64, {int64_t(n)}, i64},
                      {"f64", GgmlType::f64, {int64_t(n)}, pack(double())}});
    const json doc = dump_json({"--values", "100", "--stats", path});
    ASSERT_EQ(doc["tensors"].size(), 5u);
    for (const json &t : doc["tensors"]) {
        const std::string name = t["name"];
        ASSERT_EQ(t["values"].size(), n) << name;
        if (name == "f64") {
            for (size_t i = 0; i < n; ++i) EXPECT_EQ(t["values"][i].get<double>(), f64[i]);
            expect_stats(t["stats"], stats_of(f64), n, name);
            continue;
        }
        for (size_t i = 0; i < n; ++i) {
            const int64_t want = name == "i64" && i == 0 ? big : ints[i];
            EXPECT_EQ(t["values"][i].get<int64_t>(), want) << name << "[" << i << "]";
        }
        if (name != "i64") expect_stats(t["stats"], stats_of(ints), n, name);
    }
}

// NaN and Inf are counted and kept out of min/max/mean/std; JSON shows them as null.
TEST(DumpValues, NanAndInfAreCountedApart) {
    ASSERT_NE(ggml(), nullptr);
    TempDir dir;
    const std::string path = dir.file("nonfinite.gguf");
    std::vector<float> v = test_weights(64, 7);
    v[3] = NAN;
    v[10] = INFINITY;
    v[11] = -INFINITY;
    v[40] = NAN;
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    write_with_llama(llama(), path, {{"x", GgmlType::f32, {64}, bytes}});
    const json doc = dump_json({"--values", "64", "--stats", path});
    const json &t = doc["tensors"][0];
    expect_values(t["values"], v, 64, "x");
    const RefStats want = ref_stats(v);
    EXPECT_EQ(want.nan, 2u);
    EXPECT_EQ(want.inf, 2u);
    expect_stats(t["stats"], want, 64, "x");

    const RunResult text = run_gguftool({"dump", "--values", "12", "--stats", path});
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("nan"), std::string::npos);
    EXPECT_NE(text.out.find("-inf"), std::string::npos);
}

// Tensors larger than one decoding chunk (2^20 values): statistics and values across the seam.
TEST(DumpValues, LargeTensorsAcrossChunks) {
    ASSERT_NE(ggml(), nullptr);
    TempDir dir;
    const std::string path = dir.file("large.gguf");
    const int64_t ne0 = 4096, rows = 300;  // 1,228,800 values
    const std::vector<float> w = test_weights(size_t(ne0 * rows), 99, 0.1f);
    std::vector<uint8_t> f32(w.size() * 4);
    std::memcpy(f32.data(), w.data(), f32.size());
    write_with_llama(
        llama(), path,
        {{"big.q4_K", GgmlType::q4_k, {ne0, rows}, llama_quantize(GgmlType::q4_k, w, ne0)},
         {"big.f32", GgmlType::f32, {ne0, rows}, f32}});
    const json doc = dump_json({"--stats", path});
    const std::vector<LlamaTensorView> ref = llama_tensors(path);
    ASSERT_EQ(ref.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const std::vector<float> want = llama_decode(llama(), GgmlType(ref[i].type), ref[i].bytes);
        expect_stats(doc["tensors"][i]["stats"], ref_stats(want), want.size(), ref[i].name);
    }
    // The values just past the first chunk.
    const size_t n = (size_t(1) << 20) + 300;
    const json vals = dump_json({"--values", std::to_string(n), "--tensor", "big.q4_K", path});
    expect_values(vals["tensors"][0]["values"],
                  llama_decode(llama(), GgmlType(ref[0].type), ref[0].bytes), n, "big.q4_K");
}

}  // namespace
}  // namespace gguftool::test
