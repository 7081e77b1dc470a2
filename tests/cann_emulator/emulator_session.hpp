// Test support: the CANN emulation loaded as the backend loads CANN (dlopen by path, RTLD_NOW |
// RTLD_LOCAL, every function of cann_api.hpp's lists resolved), a session on it (aclInit, device
// 0, one stream) with helpers for device buffers, tensors and two-phase launches, and a way to run
// a test body in a child process: CANN initializes once per process and reads its environment
// variables at aclInit.
#pragma once

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/backends/ascend/cann_api.hpp"

namespace gguftool::cann_emulator_test {

namespace cann = gguftool::cann;

enum class Layout { v81, v85 };

inline std::string layout_dir(Layout l) {
    return std::string(GGUFTOOL_CANN_EMULATOR_DIR) + (l == Layout::v81 ? "/8.1" : "/8.5");
}
inline std::string atb_path() {
    return std::string(GGUFTOOL_CANN_EMULATOR_DIR) + "/atb/lib/libatb.so";
}

// The libraries of a layout, in the order: runtime, nnopbase, operator libraries.
inline std::vector<std::string> layout_libraries(Layout l) {
    const std::string d = layout_dir(l) + "/";
    if (l == Layout::v81) return {d + "libascendcl.so", d + "libnnopbase.so", d + "libopapi.so"};
    return {d + "libacl_rt.so", d + "libnnopbase.so", d + "libopapi_math.so", d + "libopapi_nn.so"};
}

inline void *open_library(const std::string &path) {
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(h, nullptr) << path << ": " << dlerror();
    return h;
}

// Every function the backend calls, resolved from one layout; an absent operator stays null.
struct Cann {
#define GGUFTOOL_TEST_POINTER(name, ret, params) cann::fn::name *name = nullptr;
    GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_TEST_POINTER)
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_TEST_POINTER)
#undef GGUFTOOL_TEST_POINTER
#define GGUFTOOL_TEST_OPERATOR(name, library, params)                                 \
    cann::fn::aclnn##name##GetWorkspaceSize *aclnn##name##GetWorkspaceSize = nullptr; \
    cann::fn::aclnnLaunch *aclnn##name = nullptr;
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_TEST_OPERATOR)
#undef GGUFTOOL_TEST_OPERATOR
#define GGUFTOOL_TEST_ATB(name, symbol, ret, params) cann::fn::atb##name *atb##name = nullptr;
    GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_TEST_ATB)
#undef GGUFTOOL_TEST_ATB
    cann::EmulatorDescriptionFn *description = nullptr;
};

inline Cann load(Layout layout) {
    Cann c;
    const std::vector<std::string> libs = layout_libraries(layout);
    std::vector<void *> h;
    for (const std::string &path : libs) h.push_back(open_library(path));
    const auto find = [&](size_t first, size_t last, const char *symbol) -> void * {
        for (size_t i = first; i <= last && i < h.size(); ++i)
            if (void *p = h[i] ? dlsym(h[i], symbol) : nullptr) return p;
        return nullptr;
    };
#define GGUFTOOL_TEST_RESOLVE(index, name) \
    c.name = reinterpret_cast<decltype(c.name)>(find(index, index, #name));
#define GGUFTOOL_TEST_RUNTIME(name, ret, params) GGUFTOOL_TEST_RESOLVE(0, name)
#define GGUFTOOL_TEST_NNOPBASE(name, ret, params) GGUFTOOL_TEST_RESOLVE(1, name)
    GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_TEST_RUNTIME)
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_TEST_NNOPBASE)
#define GGUFTOOL_TEST_OPERATOR(name, library, params)                                              \
    c.aclnn##name##GetWorkspaceSize = reinterpret_cast<decltype(c.aclnn##name##GetWorkspaceSize)>( \
        find(2, 3, "aclnn" #name "GetWorkspaceSize"));                                             \
    c.aclnn##name = reinterpret_cast<cann::fn::aclnnLaunch *>(find(2, 3, "aclnn" #name));
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_TEST_OPERATOR)
#undef GGUFTOOL_TEST_OPERATOR
#undef GGUFTOOL_TEST_RUNTIME
#undef GGUFTOOL_TEST_NNOPBASE
#undef GGUFTOOL_TEST_RESOLVE
    c.description =
        reinterpret_cast<cann::EmulatorDescriptionFn *>(find(0, 0, cann::kEmulatorMarkerSymbol));
    if (void *atb = open_library(atb_path())) {
#define GGUFTOOL_TEST_ATB(name, symbol, ret, params) \
    c.atb##name = reinterpret_cast<cann::fn::atb##name *>(dlsym(atb, symbol));
        GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_TEST_ATB)
#undef GGUFTOOL_TEST_ATB
    }
    return c;
}

// Runs `body` in a child process (a fresh CANN) with `env` set; its failures are printed there and
// fail the test here, as does its death by a signal.
template <class F>
void in_child(const std::map<std::string, std::string> &env, F body) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        for (const auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
        body();
        std::fflush(stdout);
        std::fflush(stderr);
        // _exit: no at-exit handlers in the forked child. LeakSanitizer's exit-time check after a
        // fork crashed in its own tracer thread here (clang 14) and would only report the
        // emulation state the child leaves on purpose; the parent is still checked.
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        ADD_FAILURE() << "the child process died of signal " << WTERMSIG(status);
    else
        EXPECT_EQ(WEXITSTATUS(status), 0) << "the child process failed (its failures are above)";
}
template <class F>
void in_child(F body) {
    in_child({}, body);
}

inline std::string recent(const Cann &c) {
    const char *m = c.aclGetRecentErrMsg();
    return m ? m : "";
}

// Dense row-major strides.
inline std::vector<int64_t> dense(const std::vector<int64_t> &dims) {
    std::vector<int64_t> s(dims.size());
    int64_t step = 1;
    for (size_t i = dims.size(); i-- > 0;) {
        s[i] = step;
        step *= dims[i];
    }
    return s;
}

// CANN initialized on device 0 with one stream.
class Session {
public:
    explicit Session(Layout layout = Layout::v85) : api(load(layout)) {
        EXPECT_EQ(api.aclInit(nullptr), 0) << recent(api);
        EXPECT_EQ(api.aclrtSetDevice(0), 0) << recent(api);
        EXPECT_EQ(api.aclrtCreateStream(&stream), 0) << recent(api);
    }

    void *malloc(size_t bytes) {
        void *p = nullptr;
        EXPECT_EQ(api.aclrtMalloc(&p, bytes, cann::ACL_MEM_MALLOC_HUGE_FIRST), 0) << recent(api);
        return p;
    }
    template <class T>
    void *upload(const std::vector<T> &host) {
        void *p = malloc(host.size() * sizeof(T));
        EXPECT_EQ(api.aclrtMemcpy(p, host.size() * sizeof(T), host.data(), host.size() * sizeof(T),
                                  cann::ACL_MEMCPY_HOST_TO_DEVICE),
                  0)
            << recent(api);
        return p;
    }
    // Synchronizes, then copies n elements back.
    template <class T>
    std::vector<T> download(const void *device, size_t n) {
        EXPECT_EQ(api.aclrtSynchronizeStream(stream), 0) << recent(api);
        std::vector<T> host(n);
        EXPECT_EQ(api.aclrtMemcpy(host.data(), n * sizeof(T), device, n * sizeof(T),
                                  cann::ACL_MEMCPY_DEVICE_TO_HOST),
                  0)
            << recent(api);
        return host;
    }

    // A tensor over `data`: dense unless strides are given; storage = the elements the view
    // reaches.
    cann::aclTensor *tensor(void *data, cann::aclDataType dtype, std::vector<int64_t> dims,
                            std::vector<int64_t> strides = {}, int64_t offset = 0) {
        if (strides.empty()) strides = dense(dims);
        int64_t last = offset;
        for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
        const int64_t storage = last + 1;
        cann::aclTensor *t = api.aclCreateTensor(dims.data(), dims.size(), dtype, strides.data(),
                                                 offset, cann::ACL_FORMAT_ND, &storage, 1, data);
        EXPECT_NE(t, nullptr) << recent(api);
        return t;
    }
    template <class T>
    cann::aclScalar *scalar(T value, cann::aclDataType dtype) {
        cann::aclScalar *s = api.aclCreateScalar(&value, dtype);
        EXPECT_NE(s, nullptr) << recent(api);
        return s;
    }

    // Phase one with `args`, a workspace of the size it asks for, phase two on the stream.
    template <class Phase1, class... Args>
    void launch(Phase1 *phase1, cann::fn::aclnnLaunch *phase2, Args... args) {
        ASSERT_NE(phase1, nullptr);
        ASSERT_NE(phase2, nullptr);
        uint64_t size = 0;
        cann::aclOpExecutor *executor = nullptr;
        ASSERT_EQ(phase1(args..., &size, &executor), 0) << recent(api);
        void *workspace = size ? malloc(size) : nullptr;
        ASSERT_EQ(phase2(workspace, size, executor, stream), 0) << recent(api);
    }

    Cann api;
    cann::aclrtStream stream = nullptr;
};

// The launch of aclnn operator `name` in session `s`.
#define GGUFTOOL_TEST_ACLNN(s, name, ...) \
    (s).launch((s).api.aclnn##name##GetWorkspaceSize, (s).api.aclnn##name, __VA_ARGS__)

}  // namespace gguftool::cann_emulator_test
