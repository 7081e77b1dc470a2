// The emulation's aclnn operators: dtype and shape rules per SoC, and values checked against
// results worked out here by hand (IEEE bit patterns, floor division of negative numbers,
// numpy.take, concatenation, one-hot rows).
#include <cmath>
#include <limits>

#include "emulator_session.hpp"
#include "gguftool/half.hpp"

namespace gguftool::cann_emulator_test {
namespace {

using ::testing::HasSubstr;

TEST(CannEmulatorOperators, CastRoundsToNearestEvenTruncatesAndMapsNanToZero) {
    in_child([] {
        Session s;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        // Values and their float16 bits: 1, -2, the largest half, 65520 (halfway to 2^16: up to
        // infinity), the smallest subnormal 2^-24, 1 + 2^-11 (a tie: to even 1.0), 1 + 3 * 2^-11
        // (a tie: to even 1 + 2^-9), 1/3, NaN, -0, 2^-26 (below half the smallest subnormal: 0).
        const std::vector<float> in{
            1.0f,     -2.0f, 65504.0f, 65520.0f, 0x1p-24f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
            1.0f / 3, nan,   -0.0f,    0x1p-26f};
        const std::vector<uint16_t> bits{0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x0001, 0x3C00,
                                         0x3C02, 0x3555, 0x7E00, 0x8000, 0x0000};
        const int64_t n = int64_t(in.size());
        void *x = s.upload(in), *h = s.malloc(2 * n), *i = s.malloc(4 * n), *b = s.malloc(n);
        cann::aclTensor *tx = s.tensor(x, cann::ACL_FLOAT, {n});
        GGUFTOOL_TEST_ACLNN(s, Cast, tx, cann::ACL_FLOAT16, s.tensor(h, cann::ACL_FLOAT16, {n}));
        EXPECT_EQ(s.download<uint16_t>(h, in.size()), bits);

        void *y = s.upload(std::vector<float>{2.7f, -2.7f, nan, 0.5f, -0.0f, 3e9f});
        cann::aclTensor *ty = s.tensor(y, cann::ACL_FLOAT, {6});
        GGUFTOOL_TEST_ACLNN(s, Cast, ty, cann::ACL_INT32, s.tensor(i, cann::ACL_INT32, {6}));
        EXPECT_EQ(s.download<int32_t>(i, 6),
                  (std::vector<int32_t>{2, -2, 0, 0, 0, std::numeric_limits<int32_t>::max()}));
        GGUFTOOL_TEST_ACLNN(s, Cast, ty, cann::ACL_BOOL, s.tensor(b, cann::ACL_BOOL, {6}));
        EXPECT_EQ(s.download<uint8_t>(b, 6), (std::vector<uint8_t>{1, 1, 1, 1, 0, 1}));

        // int32 -> int8 keeps the low byte; -> bfloat16 rounds once (2^24 + 1 to 2^24).
        void *z = s.upload(std::vector<int32_t>{300, -129, (1 << 24) + 1});
        cann::aclTensor *tz = s.tensor(z, cann::ACL_INT32, {3});
        GGUFTOOL_TEST_ACLNN(s, Cast, tz, cann::ACL_INT8, s.tensor(b, cann::ACL_INT8, {3}));
        EXPECT_EQ(s.download<int8_t>(b, 3), (std::vector<int8_t>{44, 127, 1}));
        GGUFTOOL_TEST_ACLNN(s, Cast, tz, cann::ACL_BF16, s.tensor(h, cann::ACL_BF16, {3}));
        EXPECT_EQ(s.download<uint16_t>(h, 3), (std::vector<uint16_t>{0x4396, 0xC301, 0x4B80}));
    });
}

TEST(CannEmulatorOperators, FloorDivisionAndRemainderOfNegativeIntegers) {
    in_child([] {
        Session s;
        const int32_t min = std::numeric_limits<int32_t>::min();
        void *a = s.upload(std::vector<int32_t>{-7, 7, -7, 7, -8, min});
        void *b = s.upload(std::vector<int32_t>{2, -2, -2, 2, 2, -1});
        void *q = s.malloc(24);
        cann::aclTensor *ta = s.tensor(a, cann::ACL_INT32, {6}),
                        *tb = s.tensor(b, cann::ACL_INT32, {6}),
                        *tq = s.tensor(q, cann::ACL_INT32, {6});
        GGUFTOOL_TEST_ACLNN(s, FloorDivide, ta, tb, tq);
        EXPECT_EQ(s.download<int32_t>(q, 6), (std::vector<int32_t>{-4, -4, 3, 3, -4, min}));
        GGUFTOOL_TEST_ACLNN(s, DivMod, ta, tb, cann::kDivModTrunc, tq);
        EXPECT_EQ(s.download<int32_t>(q, 6), (std::vector<int32_t>{-3, -3, 3, 3, -4, min}));
        GGUFTOOL_TEST_ACLNN(s, RemainderTensorTensor, ta, tb, tq);
        EXPECT_EQ(s.download<int32_t>(q, 6), (std::vector<int32_t>{1, -1, -1, 1, 0, 0}));
        cann::aclScalar *four = s.scalar(int32_t(4), cann::ACL_INT32);
        GGUFTOOL_TEST_ACLNN(s, FloorDivides, ta, four, tq);
        EXPECT_EQ(s.download<int32_t>(q, 6), (std::vector<int32_t>{-2, 1, -2, 1, -2, min / 4}));
        void *f = s.upload(std::vector<float>{-7.5f, 7.5f}),
             *g = s.upload(std::vector<float>{2, -2});
        GGUFTOOL_TEST_ACLNN(s, RemainderTensorTensor, s.tensor(f, cann::ACL_FLOAT, {2}),
                            s.tensor(g, cann::ACL_FLOAT, {2}), s.tensor(q, cann::ACL_FLOAT, {2}));
        EXPECT_EQ(s.download<float>(q, 2), (std::vector<float>{0.5f, -0.5f}));
    });
}

TEST(CannEmulatorOperators, BroadcastOverStridedViews) {
    in_child([] {
        Session s;
        // x is a [3, 2] buffer; its transpose [2, 3] (strides 1, 2) plus a row [3] of 10, 20, 30.
        void *x = s.upload(std::vector<float>{0, 1, 2, 3, 4, 5});
        void *r = s.upload(std::vector<float>{10, 20, 30});
        void *y = s.malloc(4 * 12);
        cann::aclScalar *one = s.scalar(1.0f, cann::ACL_FLOAT);
        // The output is strided too: every other element of a [2, 6] buffer.
        GGUFTOOL_TEST_ACLNN(s, Add, s.tensor(x, cann::ACL_FLOAT, {2, 3}, {1, 2}),
                            s.tensor(r, cann::ACL_FLOAT, {3}), one,
                            s.tensor(y, cann::ACL_FLOAT, {2, 3}, {6, 2}));
        const std::vector<float> got = s.download<float>(y, 12);
        const std::vector<float> want{10, 22, 34, 11, 23, 35};
        for (size_t i = 0; i < 6; ++i) EXPECT_EQ(got[2 * i], want[i]) << i;

        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        cann::aclTensor *bad_out = s.tensor(y, cann::ACL_FLOAT, {3, 3});
        EXPECT_EQ(s.api.aclnnAddGetWorkspaceSize(s.tensor(x, cann::ACL_FLOAT, {2, 3}),
                                                 s.tensor(r, cann::ACL_FLOAT, {3}), one, bad_out,
                                                 &size, &e),
                  cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(s.api), HasSubstr("broadcast to [2, 3]"));
    });
}

TEST(CannEmulatorOperators, DtypesFollowTheSocProfile) {
    for (const char *soc : {"Ascend910B1", "Ascend310P3"}) {
        in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", soc}}, [soc] {
            Session s;
            const bool p310 = std::string(soc) == "Ascend310P3";
            void *x = s.upload(std::vector<uint16_t>{0x3F80, 0x4000});  // bfloat16 1, 2
            void *y = s.malloc(4);
            cann::aclTensor *t = s.tensor(x, cann::ACL_BF16, {2}),
                            *o = s.tensor(y, cann::ACL_BF16, {2});
            uint64_t size = 0;
            cann::aclOpExecutor *e = nullptr;
            const cann::aclnnStatus st = s.api.aclnnMulGetWorkspaceSize(t, t, o, &size, &e);
            EXPECT_EQ(st, p310 ? cann::kAclnnErrParamInvalid : 0) << recent(s.api);
            if (p310) {
                EXPECT_THAT(recent(s.api), HasSubstr("aclnnMul"));
                EXPECT_THAT(recent(s.api), HasSubstr("BF16"));
                EXPECT_THAT(recent(s.api), HasSubstr("Ascend310P3"));
            }
            // OneHot's values: no INT8 on the Atlas A2, fine on the 310P.
            void *i = s.upload(std::vector<int32_t>{0}), *v = s.upload(std::vector<int8_t>{1, 0});
            cann::aclTensor *ti = s.tensor(i, cann::ACL_INT32, {1});
            const cann::aclnnStatus oh = s.api.aclnnOneHotGetWorkspaceSize(
                ti, 2, s.tensor(v, cann::ACL_INT8, {1}), s.tensor(v, cann::ACL_INT8, {1}, {1}, 1),
                -1, s.tensor(y, cann::ACL_INT8, {1, 2}), &size, &e);
            EXPECT_EQ(oh, p310 ? 0 : cann::kAclnnErrParamInvalid) << recent(s.api);
            // FloorDivides is not on the 310P.
            cann::aclScalar *two = s.scalar(int32_t(2), cann::ACL_INT32);
            const cann::aclnnStatus fd = s.api.aclnnFloorDividesGetWorkspaceSize(
                ti, two, s.tensor(i, cann::ACL_INT32, {1}), &size, &e);
            EXPECT_EQ(fd, p310 ? cann::kAclnnErrParamInvalid : 0) << recent(s.api);
            if (p310) {
                EXPECT_THAT(recent(s.api), HasSubstr("not supported on Ascend310P3"));
            }
        });
    }
}

TEST(CannEmulatorOperators, RightShiftIsCann85sAndNeedsInputShapedLikeOut) {
    in_child([] { EXPECT_EQ(load(Layout::v81).aclnnRightShiftGetWorkspaceSize, nullptr); });
    in_child([] {
        Session s(Layout::v85);
        void *a = s.upload(std::vector<int32_t>{-8, 8, 1 << 30, -1, 5, 6});
        void *k = s.upload(std::vector<int32_t>{1, 40, -3});
        void *y = s.malloc(24);
        cann::aclTensor *ta = s.tensor(a, cann::ACL_INT32, {2, 3}),
                        *tk = s.tensor(k, cann::ACL_INT32, {3});
        GGUFTOOL_TEST_ACLNN(s, RightShift, ta, tk, s.tensor(y, cann::ACL_INT32, {2, 3}));
        // -8 >> 1, 8 >> 40 (past the width: the sign, 0), 2^30 >> -3 (negative: by 0), ...
        EXPECT_EQ(s.download<int32_t>(y, 6), (std::vector<int32_t>{-4, 0, 1 << 30, -1, 0, 6}));
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        // input [3] broadcast to out [2, 3]: refused, only shiftBits broadcasts.
        EXPECT_EQ(s.api.aclnnRightShiftGetWorkspaceSize(
                      tk, ta, s.tensor(y, cann::ACL_INT32, {2, 3}), &size, &e),
                  cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(s.api), HasSubstr("input's shape [3] differs from out's [2, 3]"));
    });
    in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", "Ascend310P3"}}, [] {
        Session s(Layout::v85);
        void *a = s.upload(std::vector<int32_t>{8});
        cann::aclTensor *t = s.tensor(a, cann::ACL_INT32, {1});
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        EXPECT_EQ(s.api.aclnnRightShiftGetWorkspaceSize(t, t, t, &size, &e),
                  cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(s.api), HasSubstr("aclnnRightShift is not supported on Ascend310P3"));
    });
}

TEST(CannEmulatorOperators, GatherV2TakesAlongADim) {
    for (Layout l : {Layout::v81, Layout::v85}) {
        in_child([l] {
            Session s(l);
            void *x = s.upload(std::vector<float>{0, 1, 2, 3, 4, 5});  // [3, 2]
            void *i64 = s.upload(std::vector<int64_t>{2, 0}),
                 *i32 = s.upload(std::vector<int32_t>{1});
            void *y = s.malloc(16);
            cann::aclTensor *tx = s.tensor(x, cann::ACL_FLOAT, {3, 2});
            GGUFTOOL_TEST_ACLNN(s, GatherV2, tx, int64_t(0), s.tensor(i64, cann::ACL_INT64, {2}),
                                s.tensor(y, cann::ACL_FLOAT, {2, 2}));
            EXPECT_EQ(s.download<float>(y, 4), (std::vector<float>{4, 5, 0, 1}));
            GGUFTOOL_TEST_ACLNN(s, GatherV2, tx, int64_t(-1), s.tensor(i32, cann::ACL_INT32, {1}),
                                s.tensor(y, cann::ACL_FLOAT, {3, 1}));
            EXPECT_EQ(s.download<float>(y, 3), (std::vector<float>{1, 3, 5}));
            // A 0-d index drops the dim.
            GGUFTOOL_TEST_ACLNN(s, GatherV2, tx, int64_t(0), s.tensor(i64, cann::ACL_INT64, {}),
                                s.tensor(y, cann::ACL_FLOAT, {2}));
            EXPECT_EQ(s.download<float>(y, 2), (std::vector<float>{4, 5}));
            // Index 3 of a dim of 3: an execution error.
            void *bad = s.upload(std::vector<int64_t>{3});
            GGUFTOOL_TEST_ACLNN(s, GatherV2, tx, int64_t(0), s.tensor(bad, cann::ACL_INT64, {1}),
                                s.tensor(y, cann::ACL_FLOAT, {1, 2}));
            EXPECT_EQ(s.api.aclrtSynchronizeStream(s.stream), cann::kAclErrorRtAicoreException);
            EXPECT_THAT(recent(s.api), HasSubstr("outside [0, 3)"));
        });
    }
}

TEST(CannEmulatorOperators, CatJoinsAlongADim) {
    in_child([] {
        Session s;
        void *a = s.upload(std::vector<int16_t>{1, 2}),
             *b = s.upload(std::vector<int16_t>{3, 4, 5, 6});
        void *y = s.malloc(12);
        const cann::aclTensor *parts[] = {s.tensor(a, cann::ACL_INT16, {2, 1}),
                                          s.tensor(b, cann::ACL_INT16, {2, 2})};
        cann::aclTensorList *list = s.api.aclCreateTensorList(parts, 2);
        GGUFTOOL_TEST_ACLNN(s, Cat, static_cast<const cann::aclTensorList *>(list), int64_t(-1),
                            s.tensor(y, cann::ACL_INT16, {2, 3}));
        EXPECT_EQ(s.download<int16_t>(y, 6), (std::vector<int16_t>{1, 3, 4, 2, 5, 6}));
        const cann::aclTensor *mixed[] = {s.tensor(a, cann::ACL_INT16, {2, 1}),
                                          s.tensor(b, cann::ACL_INT32, {2, 1})};
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        EXPECT_EQ(s.api.aclnnCatGetWorkspaceSize(s.api.aclCreateTensorList(mixed, 2), 1,
                                                 s.tensor(y, cann::ACL_INT16, {2, 2}), &size, &e),
                  cann::kAclnnErrParamInvalid);
    });
}

TEST(CannEmulatorOperators, OneHotMarksTheClassAndOffValuesBeyond) {
    in_child([] {
        Session s;
        void *x = s.upload(std::vector<int32_t>{0, 2, 5});
        void *v = s.upload(std::vector<float>{0.25f, 9.0f});  // off, on
        void *y = s.malloc(4 * 9);
        cann::aclTensor *on = s.tensor(v, cann::ACL_FLOAT, {1}, {1}, 1),
                        *off = s.tensor(v, cann::ACL_FLOAT, {1});
        GGUFTOOL_TEST_ACLNN(s, OneHot, s.tensor(x, cann::ACL_INT32, {3}), 3, on, off, int64_t(-1),
                            s.tensor(y, cann::ACL_FLOAT, {3, 3}));
        EXPECT_EQ(s.download<float>(y, 9),
                  (std::vector<float>{9, .25f, .25f, .25f, .25f, 9, .25f, .25f, .25f}));
        GGUFTOOL_TEST_ACLNN(s, OneHot, s.tensor(x, cann::ACL_INT32, {3}), 3, on, off, int64_t(0),
                            s.tensor(y, cann::ACL_FLOAT, {3, 3}));
        EXPECT_EQ(s.download<float>(y, 9),
                  (std::vector<float>{9, .25f, .25f, .25f, .25f, .25f, .25f, 9, .25f}));
        void *neg = s.upload(std::vector<int32_t>{-1});
        GGUFTOOL_TEST_ACLNN(s, OneHot, s.tensor(neg, cann::ACL_INT32, {1}), 3, on, off, int64_t(-1),
                            s.tensor(y, cann::ACL_FLOAT, {1, 3}));
        EXPECT_EQ(s.api.aclrtSynchronizeStream(s.stream), cann::kAclErrorRtAicoreException);
        EXPECT_THAT(recent(s.api), HasSubstr("negative"));
    });
}

TEST(CannEmulatorOperators, ComparisonsSelectionAndRanges) {
    in_child([] {
        Session s;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        void *a = s.upload(std::vector<float>{1, nan, -0.0f, 3});
        void *b = s.upload(std::vector<float>{1, nan, 0.0f, 2});
        void *y = s.malloc(16), *m = s.malloc(4);
        cann::aclTensor *ta = s.tensor(a, cann::ACL_FLOAT, {4}),
                        *tb = s.tensor(b, cann::ACL_FLOAT, {4});
        GGUFTOOL_TEST_ACLNN(s, EqTensor, ta, tb, s.tensor(m, cann::ACL_BOOL, {4}));
        EXPECT_EQ(s.download<uint8_t>(m, 4), (std::vector<uint8_t>{1, 0, 1, 0}));
        GGUFTOOL_TEST_ACLNN(s, Minimum, ta, tb, s.tensor(y, cann::ACL_FLOAT, {4}));
        const std::vector<float> mn = s.download<float>(y, 4);
        EXPECT_EQ(mn[0], 1);
        EXPECT_TRUE(std::isnan(mn[1]));
        EXPECT_TRUE(std::signbit(mn[2]));
        EXPECT_EQ(mn[3], 2);
        // SWhere with a UINT8 condition (nonzero is true), the other side broadcast.
        void *c = s.upload(std::vector<uint8_t>{0, 7, 0, 1});
        void *z = s.upload(std::vector<float>{-1});
        GGUFTOOL_TEST_ACLNN(s, SWhere, s.tensor(c, cann::ACL_UINT8, {4}), ta,
                            s.tensor(z, cann::ACL_FLOAT, {1}), s.tensor(y, cann::ACL_FLOAT, {4}));
        const std::vector<float> w = s.download<float>(y, 4);
        EXPECT_EQ(w[0], -1);
        EXPECT_TRUE(std::isnan(w[1]));
        EXPECT_EQ(w[2], -1);
        EXPECT_EQ(w[3], 3);
        // Arange(2, 11, 3) = 2, 5, 8 (ceil(9 / 3) = 3 values); a wrong length is refused.
        cann::aclScalar *start = s.scalar(int64_t(2), cann::ACL_INT64),
                        *end = s.scalar(int64_t(11), cann::ACL_INT64),
                        *step = s.scalar(int64_t(3), cann::ACL_INT64);
        GGUFTOOL_TEST_ACLNN(s, Arange, start, end, step, s.tensor(y, cann::ACL_INT32, {3}));
        EXPECT_EQ(s.download<int32_t>(y, 3), (std::vector<int32_t>{2, 5, 8}));
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        EXPECT_EQ(s.api.aclnnArangeGetWorkspaceSize(start, end, step,
                                                    s.tensor(y, cann::ACL_INT32, {4}), &size, &e),
                  cann::kAclnnErrParamInvalid);
        // Clamp to [-1, 1]; Neg flips the float16 sign bit; BitwiseAndScalar.
        void *h = s.upload(std::vector<uint16_t>{0x3C00, 0x0000, 0x7E00});  // 1, +0, NaN
        GGUFTOOL_TEST_ACLNN(s, Neg, s.tensor(h, cann::ACL_FLOAT16, {3}),
                            s.tensor(y, cann::ACL_FLOAT16, {3}));
        EXPECT_EQ(s.download<uint16_t>(y, 3), (std::vector<uint16_t>{0xBC00, 0x8000, 0xFE00}));
        void *k = s.upload(std::vector<int32_t>{-5, 0, 5, 0x1F3});
        cann::aclTensor *tk = s.tensor(k, cann::ACL_INT32, {4});
        cann::aclScalar *lo = s.scalar(int32_t(-1), cann::ACL_INT32),
                        *hi = s.scalar(int32_t(1), cann::ACL_INT32);
        GGUFTOOL_TEST_ACLNN(s, Clamp, tk, lo, hi, s.tensor(y, cann::ACL_INT32, {4}));
        EXPECT_EQ(s.download<int32_t>(y, 4), (std::vector<int32_t>{-1, 0, 1, 1}));
        cann::aclScalar *mask = s.scalar(int32_t(0xF0), cann::ACL_INT32);
        GGUFTOOL_TEST_ACLNN(s, BitwiseAndScalar, tk, mask, s.tensor(y, cann::ACL_INT32, {4}));
        EXPECT_EQ(s.download<int32_t>(y, 4), (std::vector<int32_t>{0xF0, 0, 0, 0xF0}));
    });
}

TEST(CannEmulatorOperators, InplaceCopyBroadcastsOneDtype) {
    in_child([] {
        Session s;
        void *a = s.upload(std::vector<int64_t>{4, 5});
        void *y = s.malloc(48);
        GGUFTOOL_TEST_ACLNN(
            s, InplaceCopy, s.tensor(y, cann::ACL_INT64, {3, 2}),
            static_cast<const cann::aclTensor *>(s.tensor(a, cann::ACL_INT64, {2})));
        EXPECT_EQ(s.download<int64_t>(y, 6), (std::vector<int64_t>{4, 5, 4, 5, 4, 5}));
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        EXPECT_EQ(
            s.api.aclnnInplaceCopyGetWorkspaceSize(s.tensor(y, cann::ACL_INT32, {2}),
                                                   s.tensor(a, cann::ACL_INT64, {2}), &size, &e),
            cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(s.api), HasSubstr("differs from selfRef's"));
    });
}

// ggml-cann's layout (aclnn_ops.cpp, ggml_cann_mul_mat_quant): the weight stored [n, k] and passed
// as its transpose [k, n], the float16 scales stored [n, k / 32] and passed as [k / 32, n], group
// size 32. Integer activations, weights and power-of-two scales keep every product and sum exact
// in float16, so y equals the reference computed here exactly.
TEST(CannEmulatorOperators, WeightQuantBatchMatmulV2DequantizesInt8AndInt4PerGroup) {
    constexpr int64_t m = 2, k = 64, n = 4, groups = k / 32;
    std::vector<uint16_t> x(m * k), scale(n * groups);
    std::vector<int8_t> w(n * k);  // [n, k], values in [-8, 7]
    std::vector<float> sf(n * groups);
    for (int64_t i = 0; i < m * k; ++i) x[size_t(i)] = f32_to_fp16(float(i % 5 - 2));
    for (int64_t i = 0; i < n * k; ++i) w[size_t(i)] = int8_t((i * 7) % 16 - 8);
    for (int64_t i = 0; i < n * groups; ++i) {
        sf[size_t(i)] = i % 2 ? 0.5f : 0.25f;
        scale[size_t(i)] = f32_to_fp16(sf[size_t(i)]);
    }
    std::vector<float> want(m * n);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < n; ++c)
            for (int64_t r = 0; r < k; ++r)
                want[size_t(i * n + c)] += fp16_to_f32(x[size_t(i * k + r)]) *
                                           float(w[size_t(c * k + r)]) *
                                           sf[size_t(c * groups + r / 32)];
    // INT4: two per byte, the even element in the low nibble.
    std::vector<uint8_t> w4(n * k / 2);
    for (size_t i = 0; i < w.size(); ++i)
        w4[i / 2] |= uint8_t((uint8_t(w[i]) & 0xF) << (i % 2 ? 4 : 0));
    for (Layout l : {Layout::v81, Layout::v85}) {
        in_child([&, l] {
            Session s(l);
            void *dx = s.upload(x), *ds = s.upload(scale), *dy = s.malloc(2 * m * n);
            cann::aclTensor *tx = s.tensor(dx, cann::ACL_FLOAT16, {m, k}),
                            *ts = s.tensor(ds, cann::ACL_FLOAT16, {groups, n}, {1, groups});
            for (const auto &[data, dtype] : {std::pair{s.upload(w), cann::ACL_INT8},
                                              std::pair{s.upload(w4), cann::ACL_INT4}}) {
                std::vector<float> got(m * n);
                GGUFTOOL_TEST_ACLNN(s, WeightQuantBatchMatmulV2, tx,
                                    s.tensor(data, dtype, {k, n}, {1, k}), ts, nullptr, nullptr,
                                    nullptr, nullptr, 32, s.tensor(dy, cann::ACL_FLOAT16, {m, n}));
                const std::vector<uint16_t> y = s.download<uint16_t>(dy, size_t(m * n));
                for (size_t i = 0; i < got.size(); ++i) got[i] = fp16_to_f32(y[i]);
                EXPECT_EQ(got, want) << cann::aclDataType(dtype);
            }
        });
    }
}

// What the page refuses: a FLOAT x, a group size that is not a multiple of 32, a scale of the
// wrong shape, and on the 310P an INT4 weight (INT8 only there).
TEST(CannEmulatorOperators, WeightQuantBatchMatmulV2RefusesWhatItsPageRefuses) {
    for (const char *soc : {"Ascend910B1", "Ascend310P3"}) {
        in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", soc}}, [soc] {
            Session s;
            constexpr int64_t m = 1, k = 64, n = 2;
            void *dx = s.malloc(4 * m * k), *dw = s.malloc(k * n), *ds = s.malloc(2 * 2 * n),
                 *dy = s.malloc(4 * m * n);
            const auto phase1 = [&](cann::aclDataType xt, cann::aclDataType wt,
                                    std::vector<int64_t> sdims, int group) {
                uint64_t size = 0;
                cann::aclOpExecutor *e = nullptr;
                return s.api.aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(
                    s.tensor(dx, xt, {m, k}), s.tensor(dw, wt, {k, n}), s.tensor(ds, xt, sdims),
                    nullptr, nullptr, nullptr, nullptr, group, s.tensor(dy, xt, {m, n}), &size, &e);
            };
            const bool p310 = std::string(soc) == "Ascend310P3";
            EXPECT_EQ(phase1(cann::ACL_FLOAT16, cann::ACL_INT8, {2, n}, 32), 0) << recent(s.api);
            EXPECT_EQ(phase1(cann::ACL_FLOAT, cann::ACL_INT8, {2, n}, 32),
                      cann::kAclnnErrParamInvalid);
            EXPECT_THAT(recent(s.api), HasSubstr("FLOAT"));
            EXPECT_EQ(phase1(cann::ACL_FLOAT16, cann::ACL_INT8, {4, n}, 16),
                      cann::kAclnnErrParamInvalid);
            EXPECT_THAT(recent(s.api), HasSubstr("antiquantGroupSize 16"));
            EXPECT_EQ(phase1(cann::ACL_FLOAT16, cann::ACL_INT8, {3, n}, 32),
                      cann::kAclnnErrParamInvalid);
            EXPECT_THAT(recent(s.api), HasSubstr("antiquantScale's shape"));
            EXPECT_EQ(phase1(cann::ACL_FLOAT16, cann::ACL_INT4, {2, n}, 32),
                      p310 ? cann::kAclnnErrParamInvalid : 0);
            if (p310) {
                EXPECT_THAT(recent(s.api), HasSubstr("Ascend310P3"));
            }
        });
    }
}

}  // namespace
}  // namespace gguftool::cann_emulator_test
