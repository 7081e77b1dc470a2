// Shared pieces of the dequantization tests: the (type, SIMD target) parameter, forcing a target,
// llama.cpp's reference decode, and bit-exact comparison.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/dispatch.hpp"
#include "ggml_data.hpp"
#include "gguftool/quant.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

namespace gguftool::testutil {

// The SIMD targets compiled in and supported by this CPU, best first (e.g. AVX3, AVX2, EMU128).
inline const std::vector<int64_t> &simd_targets() {
    static const std::vector<int64_t> targets = [] {
        simd::force_target(0);
        return simd::usable_targets();
    }();
    return targets;
}

// Makes the dispatcher use one target for the lifetime of the object.
class ForcedTarget {
public:
    explicit ForcedTarget(int64_t target) { simd::force_target(target); }
    ~ForcedTarget() { simd::force_target(0); }
    ForcedTarget(const ForcedTarget &) = delete;
    ForcedTarget &operator=(const ForcedTarget &) = delete;
};

struct TypeTarget {
    GgmlType type;
    int64_t target;
};

inline std::vector<TypeTarget> quantized_types_by_target() {
    std::vector<TypeTarget> out;
    for (GgmlType t : testdata::quantized_types())
        for (int64_t target : simd_targets()) out.push_back({t, target});
    return out;
}

inline std::string type_target_name(const testing::TestParamInfo<TypeTarget> &info) {
    return std::string(type_name(info.param.type)) + "_" + hwy::TargetName(info.param.target);
}

inline std::string target_name(const testing::TestParamInfo<int64_t> &info) {
    return hwy::TargetName(info.param);
}

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Equal bit for bit, any NaN matching any NaN; otherwise names the first mismatch.
inline testing::AssertionResult same_floats(const std::vector<float> &expected,
                                            const std::vector<float> &actual) {
    if (expected.size() != actual.size())
        return testing::AssertionFailure()
               << "sizes differ: " << expected.size() << " vs " << actual.size();
    size_t mismatches = 0, first = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        const bool both_nan = std::isnan(expected[i]) && std::isnan(actual[i]);
        if (!both_nan && float_bits(expected[i]) != float_bits(actual[i]))
            if (mismatches++ == 0) first = i;
    }
    if (mismatches == 0) return testing::AssertionSuccess();
    char buf[200];
    std::snprintf(buf, sizeof buf, "expected %.9g (0x%08x), got %.9g (0x%08x)", expected[first],
                  float_bits(expected[first]), actual[first], float_bits(actual[first]));
    return testing::AssertionFailure() << mismatches << " of " << expected.size()
                                       << " values differ; first at index " << first << ": " << buf;
}

// llama.cpp, or nullptr with a failure recorded (CI installs it: missing is an error, not a skip).
inline std::shared_ptr<const reference::Ggml> ggml_or_fail() {
    auto g = reference::ggml();
    if (!g) ADD_FAILURE() << "llama.cpp's libggml-base.so did not load (run npm ci)";
    return g;
}

// q8_1 as defined (llama.cpp has no decoder for it): per 36-byte block, d = f16 at offset 0, the
// f16 s at offset 2 is ignored, 32 int8 q at offset 4; y = d * q. The half is decoded by
// llama.cpp's own ggml_fp16_to_fp32.
inline std::vector<float> q8_1_by_definition(const reference::Ggml &g,
                                             const std::vector<uint8_t> &in) {
    using Fp16ToFp32 = float (*)(uint16_t);
    auto fp16_to_fp32 = reinterpret_cast<Fp16ToFp32>(dlsym(g.handle, "ggml_fp16_to_fp32"));
    std::vector<float> out;
    if (!fp16_to_fp32) {
        ADD_FAILURE() << "libggml-base.so lacks ggml_fp16_to_fp32";
        return out;
    }
    for (size_t b = 0; b + 36 <= in.size(); b += 36) {
        const float d = fp16_to_fp32(uint16_t(in[b] | in[b + 1] << 8));
        for (int j = 0; j < 32; ++j) out.push_back(d * float(int8_t(in[b + 4 + j])));
    }
    return out;
}

// llama.cpp's FLOAT decode of `in` (q8_1: its definition above).
inline std::vector<float> llama_decode(const reference::Ggml &g, GgmlType t,
                                       const std::vector<uint8_t> &in) {
    const TypeTraits &tt = traits(t);
    const size_t elements = in.size() / tt.type_size * tt.block_size;
    if (t == GgmlType::q8_1) return q8_1_by_definition(g, in);
    std::vector<float> out(elements);
    auto row = g.dequantize_row[static_cast<uint32_t>(t)];
    if (!row) {
        ADD_FAILURE() << "libggml-base.so lacks dequantize_row_" << tt.name;
        return {};
    }
    row(in.data(), out.data(), int64_t(elements));
    return out;
}

// Our FLOAT decode on the calling thread; a thrown error becomes a test failure and an empty
// result.
inline std::vector<float> our_decode(GgmlType t, const std::vector<uint8_t> &in,
                                     unsigned threads = 1) {
    const TypeTraits &tt = traits(t);
    const size_t elements = in.size() / tt.type_size * tt.block_size;
    std::vector<float> out(elements);
    try {
        quant::decode_f32(t, in, elements, out.data(), threads);
    } catch (const std::exception &e) {
        ADD_FAILURE() << "decode threw: " << e.what();
        return {};
    }
    return out;
}

// Random blocks of `t` holding at least `elements` values.
inline std::vector<uint8_t> random_blocks(GgmlType t, size_t elements, uint64_t seed) {
    const TypeTraits &tt = traits(t);
    return testdata::random_bytes((elements + tt.block_size - 1) / tt.block_size * tt.type_size,
                                  seed);
}

}  // namespace gguftool::testutil
