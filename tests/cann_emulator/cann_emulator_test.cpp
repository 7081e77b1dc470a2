// The CANN emulation's libraries and the rules it enforces for the runtime, device memory,
// tensor objects, executors and streams (operators: cann_emulator_ops_test.cpp; ATB:
// cann_emulator_atb_test.cpp). Each test that initializes CANN runs in a child process.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "emulator_session.hpp"

namespace gguftool::cann_emulator_test {
namespace {

using ::testing::HasSubstr;

// The dynamic symbols a library defines (nm -D), without the linker's _init/_fini.
std::set<std::string> exported(const std::string &path) {
    std::set<std::string> names;
    FILE *p = popen(("nm -D --defined-only --format=posix '" + path + "'").c_str(), "r");
    EXPECT_NE(p, nullptr);
    if (!p) return names;
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
        std::istringstream in(line);
        std::string name;
        in >> name;
        if (name != "_init" && name != "_fini") names.insert(name);
    }
    pclose(p);
    return names;
}

std::set<std::string> runtime_names() {
    std::set<std::string> s{cann::kEmulatorMarkerSymbol};
#define GGUFTOOL_TEST_NAME(name, ret, params) s.insert(#name);
    GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_TEST_NAME)
    return s;
}
std::set<std::string> nnopbase_names() {
    std::set<std::string> s;
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_TEST_NAME)
#undef GGUFTOOL_TEST_NAME
    return s;
}
// The operators of `library` ("math", "nn", or "" for all), both phases, leaving out `except`.
std::set<std::string> operator_names(const std::string &library, const std::string &except = "") {
    std::set<std::string> s;
#define GGUFTOOL_TEST_NAME(name, lib, params)                      \
    if ((library.empty() || library == #lib) && except != #name) { \
        s.insert("aclnn" #name);                                   \
        s.insert("aclnn" #name "GetWorkspaceSize");                \
    }
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_TEST_NAME)
#undef GGUFTOOL_TEST_NAME
    return s;
}

TEST(CannEmulatorLibraries, ExportExactlyTheAbiSubsetOfEachLayout) {
    const std::string d81 = layout_dir(Layout::v81), d85 = layout_dir(Layout::v85);
    EXPECT_EQ(exported(d81 + "/libascendcl.so"), runtime_names());
    EXPECT_EQ(exported(d85 + "/libacl_rt.so"), runtime_names());
    EXPECT_EQ(exported(d81 + "/libnnopbase.so"), nnopbase_names());
    EXPECT_EQ(exported(d85 + "/libnnopbase.so"), nnopbase_names());
    EXPECT_EQ(exported(d81 + "/libopapi.so"), operator_names("", "RightShift"));
    EXPECT_EQ(exported(d85 + "/libopapi_math.so"), operator_names("math"));
    EXPECT_EQ(exported(d85 + "/libopapi_nn.so"), operator_names("nn"));
    std::set<std::string> atb;
#define GGUFTOOL_TEST_NAME(name, symbol, ret, params) atb.insert(symbol);
    GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_TEST_NAME)
#undef GGUFTOOL_TEST_NAME
    EXPECT_EQ(exported(atb_path()), atb);
}

TEST(CannEmulatorLibraries, LoadFromTheirDirectoriesAndResolve) {
    for (Layout l : {Layout::v81, Layout::v85}) {
        in_child([l] {
            const Cann c = load(l);
            EXPECT_NE(c.aclInit, nullptr);
            EXPECT_NE(c.aclCreateTensor, nullptr);
            EXPECT_NE(c.aclnnCastGetWorkspaceSize, nullptr);
            EXPECT_NE(c.aclnnGatherV2, nullptr);
            EXPECT_NE(c.atbCreateOnehotOperation, nullptr);
            // CANN 8.1 has no aclnnRightShift; 8.5's libopapi_math.so has it.
            EXPECT_EQ(c.aclnnRightShiftGetWorkspaceSize == nullptr, l == Layout::v81);
            EXPECT_EQ(c.aclnnRightShift == nullptr, l == Layout::v81);
            ASSERT_NE(c.description, nullptr);
            const std::string d = c.description();
            EXPECT_THAT(d, HasSubstr("CANN emulation"));
            EXPECT_THAT(d, HasSubstr("SoC Ascend910B1"));
            EXPECT_THAT(d, HasSubstr(l == Layout::v81 ? "CANN 8.1 layout" : "CANN 8.5 layout"));
        });
    }
    in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", "Ascend310P3"}}, [] {
        EXPECT_THAT(std::string(load(Layout::v81).description()), HasSubstr("SoC Ascend310P3"));
    });
}

TEST(CannEmulatorRuntime, InitializesOnceAndNeedsInitAndDevice) {
    in_child([] {
        const Cann c = load(Layout::v81);
        uint32_t n = 0;
        EXPECT_EQ(c.aclrtGetDeviceCount(&n), 100001);  // ACL_ERROR_UNINITIALIZE
        EXPECT_THAT(recent(c), HasSubstr("aclInit"));
        EXPECT_EQ(c.aclrtSetDevice(0), 100001);
        ASSERT_EQ(c.aclInit(nullptr), 0);
        EXPECT_EQ(c.aclInit(nullptr), cann::kAclErrorRepeatInitialize);
        EXPECT_THAT(recent(c), HasSubstr("aclInit"));
        void *p = nullptr;
        EXPECT_EQ(c.aclrtMalloc(&p, 64, cann::ACL_MEM_MALLOC_HUGE_FIRST), 107002);  // no device
        EXPECT_THAT(recent(c), HasSubstr("aclrtSetDevice"));
        EXPECT_EQ(c.aclrtSetDevice(0), 0);
        EXPECT_EQ(c.aclrtMalloc(&p, 64, cann::ACL_MEM_MALLOC_HUGE_FIRST), 0);
        EXPECT_STREQ(c.aclrtGetSocName(), "Ascend910B1");
        EXPECT_EQ(c.aclFinalize(), 0);
        EXPECT_EQ(c.aclInit(nullptr), cann::kAclErrorRepeatInitialize);
        EXPECT_EQ(c.aclrtSetDevice(0), 100001);
        EXPECT_THAT(recent(c), HasSubstr("after aclFinalize"));
    });
}

TEST(CannEmulatorRuntime, DeviceIdsComeFromTheDeviceCount) {
    in_child([] {
        const Cann c = load(Layout::v85);
        ASSERT_EQ(c.aclInit(nullptr), 0);
        uint32_t n = 0;
        EXPECT_EQ(c.aclrtGetDeviceCount(&n), 0);
        EXPECT_EQ(n, 1u);
        EXPECT_EQ(c.aclrtSetDevice(1), cann::kAclErrorRtInvalidDeviceId);
        EXPECT_THAT(recent(c), HasSubstr("GGUFTOOL_CANN_EMULATOR_DEVICES"));
        EXPECT_EQ(c.aclrtSetDevice(-1), cann::kAclErrorRtInvalidDeviceId);
        EXPECT_EQ(c.aclrtSetDevice(0), 0);
    });
    in_child({{"GGUFTOOL_CANN_EMULATOR_DEVICES", "2"}}, [] {
        const Cann c = load(Layout::v85);
        ASSERT_EQ(c.aclInit(nullptr), 0);
        uint32_t n = 0;
        EXPECT_EQ(c.aclrtGetDeviceCount(&n), 0);
        EXPECT_EQ(n, 2u);
        EXPECT_EQ(c.aclrtSetDevice(1), 0);
        EXPECT_EQ(c.aclrtSetDevice(2), cann::kAclErrorRtInvalidDeviceId);
        EXPECT_EQ(c.aclrtResetDevice(1), 0);
        EXPECT_EQ(c.aclrtResetDevice(1), cann::kAclErrorRtInvalidDeviceId);  // not set any more
    });
}

TEST(CannEmulatorRuntime, SocComesFromTheEnvironment) {
    in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", "Ascend310P3"}}, [] {
        const Cann c = load(Layout::v81);
        ASSERT_EQ(c.aclInit(nullptr), 0);
        EXPECT_STREQ(c.aclrtGetSocName(), "Ascend310P3");
    });
    in_child({{"GGUFTOOL_CANN_EMULATOR_SOC", "Ascend999X"}}, [] {
        const Cann c = load(Layout::v81);
        EXPECT_NE(c.aclInit(nullptr), 0);
        const std::string m = recent(c);
        EXPECT_THAT(m, HasSubstr("Ascend999X"));
        EXPECT_THAT(m, HasSubstr("Ascend910B1"));
        EXPECT_THAT(m, HasSubstr("Ascend310P3"));
        EXPECT_EQ(c.aclrtSetDevice(0), 100001);  // still uninitialized
    });
}

TEST(CannEmulatorMemory, DevicePointerIsNotReadableOnTheHost) {
    EXPECT_DEATH(
        {
            Session s;
            const volatile unsigned char *p = static_cast<unsigned char *>(s.malloc(64));
            std::printf("%d\n", p[0]);
        },
        "");
}

TEST(CannEmulatorMemory, AllocationsAreAlignedSizedAndNeverReused) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        std::vector<unsigned char> host(200, 7);
        void *a = s.malloc(40);  // usable: 40 rounded up to 32 is 64, plus 32
        EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
        const auto h2d = [&](void *dst, size_t n) {
            return c.aclrtMemcpy(dst, n, host.data(), n, cann::ACL_MEMCPY_HOST_TO_DEVICE);
        };
        EXPECT_EQ(h2d(a, 96), 0) << recent(c);
        EXPECT_NE(h2d(a, 97), 0);
        EXPECT_THAT(recent(c), HasSubstr("past the end"));
        EXPECT_NE(h2d(static_cast<char *>(a) + 90, 7), 0);
        void *b = s.malloc(40);
        EXPECT_NE(c.aclrtFree(static_cast<char *>(a) + 64), 0);
        EXPECT_THAT(recent(c), HasSubstr("not an address aclrtMalloc returned"));
        EXPECT_NE(c.aclrtFree(host.data()), 0);
        EXPECT_THAT(recent(c), HasSubstr("not device memory"));
        EXPECT_EQ(c.aclrtFree(a), 0);
        EXPECT_NE(c.aclrtFree(a), 0);
        EXPECT_THAT(recent(c), HasSubstr("double free"));
        EXPECT_NE(h2d(a, 8), 0);
        EXPECT_THAT(recent(c), HasSubstr("freed"));
        void *again = s.malloc(40);
        EXPECT_NE(again, a);
        EXPECT_NE(again, b);
        void *p = nullptr;
        EXPECT_NE(c.aclrtMalloc(&p, 0, cann::ACL_MEM_MALLOC_HUGE_FIRST), 0);
        // Fresh memory is not zeroed.
        std::vector<unsigned char> back(8);
        EXPECT_EQ(c.aclrtMemcpy(back.data(), 8, b, 8, cann::ACL_MEMCPY_DEVICE_TO_HOST), 0);
        EXPECT_NE(back, std::vector<unsigned char>(8, 0));
    });
}

TEST(CannEmulatorMemory, CopiesCheckEachSideAgainstTheKind) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        std::vector<float> host{1, 2, 3, 4}, back(4);
        void *d = s.malloc(16);
        EXPECT_NE(c.aclrtMemcpy(back.data(), 16, host.data(), 16, cann::ACL_MEMCPY_HOST_TO_DEVICE),
                  0);
        EXPECT_THAT(recent(c), HasSubstr("not device memory"));
        EXPECT_NE(c.aclrtMemcpy(d, 16, d, 16, cann::ACL_MEMCPY_HOST_TO_DEVICE), 0);
        EXPECT_THAT(recent(c), HasSubstr("is device memory"));
        EXPECT_NE(c.aclrtMemcpy(d, 8, host.data(), 16, cann::ACL_MEMCPY_HOST_TO_DEVICE), 0);
        EXPECT_THAT(recent(c), HasSubstr("destMax"));
        EXPECT_EQ(c.aclrtMemcpy(d, 16, host.data(), 16, cann::ACL_MEMCPY_HOST_TO_DEVICE), 0);
        void *e = s.malloc(16);
        EXPECT_EQ(c.aclrtMemcpy(e, 16, d, 16, cann::ACL_MEMCPY_DEVICE_TO_DEVICE), 0);
        EXPECT_EQ(c.aclrtMemcpy(back.data(), 16, e, 16, cann::ACL_MEMCPY_DEVICE_TO_HOST), 0);
        EXPECT_EQ(back, host);
    });
}

// A [4] FLOAT view over 16 elements of storage.
constexpr int64_t kDims[] = {4}, kStrides[] = {1}, kStorage[] = {16};

TEST(CannEmulatorTensors, CreationChecksDataAlignmentAndExtent) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        std::vector<float> host(16);
        char *d = static_cast<char *>(s.malloc(64));  // 64 usable bytes + 32: 24 floats
        const auto create = [&](void *data, const int64_t *st = kStrides, int64_t offset = 0,
                                const int64_t *sd = kStorage, uint64_t rank = 1,
                                cann::aclDataType t = cann::ACL_FLOAT,
                                cann::aclFormat f = cann::ACL_FORMAT_ND) {
            return c.aclCreateTensor(kDims, rank, t, st, offset, f, sd, 1, data);
        };
        cann::aclTensor *ok = create(d);
        EXPECT_NE(ok, nullptr) << recent(c);
        EXPECT_EQ(create(host.data()), nullptr);
        EXPECT_THAT(recent(c), HasSubstr("host address"));
        EXPECT_EQ(create(d + 16), nullptr);
        EXPECT_THAT(recent(c), HasSubstr("32-byte aligned"));
        EXPECT_NE(create(d + 32), nullptr) << recent(c);
        const int64_t wide[] = {6};
        EXPECT_EQ(create(d, wide), nullptr);  // reaches element 18 of 16
        EXPECT_THAT(recent(c), HasSubstr("storage dims"));
        const int64_t too_big[] = {25};
        EXPECT_EQ(create(d, kStrides, 0, too_big), nullptr);
        EXPECT_THAT(recent(c), HasSubstr("past the end"));
        const int64_t negative[] = {-1};
        EXPECT_EQ(create(d, negative), nullptr);
        EXPECT_EQ(create(d, kStrides, -1), nullptr);
        EXPECT_EQ(create(d, kStrides, 0, kStorage, 9), nullptr);
        EXPECT_EQ(create(d, kStrides, 0, kStorage, 1, cann::aclDataType(5)), nullptr);
        EXPECT_EQ(create(d, kStrides, 0, kStorage, 1, cann::ACL_FLOAT, cann::aclFormat(0)),
                  nullptr);
        EXPECT_THAT(recent(c), HasSubstr("ACL_FORMAT_ND"));
        const int64_t none[] = {0};
        EXPECT_NE(c.aclCreateTensor(none, 1, cann::ACL_FLOAT, kStrides, 0, cann::ACL_FORMAT_ND,
                                    none, 1, nullptr),
                  nullptr)
            << recent(c);
        EXPECT_EQ(c.aclDestroyTensor(ok), 0);
        EXPECT_NE(c.aclDestroyTensor(ok), 0);
        EXPECT_THAT(recent(c), HasSubstr("already destroyed"));
    });
}

TEST(CannEmulatorTensors, ObjectsAnExecutorNeedsOutliveItsLaunch) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        void *x = s.upload(std::vector<float>{1, 2});
        void *y = s.malloc(8);
        cann::aclTensor *in = s.tensor(x, cann::ACL_FLOAT, {2});
        cann::aclTensor *out = s.tensor(y, cann::ACL_FLOAT, {2});
        float value = 2;
        cann::aclScalar *two = c.aclCreateScalar(&value, cann::ACL_FLOAT);
        value = 100;  // the scalar holds a copy
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        ASSERT_EQ(c.aclnnMulsGetWorkspaceSize(in, two, out, &size, &e), 0) << recent(c);
        EXPECT_EQ(c.aclDestroyTensor(in), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("aclnnMuls"));
        EXPECT_EQ(c.aclDestroyScalar(two), cann::kAclnnErrParamInvalid);
        ASSERT_EQ(c.aclnnMuls(size ? s.malloc(size) : nullptr, size, e, s.stream), 0) << recent(c);
        EXPECT_EQ(c.aclDestroyTensor(in), 0) << recent(c);
        EXPECT_EQ(c.aclDestroyScalar(two), 0) << recent(c);
        EXPECT_EQ(s.download<float>(y, 2), (std::vector<float>{2, 4}));

        // A tensor list owns its tensors.
        const cann::aclTensor *parts[] = {s.tensor(x, cann::ACL_FLOAT, {1}),
                                          s.tensor(x, cann::ACL_FLOAT, {1}, {1}, 1)};
        cann::aclTensorList *list = c.aclCreateTensorList(parts, 2);
        ASSERT_NE(list, nullptr) << recent(c);
        EXPECT_EQ(c.aclDestroyTensor(parts[0]), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("belongs to tensor list"));
        ASSERT_EQ(c.aclnnCatGetWorkspaceSize(list, 0, out, &size, &e), 0) << recent(c);
        EXPECT_EQ(c.aclDestroyTensorList(list), cann::kAclnnErrParamInvalid);
        ASSERT_EQ(c.aclnnCat(s.malloc(size), size, e, s.stream), 0) << recent(c);
        EXPECT_EQ(c.aclDestroyTensorList(list), 0) << recent(c);
        EXPECT_NE(c.aclDestroyTensor(parts[1]), 0);  // destroyed with the list
        EXPECT_EQ(s.download<float>(y, 2), (std::vector<float>{1, 2}));
    });
}

TEST(CannEmulatorExecutors, RunOnceOnTheirOwnOperatorWithTheirWorkspace) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        void *x = s.upload(std::vector<float>(8, 1.5f));
        void *y = s.malloc(16);
        cann::aclTensor *in = s.tensor(x, cann::ACL_FLOAT, {8});
        cann::aclTensor *out = s.tensor(y, cann::ACL_FLOAT16, {8});
        uint64_t size = 0;
        cann::aclOpExecutor *e = nullptr;
        ASSERT_EQ(c.aclnnCastGetWorkspaceSize(in, cann::ACL_FLOAT16, out, &size, &e), 0)
            << recent(c);
        ASSERT_GT(size, 0u);
        void *ws = s.malloc(size), *other = s.malloc(size);
        std::vector<char> host_ws(size);
        EXPECT_EQ(c.aclnnCast(ws, size - 1, e, s.stream), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("smaller than"));
        EXPECT_EQ(c.aclnnCast(nullptr, size, e, s.stream), cann::kAclnnErrParamInvalid);
        EXPECT_EQ(c.aclnnCast(host_ws.data(), size, e, s.stream), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("workspace"));
        // 40 bytes into an allocation of `size` (usable: size + 32) leaves fewer than size.
        EXPECT_EQ(c.aclnnCast(static_cast<char *>(other) + 40, size, e, s.stream),
                  cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("past the end"));
        EXPECT_EQ(c.aclnnNeg(ws, size, e, s.stream), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("aclnnCastGetWorkspaceSize"));
        EXPECT_EQ(c.aclnnCast(ws, size, e, nullptr), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("stream"));
        EXPECT_EQ(c.aclnnCast(ws, size, e, s.stream), 0) << recent(c);
        EXPECT_EQ(c.aclnnCast(ws, size, e, s.stream), cann::kAclnnErrParamInvalid);
        EXPECT_THAT(recent(c), HasSubstr("already launched"));
        EXPECT_EQ(s.download<uint16_t>(y, 8), std::vector<uint16_t>(8, 0x3E00));  // 1.5
        EXPECT_EQ(c.aclnnCastGetWorkspaceSize(in, cann::ACL_FLOAT16, out, nullptr, &e),
                  cann::kAclnnErrParamNullptr);
        EXPECT_EQ(c.aclnnCastGetWorkspaceSize(nullptr, cann::ACL_FLOAT16, out, &size, &e),
                  cann::kAclnnErrParamNullptr);
        EXPECT_THAT(recent(c), HasSubstr("self is null"));
    });
}

TEST(CannEmulatorStreams, WorkRunsAtSynchronizeInLaunchOrder) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        void *x = s.upload(std::vector<int32_t>{1, -2, 3});
        void *y = s.malloc(12);
        void *z = s.malloc(12);
        cann::aclTensor *tx = s.tensor(x, cann::ACL_INT32, {3}),
                        *ty = s.tensor(y, cann::ACL_INT32, {3}),
                        *tz = s.tensor(z, cann::ACL_INT32, {3});
        GGUFTOOL_TEST_ACLNN(s, Neg, tx, ty);
        GGUFTOOL_TEST_ACLNN(s, Neg, ty, tz);  // reads what the first writes
        std::vector<int32_t> back(3);
        // Nothing ran yet, and copies do not wait: reading y or z, or writing x, is refused.
        EXPECT_NE(c.aclrtMemcpy(back.data(), 12, y, 12, cann::ACL_MEMCPY_DEVICE_TO_HOST), 0);
        EXPECT_THAT(recent(c), HasSubstr("pending"));
        EXPECT_THAT(recent(c), HasSubstr("aclnnNeg"));
        EXPECT_NE(c.aclrtMemcpy(x, 12, back.data(), 12, cann::ACL_MEMCPY_HOST_TO_DEVICE), 0);
        EXPECT_THAT(recent(c), HasSubstr("pending"));
        EXPECT_NE(c.aclrtMemcpy(z, 12, y, 12, cann::ACL_MEMCPY_DEVICE_TO_DEVICE), 0);
        // Reading what queued work only reads is fine.
        EXPECT_EQ(c.aclrtMemcpy(back.data(), 12, x, 12, cann::ACL_MEMCPY_DEVICE_TO_HOST), 0);
        EXPECT_NE(c.aclrtFree(x), 0);
        EXPECT_THAT(recent(c), HasSubstr("pending"));
        EXPECT_NE(c.aclrtDestroyStream(s.stream), 0);
        EXPECT_THAT(recent(c), HasSubstr("pending"));
        EXPECT_EQ(s.download<int32_t>(z, 3), (std::vector<int32_t>{1, -2, 3}));
        EXPECT_EQ(s.download<int32_t>(y, 3), (std::vector<int32_t>{-1, 2, -3}));
        EXPECT_EQ(c.aclrtFree(x), 0) << recent(c);
        EXPECT_EQ(c.aclrtDestroyStream(s.stream), 0) << recent(c);
        EXPECT_NE(c.aclrtSynchronizeStream(s.stream), 0);
        EXPECT_THAT(recent(c), HasSubstr("destroyed"));
    });
}

TEST(CannEmulatorStreams, ExecutionErrorsFailTheSynchronize) {
    in_child([] {
        Session s;
        const Cann &c = s.api;
        void *a = s.upload(std::vector<int32_t>{7, 8}), *b = s.upload(std::vector<int32_t>{2, 0});
        void *q = s.malloc(8);
        GGUFTOOL_TEST_ACLNN(s, FloorDivide, s.tensor(a, cann::ACL_INT32, {2}),
                            s.tensor(b, cann::ACL_INT32, {2}), s.tensor(q, cann::ACL_INT32, {2}));
        EXPECT_EQ(c.aclrtSynchronizeStream(s.stream), cann::kAclErrorRtAicoreException);
        EXPECT_THAT(recent(c), HasSubstr("aclnnFloorDivide"));
        EXPECT_THAT(recent(c), HasSubstr("division by zero"));
        EXPECT_EQ(c.aclrtSynchronizeStream(s.stream), 0);  // the queue is empty again
    });
}

TEST(CannEmulatorLog, RecordsEachLaunchWithDtypesAndWhereItRuns) {
    const std::string log = ::testing::TempDir() + "cann_emulator_call_log.txt";
    std::remove(log.c_str());
    in_child({{"GGUFTOOL_CANN_EMULATOR_LOG", log}}, [] {
        Session s;
        void *a = s.upload(std::vector<uint8_t>{0xF0, 0x3C}),
             *b = s.upload(std::vector<int32_t>{0xF0, 0x3C});
        void *f = s.upload(std::vector<float>{1, 2}), *g = s.upload(std::vector<double>{1, 2});
        void *y = s.malloc(16);
        cann::aclTensor *ta = s.tensor(a, cann::ACL_UINT8, {2}),
                        *tb = s.tensor(b, cann::ACL_INT32, {2});
        GGUFTOOL_TEST_ACLNN(s, BitwiseAndTensor, ta, ta, s.tensor(y, cann::ACL_UINT8, {2}));
        GGUFTOOL_TEST_ACLNN(s, BitwiseAndTensor, tb, tb, s.tensor(y, cann::ACL_INT32, {2}));
        GGUFTOOL_TEST_ACLNN(s, Cast, s.tensor(f, cann::ACL_FLOAT, {2}), cann::ACL_FLOAT16,
                            s.tensor(y, cann::ACL_FLOAT16, {2}));
        GGUFTOOL_TEST_ACLNN(s, Cast, s.tensor(g, cann::ACL_DOUBLE, {2}), cann::ACL_FLOAT16,
                            s.tensor(y, cann::ACL_FLOAT16, {2}));
        EXPECT_EQ(s.api.aclrtSynchronizeStream(s.stream), 0);
    });
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    EXPECT_EQ(lines, (std::vector<std::string>{"aclnnBitwiseAndTensor UINT8 UINT8 UINT8 aicpu",
                                               "aclnnBitwiseAndTensor INT32 INT32 INT32 aicore",
                                               "aclnnCast FLOAT FLOAT16 aicore",
                                               "aclnnCast DOUBLE FLOAT16 aicpu"}));
}

}  // namespace
}  // namespace gguftool::cann_emulator_test
