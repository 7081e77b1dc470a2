// Checks the project's own declarations of the CANN ABI (lib/runtime/backends/ascend/
// cann_api.hpp) against the real CANN headers: built only when GGUFTOOL_CANN_INCLUDE_DIRS names
// them (see tools/CMakeLists.txt), and run right after it is linked.
//
// At compile time (static_assert): every enum value and error code, the typedefs and enum types,
// the type of every function in the runtime and nnopbase lists and of both phases of every aclnn
// operator (generated from the X-macro lists, so nothing listed escapes), the ATB structs' sizes,
// alignments, member offsets and member types, and the ATB virtual functions' types.
// At link time: the ATB mangled names (see "ATB's mangled names" below).
// At run time: the ATB vtable slots and the private members of atb::SVector.
//
// No CANN library is linked or loaded; the program never calls into CANN.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_arange.h>
#include <aclnnop/aclnn_bitwise_and_scalar.h>
#include <aclnnop/aclnn_bitwise_and_tensor.h>
#include <aclnnop/aclnn_cast.h>
#include <aclnnop/aclnn_cat.h>
#include <aclnnop/aclnn_clamp.h>
#include <aclnnop/aclnn_copy.h>
#include <aclnnop/aclnn_div.h>
#include <aclnnop/aclnn_eq_tensor.h>
#include <aclnnop/aclnn_floor_divide.h>
#include <aclnnop/aclnn_gather_v2.h>
#include <aclnnop/aclnn_minimum.h>
#include <aclnnop/aclnn_mul.h>
#include <aclnnop/aclnn_neg.h>
#include <aclnnop/aclnn_one_hot.h>
#include <aclnnop/aclnn_remainder.h>
#include <aclnnop/aclnn_s_where.h>
#include <aclnnop/aclnn_sub.h>
#include <aclnnop/aclnn_weight_quant_batch_matmul_v2.h>
#include <atb/context.h>
#include <atb/infer_op_params.h>
#include <atb/operation.h>
#include <atb/svector.h>
#include <atb/types.h>
// aclnnRightShift is newer than CANN 8.1 (hicann ops-math): checked only where the header exists.
#if __has_include(<aclnnop/aclnn_right_shift.h>)
#include <aclnnop/aclnn_right_shift.h>
#define GGUFTOOL_ABI_HAVE_RIGHT_SHIFT 1
#endif
// The aclnn error codes (ACLNN_ERR_*) live in opdev/op_errno.h.
#if __has_include(<aclnn/opdev/op_errno.h>)
#include <aclnn/opdev/op_errno.h>
#endif

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "runtime/backends/ascend/cann_api.hpp"

namespace abi_check {

namespace cann = gguftool::cann;
namespace ours = gguftool::cann::atb_abi;

// --- Our types -> the headers' types -------------------------------------------------------------
// real_t<T> is T with every type of ours replaced by the header's; const, pointers, references,
// arrays, function and member-function types are kept. Every other type stays as it is (int64_t,
// void *, std::string, ...): the typedef checks below show ours are those.
template <class T>
struct Real {
    using type = T;
};
template <class T>
using real_t = typename Real<T>::type;
template <class T>
struct Real<const T> {
    using type = const real_t<T>;
};
template <class T>
struct Real<T *> {
    using type = real_t<T> *;
};
template <class T>
struct Real<T &> {
    using type = real_t<T> &;
};
template <class T, size_t N>
struct Real<T[N]> {
    using type = real_t<T>[N];
};
template <class R, class... A>
struct Real<R(A...)> {
    using type = real_t<R>(real_t<A>...);
};
template <class R, class C, class... A>
struct Real<R (C::*)(A...)> {
    using type = real_t<R> (real_t<C>::*)(real_t<A>...);
};
template <class R, class C, class... A>
struct Real<R (C::*)(A...) const> {
    using type = real_t<R> (real_t<C>::*)(real_t<A>...) const;
};
template <class T>
struct Real<ours::SVector<T>> {
    using type = atb::SVector<real_t<T>>;
};

#define GGUFTOOL_ABI_TYPE_PAIRS(X)                        \
    X(cann::aclTensor, ::aclTensor)                       \
    X(cann::aclScalar, ::aclScalar)                       \
    X(cann::aclIntArray, ::aclIntArray)                   \
    X(cann::aclTensorList, ::aclTensorList)               \
    X(cann::aclOpExecutor, ::aclOpExecutor)               \
    X(cann::aclDataType, ::aclDataType)                   \
    X(cann::aclFormat, ::aclFormat)                       \
    X(cann::aclrtMemcpyKind, ::aclrtMemcpyKind)           \
    X(cann::aclrtMemMallocPolicy, ::aclrtMemMallocPolicy) \
    X(ours::OnehotParam, atb::infer::OnehotParam)         \
    X(ours::Dims, atb::Dims)                              \
    X(ours::TensorDesc, atb::TensorDesc)                  \
    X(ours::Tensor, atb::Tensor)                          \
    X(ours::VariantPack, atb::VariantPack)                \
    X(ours::ExecuteType, atb::ExecuteType)                \
    X(ours::Context, atb::Context)                        \
    X(ours::Operation, atb::Operation)
#define GGUFTOOL_ABI_REAL(our_type, real_type) \
    template <>                                \
    struct Real<our_type> {                    \
        using type = real_type;                \
    };
GGUFTOOL_ABI_TYPE_PAIRS(GGUFTOOL_ABI_REAL)
#undef GGUFTOOL_ABI_REAL

// --- Typedefs and enum types ---------------------------------------------------------------------
#define GGUFTOOL_ABI_SAME_TYPE(our_type, real_type)                                       \
    static_assert(std::is_same_v<our_type, real_type>, #our_type " is not " #real_type);  \
    static_assert(                                                                        \
        sizeof(our_type) == sizeof(real_type) && alignof(our_type) == alignof(real_type), \
        #our_type ": size or alignment differs");
GGUFTOOL_ABI_SAME_TYPE(cann::aclError, ::aclError)
GGUFTOOL_ABI_SAME_TYPE(cann::aclnnStatus, ::aclnnStatus)
GGUFTOOL_ABI_SAME_TYPE(cann::aclrtStream, ::aclrtStream)
GGUFTOOL_ABI_SAME_TYPE(ours::Status, atb::Status)
#undef GGUFTOOL_ABI_SAME_TYPE
constexpr int kTypedefs = 4;

// Our enums are passed by value and sit inside the ATB structs: same size and alignment. (Not the
// same underlying type: the headers' enums have none fixed, and g++ picks unsigned int for those
// without a negative value, aclrtMemcpyKind and aclrtMemMallocPolicy, where ours say int. Both
// are 32 bits passed the same way, and every value declared fits both.)
#define GGUFTOOL_ABI_ENUM_TYPES(X) \
    X(cann::aclDataType)           \
    X(cann::aclFormat)             \
    X(cann::aclrtMemcpyKind)       \
    X(cann::aclrtMemMallocPolicy)  \
    X(ours::ExecuteType)
#define GGUFTOOL_ABI_ENUM_TYPE(our_enum)                              \
    static_assert(sizeof(our_enum) == sizeof(real_t<our_enum>) &&     \
                      alignof(our_enum) == alignof(real_t<our_enum>), \
                  #our_enum ": size or alignment differs from the header's");
GGUFTOOL_ABI_ENUM_TYPES(GGUFTOOL_ABI_ENUM_TYPE)
#undef GGUFTOOL_ABI_ENUM_TYPE
#define GGUFTOOL_ABI_COUNT1(x) +1
constexpr int kEnumTypes = 0 GGUFTOOL_ABI_ENUM_TYPES(GGUFTOOL_ABI_COUNT1);

// --- Enum values ---------------------------------------------------------------------------------
// Every enumerator cann_api.hpp declares (keep this list in step with it): same value, and in the
// enum the header puts it in.
#define GGUFTOOL_ABI_ENUM_VALUES(X)      \
    X(cann, ACL_DT_UNDEFINED)            \
    X(cann, ACL_FLOAT)                   \
    X(cann, ACL_FLOAT16)                 \
    X(cann, ACL_INT8)                    \
    X(cann, ACL_INT32)                   \
    X(cann, ACL_UINT8)                   \
    X(cann, ACL_INT16)                   \
    X(cann, ACL_UINT16)                  \
    X(cann, ACL_UINT32)                  \
    X(cann, ACL_INT64)                   \
    X(cann, ACL_UINT64)                  \
    X(cann, ACL_DOUBLE)                  \
    X(cann, ACL_BOOL)                    \
    X(cann, ACL_BF16)                    \
    X(cann, ACL_INT4)                    \
    X(cann, ACL_FORMAT_UNDEFINED)        \
    X(cann, ACL_FORMAT_ND)               \
    X(cann, ACL_MEMCPY_HOST_TO_HOST)     \
    X(cann, ACL_MEMCPY_HOST_TO_DEVICE)   \
    X(cann, ACL_MEMCPY_DEVICE_TO_HOST)   \
    X(cann, ACL_MEMCPY_DEVICE_TO_DEVICE) \
    X(cann, ACL_MEM_MALLOC_HUGE_FIRST)   \
    X(ours, EXECUTE_NORMAL)              \
    X(ours, EXECUTE_PRELAUNCH)           \
    X(ours, EXECUTE_LAUNCH)
// The real enumerator of the same name: ACL_* in the global namespace, EXECUTE_* in atb.
#define GGUFTOOL_ABI_REAL_NS_cann
#define GGUFTOOL_ABI_REAL_NS_ours atb
#define GGUFTOOL_ABI_ENUM_VALUE(ns, value)                                                       \
    static_assert(static_cast<long long>(ns::value) ==                                           \
                      static_cast<long long>(GGUFTOOL_ABI_REAL_NS_##ns::value),                  \
                  #value ": value differs from the header's");                                   \
    static_assert(                                                                               \
        std::is_same_v<real_t<decltype(ns::value)>, decltype(GGUFTOOL_ABI_REAL_NS_##ns::value)>, \
        #value ": declared in a different enum than the header's");
GGUFTOOL_ABI_ENUM_VALUES(GGUFTOOL_ABI_ENUM_VALUE)
#undef GGUFTOOL_ABI_ENUM_VALUE
#define GGUFTOOL_ABI_COUNT2(a, b) +1
constexpr int kEnumValues = 0 GGUFTOOL_ABI_ENUM_VALUES(GGUFTOOL_ABI_COUNT2);

// --- Constants -----------------------------------------------------------------------------------
// acl_base.h declares the ACL_* codes as `static const int`; rt_error_codes.h and op_errno.h
// declare theirs as macros, so a header set without one skips it (all are in CANN 8.1).
static_assert(cann::kAclSuccess == ACL_SUCCESS);
static_assert(cann::kAclErrorInvalidParam == ACL_ERROR_INVALID_PARAM);
static_assert(cann::kAclErrorRepeatInitialize == ACL_ERROR_REPEAT_INITIALIZE);
static_assert(cann::kAclErrorBadAlloc == ACL_ERROR_BAD_ALLOC);
static_assert(cann::kAclErrorInvalidDevice == ACL_ERROR_INVALID_DEVICE);
static_assert(cann::kAclErrorMemoryUnaligned == ACL_ERROR_MEMORY_ADDRESS_UNALIGNED);
constexpr int kErrorCodesAlways = 6;
#ifdef ACL_ERROR_RT_PARAM_INVALID  // acl/error_codes/rt_error_codes.h
static_assert(cann::kAclErrorRtParamInvalid == ACL_ERROR_RT_PARAM_INVALID);
static_assert(cann::kAclErrorRtInvalidDeviceId == ACL_ERROR_RT_INVALID_DEVICEID);
static_assert(cann::kAclErrorRtFeatureNotSupport == ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
static_assert(cann::kAclErrorRtAicoreException == ACL_ERROR_RT_AICORE_EXCEPTION);
constexpr int kErrorCodesRt = 4;
#else
constexpr int kErrorCodesRt = 0;
#endif
#ifdef ACLNN_ERR_INNER  // aclnn/opdev/op_errno.h
static_assert(cann::kAclSuccess == ACLNN_SUCCESS);
static_assert(cann::kAclnnErrParamNullptr == ACLNN_ERR_PARAM_NULLPTR);
static_assert(cann::kAclnnErrParamInvalid == ACLNN_ERR_PARAM_INVALID);
static_assert(cann::kAclnnErrRuntimeError == ACLNN_ERR_RUNTIME_ERROR);
static_assert(cann::kAclnnErrInner == ACLNN_ERR_INNER);
constexpr int kErrorCodesAclnn = 5;
#else
constexpr int kErrorCodesAclnn = 0;
#endif
constexpr int kErrorCodes = kErrorCodesAlways + kErrorCodesRt + kErrorCodesAclnn;
// cann_api.hpp's kDivModTrunc and kDivModFloor come from a header comment: nothing to check.

static_assert(ours::kMaxDim == atb::MAX_DIM);
static_assert(ours::kSVectorSize == atb::DEFAULT_SVECTOR_SIZE);
static_assert(atb::NO_ERROR == 0);  // cann_api.hpp: "0 is NO_ERROR"
constexpr int kAtbConstants = 3;

// --- C functions ---------------------------------------------------------------------------------
// Unqualified lookup from this namespace finds each real function in the global namespace, or the
// stand-in declared here for one the headers lack.
struct Absent {};
template <class Real>
inline constexpr bool kPresent = !std::is_same_v<Real, const Absent>;
template <class Ours, class Real>
inline constexpr bool kSameFunction = !kPresent<Real> || std::is_same_v<real_t<Ours>, Real>;

#ifndef GGUFTOOL_ABI_HAVE_RIGHT_SHIFT
inline constexpr Absent aclnnRightShiftGetWorkspaceSize{}, aclnnRightShift{};
#endif

#define GGUFTOOL_ABI_FUNCTION(name, ret, params)                 \
    static_assert(kSameFunction<cann::fn::name, decltype(name)>, \
                  #name ": our type differs from the header's declaration");
GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_ABI_FUNCTION)
GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_ABI_FUNCTION)
#undef GGUFTOOL_ABI_FUNCTION
#define GGUFTOOL_ABI_COUNT3(a, b, c) +1
constexpr int kCFunctions = 0 GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_ABI_COUNT3)
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_ABI_COUNT3);

// Both phases of each operator. A top-level const on a parameter (several phase-two functions take
// `const aclrtStream stream`) is not part of a function type, so it compares equal.
#define GGUFTOOL_ABI_OPERATOR(name, library, params)                                          \
    static_assert(kSameFunction<cann::fn::aclnn##name##GetWorkspaceSize,                      \
                                decltype(aclnn##name##GetWorkspaceSize)>,                     \
                  "aclnn" #name "GetWorkspaceSize: our type differs from the header's");      \
    static_assert(kSameFunction<cann::fn::aclnn##name, decltype(aclnn##name)>,                \
                  "aclnn" #name ": our type differs from the header's");                      \
    static_assert(                                                                            \
        kPresent<decltype(aclnn##name##GetWorkspaceSize)> == kPresent<decltype(aclnn##name)>, \
        "aclnn" #name ": the headers declare one phase without the other");
GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ABI_OPERATOR)
#undef GGUFTOOL_ABI_OPERATOR
constexpr int kOperators = 0 GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ABI_COUNT3);
#define GGUFTOOL_ABI_COUNT_PRESENT(name, library, params) +int(kPresent<decltype(aclnn##name)>)
constexpr int kOperatorsChecked = 0 GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ABI_COUNT_PRESENT);

// --- ATB struct layouts --------------------------------------------------------------------------
#define GGUFTOOL_ABI_LAYOUT(our_struct)                                                            \
    static_assert(sizeof(our_struct) == sizeof(real_t<our_struct>), #our_struct ": size differs"); \
    static_assert(alignof(our_struct) == alignof(real_t<our_struct>),                              \
                  #our_struct ": alignment differs");
#define GGUFTOOL_ABI_MEMBER(our_struct, member)                                         \
    static_assert(offsetof(our_struct, member) == offsetof(real_t<our_struct>, member), \
                  #our_struct "::" #member ": offset differs");                         \
    static_assert(std::is_same_v<real_t<decltype(our_struct::member)>,                  \
                                 decltype(real_t<our_struct>::member)>,                 \
                  #our_struct "::" #member ": type differs");
// atb::SVector's members are private (no offsetof): their places are checked at run time
// (check_svector). SVector<TensorDesc> is Operation::InferShape's.
#define GGUFTOOL_ABI_LAYOUTS(X)        \
    X(ours::OnehotParam)               \
    X(ours::Dims)                      \
    X(ours::TensorDesc)                \
    X(ours::Tensor)                    \
    X(ours::VariantPack)               \
    X(ours::SVector<ours::Tensor>)     \
    X(ours::SVector<ours::TensorDesc>) \
    X(ours::Context)                   \
    X(ours::Operation)
#define GGUFTOOL_ABI_MEMBERS(X)     \
    X(ours::OnehotParam, axis)      \
    X(ours::OnehotParam, depth)     \
    X(ours::OnehotParam, rsv)       \
    X(ours::Dims, dims)             \
    X(ours::Dims, dimNum)           \
    X(ours::TensorDesc, dtype)      \
    X(ours::TensorDesc, format)     \
    X(ours::TensorDesc, shape)      \
    X(ours::Tensor, desc)           \
    X(ours::Tensor, deviceData)     \
    X(ours::Tensor, hostData)       \
    X(ours::Tensor, dataSize)       \
    X(ours::VariantPack, inTensors) \
    X(ours::VariantPack, outTensors)
GGUFTOOL_ABI_LAYOUTS(GGUFTOOL_ABI_LAYOUT)
GGUFTOOL_ABI_MEMBERS(GGUFTOOL_ABI_MEMBER)
#undef GGUFTOOL_ABI_LAYOUT
#undef GGUFTOOL_ABI_MEMBER
constexpr int kLayouts = 0 GGUFTOOL_ABI_LAYOUTS(GGUFTOOL_ABI_COUNT1);
constexpr int kMembers = 0 GGUFTOOL_ABI_MEMBERS(GGUFTOOL_ABI_COUNT2);

// --- ATB virtual functions -----------------------------------------------------------------------
// Their types here; their vtable slots at run time (check_vtables).
#define GGUFTOOL_ABI_VIRTUALS(X) \
    X(Context, SetExecuteStream) \
    X(Context, GetExecuteStream) \
    X(Operation, GetName)        \
    X(Operation, InferShape)     \
    X(Operation, GetInputNum)    \
    X(Operation, GetOutputNum)   \
    X(Operation, Setup)          \
    X(Operation, Execute)
#define GGUFTOOL_ABI_VIRTUAL_TYPE(cls, method)                                             \
    static_assert(                                                                         \
        std::is_same_v<real_t<decltype(&ours::cls::method)>, decltype(&atb::cls::method)>, \
        #cls "::" #method ": our type differs from the header's");
GGUFTOOL_ABI_VIRTUALS(GGUFTOOL_ABI_VIRTUAL_TYPE)
#undef GGUFTOOL_ABI_VIRTUAL_TYPE
constexpr int kVirtuals = 0 GGUFTOOL_ABI_VIRTUALS(GGUFTOOL_ABI_COUNT2);

// --- ATB's free functions ------------------------------------------------------------------------
// The real function each GGUFTOOL_CANN_ATB_FUNCTIONS entry stands for (a new entry needs one here).
#define GGUFTOOL_ABI_ATB_CreateContext atb::CreateContext
#define GGUFTOOL_ABI_ATB_DestroyContext atb::DestroyContext
#define GGUFTOOL_ABI_ATB_CreateOnehotOperation atb::CreateOperation<atb::infer::OnehotParam>
#define GGUFTOOL_ABI_ATB_DestroyOperation atb::DestroyOperation
#define GGUFTOOL_ABI_ATB_TYPE(name, symbol, ret, params)                                          \
    static_assert(std::is_same_v<real_t<cann::fn::atb##name>, decltype(GGUFTOOL_ABI_ATB_##name)>, \
                  "atb " #name ": our type differs from the header's declaration");
GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_ABI_ATB_TYPE)
#undef GGUFTOOL_ABI_ATB_TYPE
#define GGUFTOOL_ABI_COUNT4(a, b, c, d) +1
constexpr int kAtbFunctions = 0 GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_ABI_COUNT4);

}  // namespace abi_check

// ATB's mangled names, checked by the linker. Each listed symbol is declared weak in the assembly,
// and the program keeps a reference to each real function (as g++ mangles the header's
// declaration). Where the names agree the reference is weak, and the link succeeds without libatb
// (the address is null); where they differ it is an ordinary undefined reference and the link
// fails, naming the function.
#define GGUFTOOL_ABI_ATB_WEAK(name, symbol, ret, params) asm(".weak " symbol);
GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_ABI_ATB_WEAK)
#undef GGUFTOOL_ABI_ATB_WEAK
#define GGUFTOOL_ABI_ATB_REFERENCE(name, symbol, ret, params) \
    [[gnu::used]] static auto *const atb_reference_##name = &GGUFTOOL_ABI_ATB_##name;
GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_ABI_ATB_REFERENCE)
#undef GGUFTOOL_ABI_ATB_REFERENCE

namespace abi_check {
namespace {

int failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fflush(stdout);
        std::fprintf(stderr, "cann_abi_check: %s\n", what);
        ++failures;
    }
}

// The vtable byte offset of a virtual member function (Itanium C++ ABI, 2.3: a pointer to a
// virtual member function holds 1 + that offset in its first word), or -1 if not virtual.
template <class MemberFunction>
ptrdiff_t vtable_offset(MemberFunction f) {
    static_assert(sizeof f == 2 * sizeof(ptrdiff_t));
    ptrdiff_t word;
    std::memcpy(&word, &f, sizeof word);
    return (word & 1) ? word - 1 : -1;
}

void check_vtables() {
#define GGUFTOOL_ABI_VIRTUAL_SLOT(cls, method)                               \
    {                                                                        \
        const ptrdiff_t o = vtable_offset(&ours::cls::method);               \
        const ptrdiff_t r = vtable_offset(&atb::cls::method);                \
        expect(o >= 0 && o == r, #cls "::" #method ": vtable slot differs"); \
        std::printf("  %-28s vtable offset %td\n", #cls "::" #method, r);    \
    }
    GGUFTOOL_ABI_VIRTUALS(GGUFTOOL_ABI_VIRTUAL_SLOT)
#undef GGUFTOOL_ABI_VIRTUAL_SLOT
}

// atb::SVector's members are private: read a real one's bytes as ours, inline and on the heap.
void check_svector() {
    using Real = atb::SVector<atb::Tensor>;
    using Ours = ours::SVector<ours::Tensor>;
    const auto as_ours = [](const Real &r) {
        Ours o;
        std::memcpy(static_cast<void *>(&o), static_cast<const void *>(&r), sizeof o);
        return o;
    };
    const auto offset_of_data = [](const Real &r) {
        return reinterpret_cast<const char *>(r.data()) - reinterpret_cast<const char *>(&r);
    };
    atb::Tensor t;
    t.dataSize = 0x1234;

    Real fresh;
    const Ours fresh_ours;
    const Ours fresh_view = as_ours(fresh);
    expect(fresh_view.capacity_ == fresh_ours.capacity_ && fresh_view.size_ == fresh_ours.size_ &&
               fresh_view.heap_ == fresh_ours.heap_,
           "SVector: a default-constructed one differs from ours (capacity_, size_ or heap_)");

    Real inline_vector;
    inline_vector.push_back(t);
    inline_vector.push_back(t);
    const Ours inline_view = as_ours(inline_vector);
    expect(inline_view.size_ == 2 && inline_view.heap_ == nullptr &&
               inline_view.storage_[1].dataSize == 0x1234,
           "SVector: size_, heap_ or storage_ is not where ours are");
    expect(offset_of_data(inline_vector) == ptrdiff_t(offsetof(Ours, storage_)),
           "SVector: storage_ is not where ours is");

    Real heap_vector;
    heap_vector.reserve(ours::kSVectorSize + 2);
    heap_vector.push_back(t);
    const Ours heap_view = as_ours(heap_vector);
    expect(static_cast<const void *>(heap_view.heap_) == heap_vector.data() &&
               heap_view.capacity_ == ours::kSVectorSize + 2 && heap_view.size_ == 1,
           "SVector: heap_, capacity_ or size_ is not where ours are");
}

}  // namespace
}  // namespace abi_check

int main() {
    using namespace abi_check;
    std::printf("cann_abi_check: cann_api.hpp against the CANN headers\n");
    std::printf(
        "  %d typedefs, %d enum types, %d enum values, %d error-code comparisons, %d ATB "
        "constants\n",
        kTypedefs, kEnumTypes, kEnumValues, kErrorCodes, kAtbConstants);
    if (!kErrorCodesRt) std::printf("  ACL_ERROR_RT_*: not in these headers, not checked\n");
    if (!kErrorCodesAclnn) std::printf("  ACLNN_ERR_*: not in these headers, not checked\n");
    std::printf("  %d runtime/nnopbase functions, %d of %d aclnn operators (both phases)\n",
                kCFunctions, kOperatorsChecked, kOperators);
#define GGUFTOOL_ABI_REPORT_ABSENT(name, library, params) \
    if (!kPresent<decltype(aclnn##name)>)                 \
        std::printf("  aclnn" #name ": not in these headers, not checked\n");
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_ABI_REPORT_ABSENT)
#undef GGUFTOOL_ABI_REPORT_ABSENT
    std::printf("  %d ATB layouts (%d members), %d virtual functions, %d ATB functions:\n",
                kLayouts, kMembers, kVirtuals, kAtbFunctions);
#define GGUFTOOL_ABI_REPORT_SYMBOL(name, symbol, ret, params) \
    std::printf("  %-28s %s\n", #name, symbol);
    GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_ABI_REPORT_SYMBOL)
#undef GGUFTOOL_ABI_REPORT_SYMBOL
    check_vtables();
    check_svector();
    if (failures) {
        std::fprintf(stderr, "cann_abi_check: %d run-time check(s) failed\n", failures);
        return 1;
    }
    std::printf("cann_abi_check: all match\n");
    return 0;
}
