// Shared pieces of the dequantization tests: the (type, SIMD target) parameter, forcing a target,
// and llama.cpp's reference decode.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/dispatch.hpp"
#include "ggml_data.hpp"
#include "gguf_test_support.hpp"
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
    for (GgmlType t : testkit::quantized_types())
        for (int64_t target : simd_targets()) out.push_back({t, target});
    return out;
}

inline std::string type_target_name(const testing::TestParamInfo<TypeTarget> &info) {
    return std::string(type_name(info.param.type)) + "_" + hwy::TargetName(info.param.target);
}

inline std::string target_name(const testing::TestParamInfo<int64_t> &info) {
    return hwy::TargetName(info.param);
}

// The kit's bit-for-bit comparison (gguf_test_support.hpp).
using testkit::Nans;
using testkit::same_bits;

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
    return testkit::random_bytes((elements + tt.block_size - 1) / tt.block_size * tt.type_size,
                                 seed);
}

}  // namespace gguftool::testutil
