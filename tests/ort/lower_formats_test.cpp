// The lowering of DequantizePacked, every format x output type x a range of target opsets, run in
// onnxruntime and compared with llama.cpp's dequantize_row_* bit for bit (any NaN equals any NaN).
// Our executor (gguftool run) runs the same lowered models. Per format the model decodes three
// tensors: llama.cpp-quantized values (imatrix where the type requires one), random bytes (NaN, Inf
// and subnormal scales, every code), and an empty tensor. bfloat16 outputs go through one Cast to
// FLOAT in the test model, since onnxruntime-node cannot hand bfloat16 tensors back; the widening
// is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../support/format_cases.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/opset29.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/runtime/session.hpp"
#include "gguftool/runtime/tensor_io.hpp"
#include "onnx_builder.hpp"
#include "ort_support.hpp"

namespace gguftool::orttest {
namespace {

using Case = testkit::FormatCase;
using testkit::is_nan;
using testkit::packed_model;

// The value llama.cpp's float f becomes in `dtype`, as the bytes the output holds (bfloat16:
// rounded once, then widened to float by the test model's Cast).
std::vector<uint8_t> expected_bytes(float f, DataType dtype) {
    std::vector<uint8_t> out;
    if (dtype == DataType::bfloat16) {
        const uint32_t bits = uint32_t(testref::bfloat16_reference().from_float(f)) << 16;
        float w;
        std::memcpy(&w, &bits, 4);
        append_expected(out, w, DataType::float32);
    } else {
        append_expected(out, f, dtype);
    }
    return out;
}

struct Param {
    int opset;
    DataType dtype;
};

class LowerFormatsOrt : public testing::TestWithParam<Param> {};

TEST_P(LowerFormatsOrt, EveryFormatMatchesLlamaBitForBit) {
    SKIP_WITHOUT_ORT();
    ASSERT_NE(reference::ggml(), nullptr) << "libggml-base.so is needed";
    const auto [opset, dtype] = GetParam();
    // Cases whose format lowers (each failure is reported, the rest still run).
    std::vector<const Case *> chosen;
    for (const Case &c : testkit::format_cases()) {
        onnx::ModelProto one = packed_model(dtype, {&c});
        try {
            lower::lower_model(one, {opset});
            chosen.push_back(&c);
        } catch (const Error &e) {
            ADD_FAILURE() << c.name << ": " << e.what();
        }
    }
    onnx::ModelProto model = packed_model(dtype, chosen);
    const lower::Report report = lower::lower_model(model, {opset});
    EXPECT_EQ(report.dequantize_packed, chosen.size());
    TempDir dir;
    const std::string path = dir.file("lowered.onnx");
    testkit::save_model(model, path);
    const RunResult r = run_ort(path, dir.file("out"));
    ASSERT_EQ(r.status, 0) << r.err;
    // Our executor runs the same lowered model.
    std::map<std::string, runtime::Tensor> ours;
    for (auto &[name, t] : runtime::run_model(path)) ours.emplace(name, std::move(t));
    const DataType got_type = dtype == DataType::bfloat16 ? DataType::float32 : dtype;
    const size_t width = dtype_size(got_type);
    for (const Case *cp : chosen) {
        const Case &c = *cp;
        const std::string out = dtype == DataType::bfloat16 ? c.name + "_as_float" : c.name;
        const runtime::Tensor ort = runtime::read_npy(dir.file("out") + "/" + out + ".npy");
        for (const auto &[runtime_name, got] :
             {std::pair<std::string, const runtime::Tensor *>{"onnxruntime", &ort},
              {"gguftool run", &ours.at(out)}}) {
            SCOPED_TRACE(c.name + " in " + runtime_name);
            ASSERT_EQ(got->dtype(), got_type);
            EXPECT_EQ(got->shape(), c.shape);
            ASSERT_EQ(got->bytes().size(), c.want.size() * width);
            size_t differing = 0, first = 0;
            for (size_t i = 0; i < c.want.size(); ++i) {
                const std::vector<uint8_t> want = expected_bytes(c.want[i], dtype);
                const uint8_t *p = got->bytes().data() + i * width;
                const bool same = std::memcmp(p, want.data(), width) == 0 ||
                                  (is_nan(p, got_type) && is_nan(want.data(), got_type));
                if (!same && differing++ == 0) first = i;
            }
            EXPECT_EQ(differing, 0u) << "first differing element " << first << ": llama.cpp "
                                     << (c.want.empty() ? 0.0f : c.want[first]);
        }
    }
}

std::vector<Param> params() {
    std::vector<Param> out;
    for (int opset : {17, 18, 21, 26})
        for (DataType t :
             {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64})
            out.push_back({opset, t});
    return out;
}

INSTANTIATE_TEST_SUITE_P(OpsetsAndTypes, LowerFormatsOrt, testing::ValuesIn(params()),
                         [](const auto &info) {
                             return "opset" + std::to_string(info.param.opset) + "_" +
                                    dtype_name(info.param.dtype);
                         });

}  // namespace
}  // namespace gguftool::orttest
