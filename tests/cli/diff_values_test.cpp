// `gguftool diff`, tensors: self-diffs, the numbers against an independent computation on
// llama.cpp's decoding, the edge cases (NaN, zero vectors, element counts, undecodable data) and
// the first different block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "diff_support.hpp"
#include "gguftool/byte_order.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using gguf::MetaValue;
using nlohmann::json;

TEST(DiffValues, SampleDiffedWithItselfIsIdentical) {
    const RunResult text = run_gguftool({"diff", kSample, kSample});
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("a and b are identical"), std::string::npos) << text.out;

    const DiffRun d = diff_json({kSample, kSample});
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(d.doc["identical"], true);
    ASSERT_EQ(d.doc["tensors"].size(), 21u);
    for (const json &t : d.doc["tensors"]) {
        EXPECT_EQ(t["status"], "same") << t;
        EXPECT_EQ(t["mismatches"], 0);
        EXPECT_EQ(t["max_abs_diff"], 0.0);
        EXPECT_EQ(t["nmse"], 0.0);
        EXPECT_EQ(t["cosine"], 1.0);
        EXPECT_TRUE(t["first_different_block"].is_null());
    }
}

TEST(DiffValues, LlamaQuantizedModelDiffedWithItselfIsIdentical) {
    const QuantizedModel &m = quantized_model();
    const RunResult r = run_gguftool({"diff", m.q4km, m.q4km});
    EXPECT_EQ(r.status, 0) << r.err << r.out;
}

// The numbers of one tensor, computed here from llama.cpp's decoding, in long double, in element
// order, by the definitions of the man page.
struct Expected {
    long double d2 = 0, a2 = 0, b2 = 0, ab = 0;
    double max_abs = 0;
    uint64_t mismatches = 0;
};

Expected expected_numbers(const std::vector<float> &a, const std::vector<float> &b) {
    Expected e;
    for (size_t i = 0; i < a.size(); ++i) {
        const long double x = a[i], y = b[i];
        e.a2 += x * x, e.b2 += y * y, e.ab += x * y;
        if (a[i] == b[i]) continue;
        ++e.mismatches;
        e.d2 += (x - y) * (x - y);
        e.max_abs = std::max(e.max_abs, std::fabs(double(a[i]) - double(b[i])));
    }
    return e;
}

TEST(DiffValues, NumbersMatchAnIndependentComputationOnLlamaDecoding) {
    const QuantizedModel &m = quantized_model();
    const DiffRun d = diff_json({m.q4km, m.f16});
    ASSERT_EQ(d.status, 1) << d.err;
    EXPECT_EQ(d.doc["identical"], false);

    std::map<std::string, LlamaTensorView> f16;
    for (LlamaTensorView &t : llama_tensors(m.f16)) f16.emplace(t.name, std::move(t));
    const std::vector<LlamaTensorView> q = llama_tensors(m.q4km);
    ASSERT_EQ(q.size(), 21u);
    std::map<std::string, int> types;
    const reference::Ggml &g = *ggml();
    for (const LlamaTensorView &ta : q) {
        SCOPED_TRACE(ta.name);
        const LlamaTensorView &tb = f16.at(ta.name);
        ++types[g.type_name(ta.type)];
        const json t = tensor_entry(d.doc, ta.name);
        ASSERT_FALSE(t.is_null());
        EXPECT_EQ(t["type_a"], g.type_name(ta.type));
        EXPECT_EQ(t["type_b"], g.type_name(tb.type));
        EXPECT_EQ(t["bytes_a"], ta.size);
        EXPECT_EQ(t["bytes_b"], tb.size);
        if (ta.bytes == tb.bytes) {  // the f32 norms, copied
            EXPECT_EQ(t["status"], "same");
            continue;
        }
        EXPECT_EQ(t["status"], "different");
        const std::vector<float> a = llama_decode(llama(), GgmlType(ta.type), ta.bytes),
                                 b = llama_decode(llama(), GgmlType(tb.type), tb.bytes);
        ASSERT_EQ(a.size(), b.size());
        ASSERT_FALSE(a.empty());
        const Expected e = expected_numbers(a, b);
        EXPECT_EQ(t["mismatches"], e.mismatches);
        EXPECT_EQ(t["max_abs_diff"].get<double>(), e.max_abs);
        EXPECT_TRUE(near_rel(t["rmse"], double(std::sqrt(e.d2 / a.size()))));
        EXPECT_TRUE(near_rel(t["nmse"], double(e.d2 / e.b2)));
        EXPECT_TRUE(near_rel(t["cosine"], double(e.ab / std::sqrt(e.a2 * e.b2))));
        EXPECT_GT(t["nmse"].get<double>(), 0.0);
        EXPECT_TRUE(t["first_different_block"].is_null());  // types differ
    }
    // A real Q4_K_M mixture: q4_K, q6_K for output.weight and some attn_v / ffn_down, f32 norms.
    EXPECT_GT(types["q4_K"], 0);
    EXPECT_GT(types["q6_K"], 0);
    EXPECT_EQ(types["f32"], 5);
}

// A tensor of more than one decoding chunk (2^20 elements), a q4_0 against its f16 source.
TEST(DiffValues, TensorOfSeveralChunks) {
    TempDir dir;
    constexpr int64_t kRow = 4096, kRows = 300;  // 1,228,800 elements
    const std::vector<float> w = test_weights(size_t(kRow * kRows), 9, 0.02f);
    LlamaTensorView a{"w", int(GgmlType::q4_0), 0,
                      0,   {kRow, kRows, 1, 1}, llama_quantize(GgmlType::q4_0, w, kRow)};
    LlamaTensorView b{"w", int(GgmlType::f16),  0,
                      0,   {kRow, kRows, 1, 1}, llama_quantize(GgmlType::f16, w, kRow)};
    write_with_llama(llama(), dir.file("a.gguf"), {{"w", GgmlType::q4_0, {kRow, kRows}, a.bytes}});
    write_with_llama(llama(), dir.file("b.gguf"), {{"w", GgmlType::f16, {kRow, kRows}, b.bytes}});
    const Expected e = expected_numbers(llama_decode(llama(), GgmlType(a.type), a.bytes),
                                        llama_decode(llama(), GgmlType(b.type), b.bytes));
    for (const char *threads : {"1", "2"}) {
        const DiffRun d = diff_json({"--threads", threads, dir.file("a.gguf"), dir.file("b.gguf")});
        ASSERT_EQ(d.status, 1) << d.err;
        const json t = tensor_entry(d.doc, "w");
        EXPECT_EQ(t["mismatches"], e.mismatches);
        EXPECT_EQ(t["max_abs_diff"].get<double>(), e.max_abs);
        EXPECT_TRUE(near_rel(t["rmse"], double(std::sqrt(e.d2 / (kRow * kRows)))));
        EXPECT_TRUE(near_rel(t["nmse"], double(e.d2 / e.b2)));
        EXPECT_TRUE(near_rel(t["cosine"], double(e.ab / std::sqrt(e.a2 * e.b2))));
    }
}

TEST(DiffValues, NumbersDoNotDependOnTheThreadCount) {
    const QuantizedModel &m = quantized_model();
    const RunResult one = run_gguftool({"diff", "--json", "--threads", "1", m.q4km, m.f16});
    const RunResult two = run_gguftool({"diff", "--json", "--threads", "2", m.q4km, m.f16});
    const RunResult all = run_gguftool({"diff", "--json", m.q4km, m.f16});
    EXPECT_EQ(one.status, 1);
    EXPECT_EQ(one.out, two.out);
    EXPECT_EQ(one.out, all.out);
}

TEST(DiffValues, SummaryIsSortedByNmseWorstFirst) {
    const QuantizedModel &m = quantized_model();
    const RunResult r = run_gguftool({"diff", m.q4km, m.f16});
    ASSERT_EQ(r.status, 1) << r.err;
    const DiffRun d = diff_json({m.q4km, m.f16});
    std::map<std::string, double> nmse;
    for (const json &t : d.doc["tensors"])
        if (t["status"] == "different") nmse[t["name"]] = t["nmse"];
    // The rows of the summary table, in order: each starts with a tensor name.
    const size_t table = r.out.find("\nsummary");
    ASSERT_NE(table, std::string::npos) << r.out;
    std::istringstream lines(r.out.substr(table));
    std::vector<double> order;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name;
        words >> name;
        if (nmse.count(name)) order.push_back(nmse[name]);
    }
    ASSERT_EQ(order.size(), nmse.size());
    for (size_t i = 1; i < order.size(); ++i) EXPECT_GE(order[i - 1], order[i]);
    EXPECT_NE(r.out.find("header: identical"), std::string::npos);
    // llama_model_quantize wrote its file type (15, Q4_K_M) over the source's (1, F16).
    EXPECT_NE(r.out.find("general.file_type  uint32  15 -> 1"), std::string::npos) << r.out;
}

// Two files of f32 tensors, one per edge case.
class DiffEdgeCases : public ::testing::Test {
protected:
    void SetUp() override {
        const std::vector<float> zeros(64, 0.0f), neg_zeros(64, -0.0f), ones(64, 1.0f);
        std::vector<float> nan_at_3_and_5 = ones, nan_at_5 = ones;
        nan_at_3_and_5[3] = NAN;
        nan_at_3_and_5[5] = NAN;
        nan_at_5[5] = NAN;
        gguf::Writer a, b;
        const auto both = [&](const char *name, const std::vector<float> &va,
                              const std::vector<float> &vb) {
            a.add_tensor(name, GgmlType::f32, {va.size()}, f32_bytes(va));
            b.add_tensor(name, GgmlType::f32, {vb.size()}, f32_bytes(vb));
        };
        both("signed_zeros", neg_zeros, zeros);
        both("b_zero", ones, zeros);
        both("a_zero", zeros, ones);
        both("nan", nan_at_3_and_5, nan_at_5);
        both("count", ones, std::vector<float>(32, 1.0f));
        a.add_tensor("dims", GgmlType::f32, {8, 8}, f32_bytes(ones));
        b.add_tensor("dims", GgmlType::f32, {16, 4}, f32_bytes(ones));
        a.write(dir.file("a.gguf"));
        b.write(dir.file("b.gguf"));
        d = diff_json({dir.file("a.gguf"), dir.file("b.gguf")});
        ASSERT_EQ(d.status, 1) << d.err;
    }
    TempDir dir;
    DiffRun d;
};

TEST_F(DiffEdgeCases, SignedZerosAreEqualValuesButDifferentBytes) {
    const json t = tensor_entry(d.doc, "signed_zeros");
    EXPECT_EQ(t["status"], "different");
    EXPECT_EQ(t["mismatches"], 0);
    EXPECT_EQ(t["max_abs_diff"], 0.0);
    EXPECT_EQ(t["nmse"], 0.0);    // 0 / 0: B is all zeros and so is A
    EXPECT_EQ(t["cosine"], 1.0);  // two zero vectors
    EXPECT_EQ(t["first_different_block"], 0);
    EXPECT_EQ(t["block_a"], "00000080");
    EXPECT_EQ(t["block_b"], "00000000");
}

TEST_F(DiffEdgeCases, ZeroVectors) {
    const json b_zero = tensor_entry(d.doc, "b_zero");
    EXPECT_EQ(b_zero["mismatches"], 64);
    EXPECT_EQ(b_zero["max_abs_diff"], 1.0);
    EXPECT_EQ(b_zero["rmse"], 1.0);
    EXPECT_TRUE(b_zero["nmse"].is_null());    // infinite: sum b^2 is 0
    EXPECT_TRUE(b_zero["cosine"].is_null());  // no direction
    const json a_zero = tensor_entry(d.doc, "a_zero");
    EXPECT_EQ(a_zero["nmse"], 1.0);
    EXPECT_TRUE(a_zero["cosine"].is_null());

    const RunResult text = run_gguftool({"diff", dir.file("a.gguf"), dir.file("b.gguf")});
    EXPECT_NE(text.out.find("inf"), std::string::npos) << text.out;
}

TEST_F(DiffEdgeCases, NanFacingANumberIsAMismatchTwoNansAreNot) {
    const json t = tensor_entry(d.doc, "nan");
    EXPECT_EQ(t["mismatches"], 1);  // index 3; at 5 both are NaN
    EXPECT_TRUE(t["max_abs_diff"].is_null());
    EXPECT_TRUE(t["rmse"].is_null());
    EXPECT_TRUE(t["nmse"].is_null());
}

TEST_F(DiffEdgeCases, ElementCountsDifferGiveNoNumbers) {
    const json t = tensor_entry(d.doc, "count");
    EXPECT_EQ(t["status"], "different");
    EXPECT_EQ(t["elements_a"], 64);
    EXPECT_EQ(t["elements_b"], 32);
    for (const char *k : {"max_abs_diff", "rmse", "nmse", "cosine", "mismatches"})
        EXPECT_TRUE(t[k].is_null()) << k;
    EXPECT_NE(t["note"].get<std::string>().find("element counts differ"), std::string::npos);
    // B is A's first half: the first block A has and B has not.
    EXPECT_EQ(t["first_different_block"], 32);
    EXPECT_EQ(t["block_a"], "0000803f");
    EXPECT_TRUE(t["block_b"].is_null());
}

TEST_F(DiffEdgeCases, SameBytesOtherDimsAreDifferentWithZeroNumbers) {
    const json t = tensor_entry(d.doc, "dims");
    EXPECT_EQ(t["status"], "different");
    EXPECT_EQ(t["dims_a"], json({8, 8}));
    EXPECT_EQ(t["dims_b"], json({16, 4}));
    EXPECT_EQ(t["mismatches"], 0);
    EXPECT_EQ(t["nmse"], 0.0);
    EXPECT_TRUE(t["first_different_block"].is_null());
}

TEST(DiffValues, UndecodableTensorIsReportedAndTheRestCompared) {
    // iq2_xxs has no defined big-endian layout (gguftool/byte_order.hpp), so its data in a
    // big-endian file cannot be decoded; the tensors after it still are: q8_0 blocks converted
    // field by field, f32 values byte-swapped.
    TempDir dir;
    const std::vector<uint8_t> iq2(traits(GgmlType::iq2_xxs).type_size, 0x11);  // one block
    const std::vector<uint8_t> q8 = llama_quantize(GgmlType::q8_0, test_weights(64, 3), 64);
    std::vector<uint8_t> q8_big(q8.size());
    quant::swap_byte_order(GgmlType::q8_0, q8.data(), q8_big.data(),
                           q8.size() / traits(GgmlType::q8_0).type_size);
    const std::vector<float> values = test_weights(16, 4);
    std::vector<uint8_t> swapped = f32_bytes(values);
    for (size_t i = 0; i < swapped.size(); i += 4) std::reverse(&swapped[i], &swapped[i + 4]);
    gguf::Writer big(3, gguf::ByteOrder::big), little;
    big.add_tensor("q", GgmlType::iq2_xxs, {256}, iq2)
        .add_tensor("q8", GgmlType::q8_0, {64}, q8_big)
        .add_tensor("f", GgmlType::f32, {16}, swapped);
    little.add_tensor("q", GgmlType::iq2_xxs, {256}, iq2)
        .add_tensor("q8", GgmlType::q8_0, {64}, q8)
        .add_tensor("f", GgmlType::f32, {16}, f32_bytes(values));
    big.write(dir.file("big.gguf"));
    little.write(dir.file("little.gguf"));

    const DiffRun d = diff_json({dir.file("big.gguf"), dir.file("little.gguf")});
    ASSERT_EQ(d.status, 1) << d.err;
    EXPECT_EQ(d.doc["header"]["identical"], false);
    EXPECT_EQ(d.doc["header"]["byte_order_a"], "big");
    const json q = tensor_entry(d.doc, "q");
    EXPECT_EQ(q["status"], "different");
    EXPECT_TRUE(q["nmse"].is_null());
    EXPECT_NE(q["note"].get<std::string>().find("cannot decode a (iq2_xxs)"), std::string::npos)
        << q["note"];
    for (const char *name : {"q8", "f"}) {  // the same values, stored in two byte orders
        const json t = tensor_entry(d.doc, name);
        EXPECT_EQ(t["mismatches"], 0) << name;
        EXPECT_EQ(t["nmse"], 0.0) << name;
    }
}

TEST(DiffValues, FirstDifferentBlockAndItsBytes) {
    TempDir dir;
    const std::vector<uint8_t> qa = llama_quantize(GgmlType::q8_0, test_weights(128, 5), 128);
    std::vector<uint8_t> qb = qa;
    constexpr size_t kBlock = 34;  // q8_0: f16 scale and 32 int8
    qb[2 * kBlock + 5] ^= 0x10;    // block 2
    qb[3 * kBlock + 7] ^= 0x01;    // and block 3
    gguf::Writer a, b;
    a.add_tensor("w", GgmlType::q8_0, {128}, qa);
    b.add_tensor("w", GgmlType::q8_0, {128}, qb);
    a.write(dir.file("a.gguf"));
    b.write(dir.file("b.gguf"));

    const DiffRun d = diff_json({dir.file("a.gguf"), dir.file("b.gguf")});
    ASSERT_EQ(d.status, 1) << d.err;
    const json t = tensor_entry(d.doc, "w");
    EXPECT_EQ(t["first_different_block"], 2);
    EXPECT_EQ(t["block_a"], hex_of(qa.data() + 2 * kBlock, kBlock));
    EXPECT_EQ(t["block_b"], hex_of(qb.data() + 2 * kBlock, kBlock));
    EXPECT_EQ(t["mismatches"], 2);  // one int8 in each of two blocks

    const RunResult text = run_gguftool({"diff", dir.file("a.gguf"), dir.file("b.gguf")});
    EXPECT_NE(text.out.find("first different block: 2"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(hex_of(qb.data() + 2 * kBlock, kBlock)), std::string::npos);
}

}  // namespace
}  // namespace gguftool::test
