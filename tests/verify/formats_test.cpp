// verify() against llama.cpp on a file with a tensor of every type; a doctored llama.cpp decoder
// shows that a single differing value is caught.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "gguftool/gguf_writer.hpp"
#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

using verify::Status;

class VerifyFormats : public EveryFormatFile {};

void expect_every_format_verified(const verify::Report &r) {
    for (GgmlType t : testkit::quantized_types()) {
        const verify::TensorResult *res = find_result(r, tensor_name(t));
        ASSERT_NE(res, nullptr) << type_name(t);
        EXPECT_EQ(res->type, type_name(t));
        EXPECT_EQ(res->elements, 512u);
        if (t == GgmlType::q8_1) {
            // llama.cpp has no decoder for it: never counted as passed.
            EXPECT_EQ(res->status, Status::not_compared);
            EXPECT_NE(res->note.find("no decoder for q8_1"), std::string::npos) << res->note;
            continue;
        }
        EXPECT_EQ(res->status, Status::match) << type_name(t) << ": " << res->note;
        EXPECT_EQ(res->diff.elements, 512u) << type_name(t);
        EXPECT_EQ(res->diff.mismatches, 0u) << type_name(t);
    }
    for (GgmlType t : testkit::plain_types()) {
        const verify::TensorResult *res = find_result(r, tensor_name(t));
        ASSERT_NE(res, nullptr) << type_name(t);
        const bool decoded = t == GgmlType::f32 || t == GgmlType::f16 || t == GgmlType::bf16;
        EXPECT_EQ(res->status, decoded ? Status::match : Status::not_compared)
            << type_name(t) << ": " << res->note;
    }
    const verify::TensorResult *big = find_result(r, kBigTensor);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(big->status, Status::match);
    EXPECT_EQ(big->diff.elements, 4u * 65536);
    // Every quantized format but q8_1 + f32, f16, bf16 + the big tensor match; q8_1, f64 and 4
    // integer types are not compared.
    const size_t formats = testkit::quantized_types().size();
    EXPECT_EQ(r.matched, formats - 1 + 3 + 1);
    EXPECT_EQ(r.mismatched, 0u);
    EXPECT_EQ(r.not_compared, 6u);
    EXPECT_EQ(r.tensors.size(), formats + testkit::plain_types().size() + 1);
}

TEST_F(VerifyFormats, EveryFormatMatchesLlama) {
    const gguf::Model model = gguf::Model::open(file());
    std::vector<std::string> streamed;
    uint64_t last_done = 0, last_total = 0;
    verify::Options o;
    o.on_result = [&](const verify::TensorResult &r) { streamed.push_back(r.name); };
    o.progress = [&](uint64_t done, uint64_t total) {
        EXPECT_GE(done, last_done);
        last_done = done, last_total = total;
    };
    const verify::Report r = verify::verify(model, o);
    expect_every_format_verified(r);
    EXPECT_EQ(streamed.size(), r.tensors.size());
    uint64_t bytes = 0;
    for (const gguf::TensorInfo &t : model.tensors()) bytes += t.bytes;
    EXPECT_EQ(last_total, bytes);
    EXPECT_EQ(last_done, bytes);
    EXPECT_NE(r.reference.find(llama().path), std::string::npos) << r.reference;
}

TEST_F(VerifyFormats, ChunksAndThreadsDoNotChangeTheResult) {
    const gguf::Model model = gguf::Model::open(file());
    verify::Options o;
    o.chunk_elements = 300;  // rounded down to whole blocks: many chunks per tensor
    o.threads = 3;
    expect_every_format_verified(verify::verify(model, o));
}

TEST_F(VerifyFormats, GlobsSelectTensors) {
    const gguf::Model model = gguf::Model::open(file());
    verify::Options o;
    o.tensor_globs = {"t.q4_*", "t.iq1_?"};
    const verify::Report r = verify::verify(model, o);
    std::vector<std::string> names;
    for (const verify::TensorResult &t : r.tensors) names.push_back(t.name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"t.q4_0", "t.q4_1", "t.q4_K", "t.iq1_s", "t.iq1_m"}));
    o.tensor_globs = {"nothing*"};
    EXPECT_THROW(verify::verify(model, o), Error);
}

TEST_F(VerifyFormats, UnloadableLibraryIsAnError) {
    const gguf::Model model = gguf::Model::open(file());
    verify::Options o;
    o.ggml_lib = dir_->file("no-such-libggml-base.so");
    try {
        verify::verify(model, o);
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("no-such-libggml-base.so"), std::string::npos)
            << e.what();
    }
}

TEST_F(VerifyFormats, BigEndianFilesAreNotCompared) {
    // llama.cpp reads little-endian data only: nothing to compare with, and never a pass.
    const std::string path = dir_->file("big-endian.gguf");
    gguf::Writer(3, gguf::ByteOrder::big)
        .add_tensor("be.f32", GgmlType::f32, {32}, testkit::random_bytes(128, 1))
        .add_tensor("be.q4_0", GgmlType::q4_0, {32}, testkit::random_bytes(18, 2))
        .write(path);
    const verify::Report r = verify::verify(gguf::Model::open(path), {});
    ASSERT_EQ(r.tensors.size(), 2u);
    EXPECT_EQ(r.not_compared, 2u);
    for (const verify::TensorResult &t : r.tensors) {
        EXPECT_EQ(t.status, Status::not_compared);
        EXPECT_NE(t.note.find("big-endian"), std::string::npos) << t.note;
    }
}

// llama.cpp's q4_K decoder with one value moved by one ULP: the doctored reference must be caught.
reference::Ggml::DequantizeRow g_real_q4_k = nullptr;
uint64_t g_calls_elements = 0;  // elements decoded so far (calls are sequential: one thread)
constexpr uint64_t kDoctoredElement = 300;

void doctored_q4_k(const void *x, float *y, int64_t k) {
    g_real_q4_k(x, y, k);
    if (kDoctoredElement >= g_calls_elements && kDoctoredElement < g_calls_elements + uint64_t(k))
        y[kDoctoredElement - g_calls_elements] =
            std::nextafter(y[kDoctoredElement - g_calls_elements], INFINITY);
    g_calls_elements += uint64_t(k);
}

TEST_F(VerifyFormats, ASingleDifferingValueIsCaught) {
    const gguf::Model model = gguf::Model::open(file());
    auto doctored = std::make_shared<reference::Ggml>();
    const reference::Ggml &real = llama();
    std::copy(std::begin(real.dequantize_row), std::end(real.dequantize_row),
              std::begin(doctored->dequantize_row));
    doctored->path = "doctored";
    g_real_q4_k = real.dequantize_row[int(GgmlType::q4_k)];
    doctored->dequantize_row[int(GgmlType::q4_k)] = doctored_q4_k;
    g_calls_elements = 0;

    verify::Options o;
    o.ggml = doctored;
    o.threads = 1;
    o.tensor_globs = {"t.q4_K", "t.q5_K"};
    const verify::Report r = verify::verify(model, o);
    ASSERT_EQ(r.tensors.size(), 2u);
    const verify::TensorResult &bad = r.tensors[0];
    EXPECT_EQ(bad.name, "t.q4_K");
    EXPECT_EQ(bad.status, Status::mismatch);
    EXPECT_EQ(bad.diff.mismatches, 1u);
    EXPECT_EQ(bad.diff.first_mismatch, kDoctoredElement);
    EXPECT_EQ(bad.diff.max_ulp, 1u);
    EXPECT_GT(bad.diff.max_abs_diff, 0.0);
    EXPECT_EQ(r.tensors[1].status, Status::match);
    EXPECT_EQ(r.mismatched, 1u);
    EXPECT_EQ(r.matched, 1u);
}

}  // namespace
}  // namespace gguftool::verifytest
