// The CANN ABI the Ascend backend uses, declared by this project from CANN's public sources (the
// signatures are those of CANN 8.1.RC1's acl/, aclnn/, aclnnop/ and atb/ headers and of the
// hicann repositories runtime, opbase, ops-math, ops-nn and ascend-transformer-boost): typedefs,
// enum values, the ATB structs it passes, and one X-macro list per library of every C function it
// calls. No CANN header is needed to build; `cann_abi_check` (tools/cann_abi_check.cpp) compiles
// these against the real headers and checks every value, layout and function type.
//
// The same lists declare the functions the CANN emulation (tests/cann_emulator) defines and the
// loader (cann_loader.cpp) resolves, so the three cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gguftool::cann {

// --- acl_base.h, acl_meta.h -------------------------------------------------------------------
using aclError = int;
using aclnnStatus = int32_t;
using aclrtStream = void *;
inline constexpr aclError kAclSuccess = 0;  // ACL_SUCCESS, also ACLNN_SUCCESS

struct aclTensor;
struct aclScalar;
struct aclIntArray;
struct aclTensorList;
struct aclOpExecutor;

enum aclDataType : int {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_BF16 = 27,
    ACL_INT4 = 29,  // two per byte, the element of even index in the low nibble
};

enum aclFormat : int {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_ND = 2,
};

enum aclrtMemcpyKind : int {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
};

enum aclrtMemMallocPolicy : int {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
};

// Error codes the backend names in its messages (acl_base.h, rt_error_codes.h, op_errno.h).
inline constexpr aclError kAclErrorInvalidParam = 100000;      // ACL_ERROR_INVALID_PARAM
inline constexpr aclError kAclErrorRepeatInitialize = 100002;  // ACL_ERROR_REPEAT_INITIALIZE
inline constexpr aclError kAclErrorBadAlloc = 200000;          // ACL_ERROR_BAD_ALLOC
inline constexpr aclError kAclErrorInvalidDevice = 200002;     // ACL_ERROR_INVALID_DEVICE
inline constexpr aclError kAclErrorMemoryUnaligned = 200003;   // ACL_ERROR_MEMORY_ADDRESS_UNALIGNED
inline constexpr aclError kAclErrorRtParamInvalid = 107000;    // ACL_ERROR_RT_PARAM_INVALID
inline constexpr aclError kAclErrorRtInvalidDeviceId = 107001;    // ACL_ERROR_RT_INVALID_DEVICEID
inline constexpr aclError kAclErrorRtFeatureNotSupport = 207000;  // ..._RT_FEATURE_NOT_SUPPORT
inline constexpr aclError kAclErrorRtAicoreException = 507015;    // ACL_ERROR_RT_AICORE_EXCEPTION
inline constexpr aclnnStatus kAclnnErrParamNullptr = 161001;      // ACLNN_ERR_PARAM_NULLPTR
inline constexpr aclnnStatus kAclnnErrParamInvalid = 161002;      // ACLNN_ERR_PARAM_INVALID
inline constexpr aclnnStatus kAclnnErrRuntimeError = 361001;      // ACLNN_ERR_RUNTIME_ERROR
inline constexpr aclnnStatus kAclnnErrInner = 561000;             // ACLNN_ERR_INNER

// --- The C functions, per library --------------------------------------------------------------
// X(name, return type, (parameters)). Parameter names are the headers'.

// Runtime: libascendcl.so (8.1), libacl_rt.so (8.5 and later).
#define GGUFTOOL_CANN_RUNTIME_FUNCTIONS(X)                                              \
    X(aclInit, aclError, (const char *configPath))                                      \
    X(aclFinalize, aclError, ())                                                        \
    X(aclGetRecentErrMsg, const char *, ())                                             \
    X(aclrtSetDevice, aclError, (int32_t deviceId))                                     \
    X(aclrtResetDevice, aclError, (int32_t deviceId))                                   \
    X(aclrtGetDeviceCount, aclError, (uint32_t * count))                                \
    X(aclrtCreateStream, aclError, (aclrtStream * stream))                              \
    X(aclrtDestroyStream, aclError, (aclrtStream stream))                               \
    X(aclrtSynchronizeStream, aclError, (aclrtStream stream))                           \
    X(aclrtMalloc, aclError, (void **devPtr, size_t size, aclrtMemMallocPolicy policy)) \
    X(aclrtFree, aclError, (void *devPtr))                                              \
    X(aclrtMemcpy, aclError,                                                            \
      (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)) \
    X(aclrtGetSocName, const char *, ())

// Tensor, scalar and list objects: libnnopbase.so (both layouts).
#define GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(X)                                                        \
    X(aclCreateTensor, aclTensor *,                                                                \
      (const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride, \
       int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,      \
       void *tensorData))                                                                          \
    X(aclDestroyTensor, aclnnStatus, (const aclTensor *tensor))                                    \
    X(aclCreateScalar, aclScalar *, (void *value, aclDataType dataType))                           \
    X(aclDestroyScalar, aclnnStatus, (const aclScalar *scalar))                                    \
    X(aclCreateTensorList, aclTensorList *, (const aclTensor *const *value, uint64_t size))        \
    X(aclDestroyTensorList, aclnnStatus, (const aclTensorList *array))

// The aclnn operators: OP(name, library, (parameters of aclnn<name>GetWorkspaceSize before its
// trailing `uint64_t *workspaceSize, aclOpExecutor **executor`)). Phase two of each is
// `aclnnStatus aclnn<name>(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
// aclrtStream stream)`. `library` is where CANN 8.5 and later export it (libopapi_math.so or
// libopapi_nn.so); CANN 8.1 exports all of them from libopapi.so. RightShift is 8.5's.
// WeightQuantBatchMatmulV2 is CANN 8.1.RC1's aclnnop/aclnn_weight_quant_batch_matmul_v2.h (its `y`
// is const there, as here); llama.cpp's ggml-cann calls it for Q4_0 and Q8_0 (aclnn_ops.cpp,
// ggml_cann_mul_mat_quant).
#define GGUFTOOL_CANN_ACLNN_OPERATORS(OP)                                                          \
    OP(Cast, math, (const aclTensor *self, const aclDataType dtype, aclTensor *out))               \
    OP(InplaceCopy, math, (aclTensor * selfRef, const aclTensor *src))                             \
    OP(Add, math,                                                                                  \
       (const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out))    \
    OP(Adds, math,                                                                                 \
       (const aclTensor *self, const aclScalar *other, const aclScalar *alpha, aclTensor *out))    \
    OP(Sub, math,                                                                                  \
       (const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out))    \
    OP(Mul, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))                 \
    OP(Muls, math, (const aclTensor *self, const aclScalar *other, aclTensor *out))                \
    OP(Div, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))                 \
    OP(DivMod, math, (const aclTensor *self, const aclTensor *other, int mode, aclTensor *out))    \
    OP(FloorDivide, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))         \
    OP(FloorDivides, math, (const aclTensor *self, const aclScalar *other, aclTensor *out))        \
    OP(RemainderTensorTensor, math,                                                                \
       (const aclTensor *self, const aclTensor *other, aclTensor *out))                            \
    OP(BitwiseAndTensor, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))    \
    OP(BitwiseAndScalar, math, (const aclTensor *self, const aclScalar *other, aclTensor *out))    \
    OP(RightShift, math, (const aclTensor *input, const aclTensor *shiftBits, aclTensor *out))     \
    OP(EqTensor, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))            \
    OP(Minimum, math, (const aclTensor *self, const aclTensor *other, aclTensor *out))             \
    OP(Neg, math, (const aclTensor *self, aclTensor *out))                                         \
    OP(Clamp, math,                                                                                \
       (const aclTensor *self, const aclScalar *clipValueMin, const aclScalar *clipValueMax,       \
        aclTensor *out))                                                                           \
    OP(SWhere, math,                                                                               \
       (const aclTensor *condition, const aclTensor *self, const aclTensor *other,                 \
        aclTensor *out))                                                                           \
    OP(Cat, math, (const aclTensorList *tensors, int64_t dim, aclTensor *out))                     \
    OP(Arange, math,                                                                               \
       (const aclScalar *start, const aclScalar *end, const aclScalar *step, aclTensor *out))      \
    OP(OneHot, math,                                                                               \
       (const aclTensor *self, int numClasses, const aclTensor *onValue,                           \
        const aclTensor *offValue, int64_t axis, aclTensor *out))                                  \
    OP(GatherV2, nn, (const aclTensor *self, int64_t dim, const aclTensor *index, aclTensor *out)) \
    OP(WeightQuantBatchMatmulV2, nn,                                                               \
       (const aclTensor *x, const aclTensor *weight, const aclTensor *antiquantScale,              \
        const aclTensor *antiquantOffsetOptional, const aclTensor *quantScaleOptional,             \
        const aclTensor *quantOffsetOptional, const aclTensor *biasOptional,                       \
        int antiquantGroupSize, const aclTensor *y))

// aclnnDivMod's mode values (aclnn_div.h): 1 truncates toward zero, 2 floors.
inline constexpr int kDivModTrunc = 1;
inline constexpr int kDivModFloor = 2;

// Function types: cann::fn::aclInit, cann::fn::aclnnCastGetWorkspaceSize, cann::fn::aclnnCast.
namespace fn {
#define GGUFTOOL_CANN_FUNCTION_TYPE(name, ret, params) using name = ret params;
GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_CANN_FUNCTION_TYPE)
GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_CANN_FUNCTION_TYPE)
#undef GGUFTOOL_CANN_FUNCTION_TYPE
// Phase two of every aclnn operator.
using aclnnLaunch = aclnnStatus(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);
#define GGUFTOOL_CANN_UNPAREN(...) __VA_ARGS__
#define GGUFTOOL_CANN_OPERATOR_TYPES(name, library, params)                               \
    using aclnn##name##GetWorkspaceSize = aclnnStatus(                                    \
        GGUFTOOL_CANN_UNPAREN params, uint64_t *workspaceSize, aclOpExecutor **executor); \
    using aclnn##name = aclnnLaunch;
GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_CANN_OPERATOR_TYPES)
#undef GGUFTOOL_CANN_OPERATOR_TYPES
}  // namespace fn

// --- ATB (libatb.so, C++) ---------------------------------------------------------------------
// The layouts of atb/types.h, atb/svector.h and atb/infer_op_params.h that OnehotOperation's
// calls pass, and the virtual functions of atb::Context and atb::Operation in declaration order
// (calls go through the vtable). Only functions without std::string or std::function in their
// signature are called, so the C++ ABI variant (cxx_abi_0 or cxx_abi_1) of libatb does not matter
// to the calls this backend makes: their mangled names are the same under both.
namespace atb_abi {

using Status = int32_t;  // 0 is NO_ERROR
inline constexpr uint32_t kMaxDim = 8;
inline constexpr size_t kSVectorSize = 64;  // DEFAULT_SVECTOR_SIZE

struct OnehotParam {
    int64_t axis = 0;
    int64_t depth = 0;
    uint8_t rsv[8] = {0};
};
struct Dims {
    int64_t dims[kMaxDim] = {};
    uint64_t dimNum = 0;
};
struct TensorDesc {
    aclDataType dtype = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    Dims shape;
};
struct Tensor {
    TensorDesc desc;
    void *deviceData = nullptr;
    void *hostData = nullptr;
    uint64_t dataSize = 0;
};
// atb::SVector<T>: inline storage of kSVectorSize + 1 elements, then a heap pointer (unused here);
// capacity_ is the heap's (0 without one).
template <class T>
struct SVector {
    size_t capacity_ = 0;
    size_t size_ = 0;
    T storage_[kSVectorSize + 1] = {};
    T *heap_ = nullptr;
};
struct VariantPack {
    SVector<Tensor> inTensors;
    SVector<Tensor> outTensors;
};

enum ExecuteType : int { EXECUTE_NORMAL = 0, EXECUTE_PRELAUNCH, EXECUTE_LAUNCH };

// Virtual-call layout of atb::Context (newer releases only append virtuals).
class Context {
public:
    virtual ~Context() = default;
    virtual Status SetExecuteStream(aclrtStream stream) = 0;
    virtual aclrtStream GetExecuteStream() const = 0;
};

// Virtual-call layout of atb::Operation. GetName returns std::string (ABI-dependent): never
// called through this declaration.
class Operation {
public:
    virtual ~Operation() = default;
    virtual std::string GetName() const = 0;
    virtual Status InferShape(const SVector<TensorDesc> &inTensorDescs,
                              SVector<TensorDesc> &outTensorDescs) const = 0;
    virtual uint32_t GetInputNum() const = 0;
    virtual uint32_t GetOutputNum() const = 0;
    virtual Status Setup(const VariantPack &variantPack, uint64_t &workspaceSize,
                         Context *context) = 0;
    virtual Status Execute(const VariantPack &variantPack, uint8_t *workspace,
                           uint64_t workspaceSize, Context *context) = 0;
};

}  // namespace atb_abi

// ATB's four free functions: X(name, mangled symbol, return type, (parameters)). The mangled
// names are g++'s for namespace atb (the same under both _GLIBCXX_USE_CXX11_ABI values).
#define GGUFTOOL_CANN_ATB_FUNCTIONS(X)                                                            \
    X(CreateContext, "_ZN3atb13CreateContextEPPNS_7ContextE", atb_abi::Status,                    \
      (atb_abi::Context * *context))                                                              \
    X(DestroyContext, "_ZN3atb14DestroyContextEPNS_7ContextE", atb_abi::Status,                   \
      (atb_abi::Context * context))                                                               \
    X(CreateOnehotOperation,                                                                      \
      "_ZN3atb15CreateOperationINS_5infer11OnehotParamEEEiRKT_PPNS_9OperationE", atb_abi::Status, \
      (const atb_abi::OnehotParam &opParam, atb_abi::Operation **operation))                      \
    X(DestroyOperation, "_ZN3atb16DestroyOperationEPNS_9OperationE", atb_abi::Status,             \
      (atb_abi::Operation * operation))

namespace fn {
#define GGUFTOOL_CANN_ATB_TYPE(name, symbol, ret, params) using atb##name = ret params;
GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_CANN_ATB_TYPE)
#undef GGUFTOOL_CANN_ATB_TYPE
}  // namespace fn

// A marker the CANN emulation's runtime library exports (and CANN does not): its value names the
// emulation, so a user is told that no NPU ran the graph.
inline constexpr const char *kEmulatorMarkerSymbol = "gguftool_cann_emulator_description";
using EmulatorDescriptionFn = const char *();

}  // namespace gguftool::cann
