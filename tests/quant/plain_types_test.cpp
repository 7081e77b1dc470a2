// Plain types (f32 f16 bf16 f64 i8 i16 i32 i64) to every output type, on every SIMD target:
// halves and bfloat16s against llama.cpp's ggml_fp16_to_fp32 / ggml_bf16_to_fp32 for all 65536
// patterns, roundings against the tests' reference rounding, exactness where the output holds it.
#include <dlfcn.h>

#include <random>

#include "quant_test_util.hpp"
#include "reference_rounding.hpp"

namespace gguftool {
namespace {

template <class Out, class In>
std::vector<Out> convert(GgmlType t, const std::vector<In> &values, DataType o) {
    std::vector<Out> out(values.size());
    const auto *bytes = reinterpret_cast<const uint8_t *>(values.data());
    quant::decode(t, {bytes, values.size() * sizeof(In)}, values.size(), out.data(), o, 1);
    return out;
}

std::vector<uint16_t> all_16_bit_patterns() {
    std::vector<uint16_t> v(65536);
    for (uint32_t i = 0; i < 65536; ++i) v[i] = uint16_t(i);
    return v;
}

template <class T>
T from_bits(uint64_t bits) {
    T v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

// Float patterns around every rounding boundary of half and bfloat16, for every exponent, plus
// NaNs with assorted payloads and random patterns.
std::vector<float> tricky_floats() {
    std::vector<uint32_t> bits;
    const uint32_t low[] = {0,        1,        2,        0x0FFF,   0x1000,  0x1001,   0x2000,
                            0x3000,   0x7FFF,   0x8000,   0x8001,   0x18000, 0x17FFF,  0x7FFFFF,
                            0x7FE000, 0x7FF000, 0x400000, 0x3FFFFF, 0x10000, 0x7F8000, 0x7FFF00};
    for (uint32_t e = 0; e < 256; ++e)
        for (uint32_t m : low)
            for (uint32_t s : {0u, 1u}) bits.push_back(s << 31 | e << 23 | m);
    std::mt19937 rng(1);
    for (int i = 0; i < 200000; ++i) bits.push_back(rng());
    std::vector<float> out;
    for (uint32_t b : bits) out.push_back(from_bits<float>(b));
    return out;
}

std::vector<double> tricky_doubles() {
    std::vector<double> v = {
        0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e300, -1e300, 5e-324, -5e-324,
        1e-310, 3.4e38, 3.4028235677973366e38, 3.40282357e38, 1e39, std::ldexp(1.0, -24),
        std::ldexp(1.0, -25), std::ldexp(1.0, -25) * 1.0000001, std::ldexp(1.0, -133),
        std::ldexp(1.0, -134), std::ldexp(1.0, -150), std::ldexp(1.0, -149) * 1.5, INFINITY,
        -INFINITY,
        // One rounding, not two: via float these would land on the other side.
        1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
        1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40),
        1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -52), 1.0 + std::ldexp(1.0, -24),
        from_bits<double>(0x7FF0000000000001), from_bits<double>(0xFFF8000000000000),
        from_bits<double>(0x7FFFFFFFFFFFFFFF), from_bits<double>(0x7FF4000000000000)};
    std::mt19937_64 rng(2);
    for (int i = 0; i < 100000; ++i) v.push_back(from_bits<double>(rng()));
    // Doubles near float-representable half/bfloat16 ties, nudged by one double ulp.
    for (float f : tricky_floats()) {
        if (!std::isfinite(f)) continue;
        v.push_back(std::nextafter(double(f), INFINITY));
        v.push_back(std::nextafter(double(f), -INFINITY));
    }
    return v;
}

template <class I>
std::vector<I> tricky_ints() {
    std::vector<I> v;
    if constexpr (sizeof(I) <= 2) {
        for (int64_t x = std::numeric_limits<I>::min(); x <= std::numeric_limits<I>::max(); ++x)
            v.push_back(I(x));
    } else {
        for (int shift = 0; shift < int(8 * sizeof(I)) - 1; ++shift)
            for (int64_t d : {-3, -2, -1, 0, 1, 2, 3}) {
                const int64_t base = int64_t(1) << shift;
                for (int64_t x : {base + d, -base + d, base + base / 2 + d, base + base / 4 + d})
                    if (x >= std::numeric_limits<I>::min() && x <= std::numeric_limits<I>::max())
                        v.push_back(I(x));
            }
        v.push_back(std::numeric_limits<I>::min());
        v.push_back(std::numeric_limits<I>::max());
        std::mt19937_64 rng(3);
        for (int i = 0; i < 100000; ++i) v.push_back(I(rng() >> (rng() % 64)));
    }
    return v;
}

class PlainTypes : public testing::TestWithParam<int64_t> {
protected:
    void SetUp() override {
        g_ = &testkit::llama();  // or a failed test
        fp16_to_fp32_ =
            reinterpret_cast<float (*)(uint16_t)>(dlsym(g_->handle, "ggml_fp16_to_fp32"));
        bf16_to_fp32_ =
            reinterpret_cast<float (*)(uint16_t)>(dlsym(g_->handle, "ggml_bf16_to_fp32"));
        ASSERT_TRUE(fp16_to_fp32_ && bf16_to_fp32_)
            << "libggml-base.so lacks its fp16/bf16 converters";
        forced_ = std::make_unique<testutil::ForcedTarget>(GetParam());
    }
    void TearDown() override { forced_.reset(); }

    // 16-bit results equal to the reference, bit for bit (NaNs included: their rule is fixed).
    template <class Want>
    void expect_narrow(const std::vector<uint16_t> &got, size_t n, Want want, const char *what) {
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
            const auto [input, expected] = want(i);
            if (got[i] == expected) continue;
            if (bad++ < 3)
                ADD_FAILURE() << what << " on " << hwy::TargetName(GetParam()) << ": " << input
                              << " should be 0x" << std::hex << expected << ", got 0x" << got[i]
                              << std::dec;
        }
        EXPECT_EQ(bad, 0u) << what;
    }

    const reference::Ggml *g_ = nullptr;
    float (*fp16_to_fp32_)(uint16_t) = nullptr;
    float (*bf16_to_fp32_)(uint16_t) = nullptr;  // ggml_bf16_t is a struct of one uint16_t
    std::unique_ptr<testutil::ForcedTarget> forced_;
};

// Forcing a target reaches the dispatcher (what every per-target test relies on).
TEST_P(PlainTypes, ActiveTargetIsTheForcedOne) {
    EXPECT_STREQ(quant::active_target(), hwy::TargetName(GetParam()));
}

TEST_P(PlainTypes, HalfAndBfloat16ToFloatMatchLlama) {
    const std::vector<uint16_t> all = all_16_bit_patterns();
    std::vector<float> want_h, want_b;
    for (uint16_t h : all) want_h.push_back(fp16_to_fp32_(h)), want_b.push_back(bf16_to_fp32_(h));
    EXPECT_TRUE(testkit::same_bits(want_h, convert<float>(GgmlType::f16, all, DataType::float32),
                                   testkit::Nans::any));
    EXPECT_TRUE(testkit::same_bits(want_b, convert<float>(GgmlType::bf16, all, DataType::float32),
                                   testkit::Nans::any));
    // And exactly, NaN payloads too, for bfloat16 (a pure bit shift).
    const auto got_b = convert<float>(GgmlType::bf16, all, DataType::float32);
    for (size_t i = 0; i < all.size(); ++i)
        ASSERT_EQ(testkit::float_bits(got_b[i]), uint32_t(all[i]) << 16) << i;
}

TEST_P(PlainTypes, HalfAndBfloat16ToDoubleAreExact) {
    const std::vector<uint16_t> all = all_16_bit_patterns();
    const auto got_h = convert<double>(GgmlType::f16, all, DataType::float64);
    const auto got_b = convert<double>(GgmlType::bf16, all, DataType::float64);
    for (size_t i = 0; i < all.size(); ++i) {
        const double wh = fp16_to_fp32_(all[i]), wb = bf16_to_fp32_(all[i]);
        if (std::isnan(wh))
            EXPECT_TRUE(std::isnan(got_h[i])) << i;
        else
            EXPECT_EQ(got_h[i], wh) << i;
        if (std::isnan(wb))
            EXPECT_TRUE(std::isnan(got_b[i])) << i;
        else
            EXPECT_EQ(got_b[i], wb) << i;
    }
}

TEST_P(PlainTypes, HalfToBfloat16AndBack) {
    const std::vector<uint16_t> all = all_16_bit_patterns();
    const auto &bf = testref::bfloat16_reference();
    const auto &half = testref::half_reference();
    expect_narrow(
        convert<uint16_t>(GgmlType::f16, all, DataType::bfloat16), all.size(),
        [&](size_t i) { return std::pair(all[i], bf.from_float(fp16_to_fp32_(all[i]))); },
        "f16->bf16");
    expect_narrow(
        convert<uint16_t>(GgmlType::bf16, all, DataType::float16), all.size(),
        [&](size_t i) { return std::pair(all[i], half.from_float(bf16_to_fp32_(all[i]))); },
        "bf16->f16");
}

TEST_P(PlainTypes, SameFormatIsAByteCopy) {
    const std::vector<uint16_t> all = all_16_bit_patterns();  // signalling NaNs included
    EXPECT_EQ(all, convert<uint16_t>(GgmlType::f16, all, DataType::float16));
    EXPECT_EQ(all, convert<uint16_t>(GgmlType::bf16, all, DataType::bfloat16));
    const std::vector<float> f = tricky_floats();
    const auto got_f = convert<float>(GgmlType::f32, f, DataType::float32);
    EXPECT_EQ(0, std::memcmp(f.data(), got_f.data(), f.size() * 4));
    const std::vector<double> d = tricky_doubles();
    const auto got_d = convert<double>(GgmlType::f64, d, DataType::float64);
    EXPECT_EQ(0, std::memcmp(d.data(), got_d.data(), d.size() * 8));
}

TEST_P(PlainTypes, FloatToHalfBfloat16Double) {
    const std::vector<float> f = tricky_floats();
    const auto &half = testref::half_reference();
    const auto &bf = testref::bfloat16_reference();
    expect_narrow(
        convert<uint16_t>(GgmlType::f32, f, DataType::float16), f.size(),
        [&](size_t i) { return std::pair(f[i], half.from_float(f[i])); }, "f32->f16");
    expect_narrow(
        convert<uint16_t>(GgmlType::f32, f, DataType::bfloat16), f.size(),
        [&](size_t i) { return std::pair(f[i], bf.from_float(f[i])); }, "f32->bf16");
    const auto got = convert<double>(GgmlType::f32, f, DataType::float64);
    for (size_t i = 0; i < f.size(); ++i) {
        if (std::isnan(f[i]))
            ASSERT_TRUE(std::isnan(got[i])) << i;
        else
            ASSERT_EQ(got[i], double(f[i])) << i;
    }
}

TEST_P(PlainTypes, DoubleRoundsOnce) {
    const std::vector<double> d = tricky_doubles();
    const auto &half = testref::half_reference();
    const auto &bf = testref::bfloat16_reference();
    expect_narrow(
        convert<uint16_t>(GgmlType::f64, d, DataType::float16), d.size(),
        [&](size_t i) { return std::pair(d[i], half.from_double(d[i])); }, "f64->f16");
    expect_narrow(
        convert<uint16_t>(GgmlType::f64, d, DataType::bfloat16), d.size(),
        [&](size_t i) { return std::pair(d[i], bf.from_double(d[i])); }, "f64->bf16");
    const auto got = convert<float>(GgmlType::f64, d, DataType::float32);
    for (size_t i = 0; i < d.size(); ++i)
        ASSERT_TRUE(testref::is_nearest_even<float>(d[i], got[i])) << d[i] << " -> " << got[i];
}

template <class I>
void check_ints(GgmlType t, int64_t target) {
    SCOPED_TRACE(std::string(type_name(t)) + " on " + hwy::TargetName(target));
    const std::vector<I> v = tricky_ints<I>();
    const auto f = convert<float>(t, v, DataType::float32);
    const auto d = convert<double>(t, v, DataType::float64);
    const auto h = convert<uint16_t>(t, v, DataType::float16);
    const auto b = convert<uint16_t>(t, v, DataType::bfloat16);
    const auto &half = testref::half_reference();
    const auto &bf = testref::bfloat16_reference();
    size_t bad = 0;
    for (size_t i = 0; i < v.size() && bad < 5; ++i) {
        const long double x = static_cast<long double>(v[i]);  // exact: 64-bit significand
        const bool ok = testref::is_nearest_even<float>(x, f[i]) &&
                        testref::is_nearest_even<double>(x, d[i]) && h[i] == half.round(x) &&
                        b[i] == bf.round(x);
        if (!ok) {
            ++bad;
            ADD_FAILURE() << int64_t(v[i]) << " -> float " << f[i] << ", double " << d[i]
                          << ", f16 0x" << std::hex << h[i] << " (want 0x" << half.round(x)
                          << "), bf16 0x" << b[i] << " (want 0x" << bf.round(x) << ")" << std::dec;
        }
    }
}

TEST_P(PlainTypes, IntegersRoundOnce) {
    check_ints<int8_t>(GgmlType::i8, GetParam());
    check_ints<int16_t>(GgmlType::i16, GetParam());
    check_ints<int32_t>(GgmlType::i32, GetParam());
    check_ints<int64_t>(GgmlType::i64, GetParam());
}

// Unaligned input (a tensor's bytes need not be aligned to its element size).
TEST_P(PlainTypes, UnalignedInput) {
    std::vector<uint8_t> buf(1 + 2 * 1000);
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 7);
    std::vector<float> got(1000);
    quant::decode(GgmlType::f16, {buf.data() + 1, 2000}, 1000, got.data(), DataType::float32, 1);
    for (size_t i = 0; i < 1000; ++i) {
        const float want = fp16_to_fp32_(uint16_t(buf[1 + 2 * i] | buf[2 + 2 * i] << 8));
        ASSERT_TRUE(testkit::same_bits(want, got[i], testkit::Nans::any)) << i;
    }
}

INSTANTIATE_TEST_SUITE_P(AllTargets, PlainTypes, testing::ValuesIn(testutil::simd_targets()),
                         testutil::target_name);

}  // namespace
}  // namespace gguftool
