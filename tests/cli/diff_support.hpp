// Helpers for the `gguftool diff` tests: running it for JSON, small files written with
// gguf::Writer, and a model quantized by llama.cpp's own llama_model_quantize.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_support.hpp"
#include "llama_ref.hpp"
#include "sample_model.hpp"

namespace gguftool::test {

struct DiffRun {
    int status = -1;
    nlohmann::json doc;  // null when nothing was written
    std::string err;
};

// Runs `gguftool diff --json ARGS...` and parses what it writes.
inline DiffRun diff_json(const std::vector<std::string> &args) {
    std::vector<std::string> a = {"diff", "--json"};
    a.insert(a.end(), args.begin(), args.end());
    const RunResult r = run_gguftool(a);
    DiffRun d;
    d.status = r.status;
    d.err = r.err;
    if (!r.out.empty()) d.doc = nlohmann::json::parse(r.out);  // throws on invalid JSON
    return d;
}

// The entry of the JSON document's tensor list named `name`, or null.
inline nlohmann::json tensor_entry(const nlohmann::json &doc, const std::string &name) {
    for (const nlohmann::json &t : doc["tensors"])
        if (t["name"] == name) return t;
    return nullptr;
}

using testkit::f32_bytes;

inline std::string hex_of(const uint8_t *p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += fmt::format("{:02x}", p[i]);
    return s;
}

// The sample model's F16 source (tests/support/sample_model.hpp) and that source quantized to
// Q4_K_M by llama_model_quantize, written once per test program.
struct QuantizedModel {
    std::string f16, q4km;
};

inline const QuantizedModel &quantized_model() {
    static TempDir dir;
    static const QuantizedModel m = [] {
        QuantizedModel q{dir.file("f16.gguf"), dir.file("q4km.gguf")};
        const reference::Ggml *g = ggml();
        if (!g) {
            ADD_FAILURE() << "llama.cpp's libggml-base.so is not available";
            return q;
        }
        EXPECT_TRUE(testkit::write_sample(*g, q.f16, testkit::SampleTypes::f16));
        const std::string why = testkit::model_quantize(q.f16, q.q4km, testkit::kFtypeMostlyQ4_K_M);
        EXPECT_EQ(why, "");
        return q;
    }();
    return m;
}

}  // namespace gguftool::test
