// Helpers for the verify tests: a GGUF file holding a tensor of every type, quantized by llama.cpp,
// written by llama.cpp's own writer; llama.cpp's decoding of its tensors; flipping a byte.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"
#include "ggml_data.hpp"
#include "gguf_test_support.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/runtime.hpp"
#include "gguftool/verify.hpp"

namespace gguftool::verifytest {

using testkit::TempDir;

using testkit::llama;  // llama.cpp, or a failed test

inline std::shared_ptr<const reference::Ggml> llama_shared() {
    llama();
    return reference::ggml();
}

// The IQ2 and IQ1 quantizers build large grids on first use (tens of seconds on a loaded
// machine): their tensors hold random blocks instead, which every decoder must read the same way.
inline bool slow_to_quantize(GgmlType t) {
    return t == GgmlType::iq2_xxs || t == GgmlType::iq2_xs || t == GgmlType::iq2_s ||
           t == GgmlType::iq1_s || t == GgmlType::iq1_m;
}

inline std::string tensor_name(GgmlType t) {
    return std::string("t.") + type_name(t);
}

// Name of the one tensor big enough to be split over threads (4 x 65536 values).
inline const std::string kBigTensor = "t.big_q4_0";

// Tensors of every quantized and plain type (256 x 2 values each) plus kBigTensor, written by
// llama.cpp's gguf writer to `path`.
inline void write_every_format(const std::string &path) {
    const reference::Ggml &g = llama();
    constexpr int64_t kNe0 = 256, kRows = 2;
    std::vector<testkit::LlamaTensor> tensors;
    uint64_t seed = 1;
    for (GgmlType t : testkit::quantized_types()) {
        const std::vector<float> values =
            testkit::make_values(testkit::Distribution::normal, kNe0 * kRows, ++seed);
        std::vector<uint8_t> bytes;
        if (slow_to_quantize(t)) {
            bytes = testkit::random_bytes(size_t(*row_bytes(t, kNe0 * kRows)), seed);
        } else {
            const testkit::Quantized q =
                testkit::quantize_with_llama(g, t, values, kNe0, testkit::make_imatrix(kNe0, seed));
            ASSERT_FALSE(q.bytes.empty()) << type_name(t) << ": " << q.failure;
            bytes = q.bytes;
        }
        tensors.push_back({tensor_name(t), t, {kNe0, kRows}, std::move(bytes)});
    }
    for (GgmlType t : testkit::plain_types()) {
        const size_t size = traits(t).type_size;
        std::vector<uint8_t> bytes(size_t(kNe0 * kRows) * size);
        const std::vector<float> values =
            testkit::make_values(testkit::Distribution::normal, kNe0 * kRows, ++seed);
        for (size_t i = 0; i < values.size(); ++i) {
            uint8_t *p = bytes.data() + i * size;
            const float v = values[i] * 100;
            switch (t) {
                case GgmlType::f32:
                    std::memcpy(p, &v, 4);
                    break;
                case GgmlType::f16: {
                    const uint16_t h = verify::f32_to_f16(v);
                    std::memcpy(p, &h, 2);
                    break;
                }
                case GgmlType::bf16: {
                    const uint16_t h = verify::f32_to_bf16(v);
                    std::memcpy(p, &h, 2);
                    break;
                }
                case GgmlType::f64: {
                    const double d = double(v) / 3;
                    std::memcpy(p, &d, 8);
                    break;
                }
                default: {  // integers, little-endian
                    const int64_t x = int64_t(v);
                    std::memcpy(p, &x, size);
                }
            }
        }
        tensors.push_back({tensor_name(t), t, {kNe0, kRows}, std::move(bytes)});
    }
    const int64_t big_rows = 4 * 65536 / kNe0;
    const std::vector<float> big =
        testkit::make_values(testkit::Distribution::mixed, size_t(kNe0 * big_rows), 99);
    tensors.push_back({kBigTensor,
                       GgmlType::q4_0,
                       {kNe0, big_rows},
                       test::llama_quantize(GgmlType::q4_0, big, kNe0)});
    testkit::write_with_llama(testkit::llama(), path, tensors);
}

// Test suites over one file with a tensor of every type (write_every_format), written once per
// suite.
class EveryFormatFile : public testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir;
        write_every_format(dir_->file("every.gguf"));
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string file() { return dir_->file("every.gguf"); }
    static inline TempDir *dir_ = nullptr;
};

// llama.cpp's float32 decoding of a tensor of `path` as llama.cpp's reader finds it (q8_1, which
// llama.cpp cannot decode, by its definition: the kit's llama_decode).
inline std::vector<float> llama_decoding(const std::string &path, const std::string &name) {
    for (const test::LlamaTensorView &t : test::llama_tensors(path))
        if (t.name == name)
            return testkit::llama_decode(testkit::llama(), GgmlType(t.type), t.bytes);
    ADD_FAILURE() << "no tensor " << name << " in " << path;
    return {};
}

// Copies `from` to `to` and inverts every bit of byte `index` of tensor `name`'s data.
inline void copy_with_flipped_byte(const std::string &from, const std::string &to,
                                   const std::string &name, uint64_t index) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    const gguf::Model m = gguf::Model::open(from);
    const gguf::TensorInfo *t = m.find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    ASSERT_LT(index, t->bytes);
    const uint8_t flipped = uint8_t(~t->data[index]);
    testkit::patch_file(to, t->file_offset + index, &flipped, 1);
}

// Elements that differ bit for bit (NaN equal to NaN), counted by the test itself.
inline uint64_t count_differences(const std::vector<float> &a, const std::vector<float> &b) {
    EXPECT_EQ(a.size(), b.size());
    uint64_t n = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (std::memcmp(&a[i], &b[i], 4) != 0) ++n;
    }
    return n;
}

inline const verify::TensorResult *find_result(const verify::Report &r, const std::string &name) {
    for (const verify::TensorResult &t : r.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

// The table line of tensor `name` in verify's text output ("" when absent).
inline std::string line_of(const std::string &out, const std::string &name) {
    size_t p = 0;
    while (p < out.size()) {
        const size_t end = std::min(out.find('\n', p), out.size());
        const std::string line = out.substr(p, end - p);
        if (line.rfind(name + " ", 0) == 0) return line;
        p = end + 1;
    }
    return "";
}

// A reference directory as a user would dump it with gguf-py: float32 arrays of the decoded
// values (llama.cpp's), float16 and bfloat16 tensors as they are, f64 and integers in their type.
inline void write_references(const std::string &gguf_path, const std::string &dir) {
    std::filesystem::create_directories(dir);
    const gguf::Model m = gguf::Model::open(gguf_path);
    for (const gguf::TensorInfo &t : m.tensors()) {
        runtime::Shape shape = {int64_t(t.ne[1]), int64_t(t.ne[0])};
        if (t.name == "t.q5_0") shape = {int64_t(t.elements)};  // any shape will do
        const std::string file = verify::reference_file(dir, t.name);
        const auto own = [&](DataType dtype) {
            runtime::write_npy(file, runtime::Tensor::copy_of(dtype, shape, t.data));
        };
        switch (t.type) {
            case GgmlType::f32:
                own(DataType::float32);
                break;
            case GgmlType::f16:
                own(DataType::float16);
                break;
            case GgmlType::bf16:
                own(DataType::bfloat16);
                break;
            case GgmlType::f64:
                own(DataType::float64);
                break;
            case GgmlType::i8:
                own(DataType::int8);
                break;
            case GgmlType::i16:
                own(DataType::int16);
                break;
            case GgmlType::i32:
                own(DataType::int32);
                break;
            case GgmlType::i64:
                own(DataType::int64);
                break;
            default: {
                const std::vector<float> v = llama_decoding(gguf_path, std::string(t.name));
                ASSERT_EQ(v.size(), t.elements) << t.name;
                runtime::write_npy(file, runtime::Tensor::from_values(DataType::float32, shape, v));
            }
        }
    }
}

}  // namespace gguftool::verifytest
