// The data types the emulation knows (those of cann_api.hpp's aclDataType), sets of them, and
// CANN's type rules: PromoteType (aclnn's promotion of two tensors, as opbase's
// op_common/data_type_utils.h tabulates it), tensor-with-scalar promotion (CombineCategories) and
// CanCast (whether an operator may cast its result to `out`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/codes.hpp"

namespace gguftool::cann_emulator {

enum class DtypeKind { floating, signed_integer, unsigned_integer, boolean };

struct DtypeInfo {
    aclDataType dtype;
    std::string_view name;
    size_t size;
    DtypeKind kind;
};

inline constexpr DtypeInfo kDtypes[] = {
    {ACL_FLOAT, "FLOAT", 4, DtypeKind::floating},
    {ACL_FLOAT16, "FLOAT16", 2, DtypeKind::floating},
    {ACL_BF16, "BF16", 2, DtypeKind::floating},
    {ACL_DOUBLE, "DOUBLE", 8, DtypeKind::floating},
    {ACL_INT8, "INT8", 1, DtypeKind::signed_integer},
    {ACL_INT16, "INT16", 2, DtypeKind::signed_integer},
    {ACL_INT32, "INT32", 4, DtypeKind::signed_integer},
    {ACL_INT64, "INT64", 8, DtypeKind::signed_integer},
    {ACL_UINT8, "UINT8", 1, DtypeKind::unsigned_integer},
    {ACL_UINT16, "UINT16", 2, DtypeKind::unsigned_integer},
    {ACL_UINT32, "UINT32", 4, DtypeKind::unsigned_integer},
    {ACL_UINT64, "UINT64", 8, DtypeKind::unsigned_integer},
    {ACL_BOOL, "BOOL", 1, DtypeKind::boolean},
    // Size 0: two elements per byte (dtype_bytes). Only aclnnWeightQuantBatchMatmulV2's weight
    // takes it; every other operator's dtype lists refuse it.
    {ACL_INT4, "INT4", 0, DtypeKind::signed_integer},
};

constexpr const DtypeInfo *find_dtype(aclDataType d) {
    for (const DtypeInfo &i : kDtypes)
        if (i.dtype == d) return &i;
    return nullptr;
}

// "FLOAT16", or "dtype 5" for a value the emulation does not know.
inline std::string dtype_name(aclDataType d) {
    const DtypeInfo *i = find_dtype(d);
    return i ? std::string(i->name) : "dtype " + std::to_string(int(d));
}

// Size in bytes (0 for a dtype the emulation does not know).
constexpr size_t dtype_size(aclDataType d) {
    const DtypeInfo *i = find_dtype(d);
    return i ? i->size : 0;
}

// Bytes that `elements` elements of d occupy: INT4 packs two per byte, the element of even index
// in the low nibble (ggml-cann's Q4_0 conversion writes it so), the last byte half used when odd.
constexpr uint64_t dtype_bytes(aclDataType d, int64_t elements) {
    if (d == ACL_INT4) return uint64_t(elements + 1) / 2;
    return uint64_t(elements) * dtype_size(d);
}

constexpr bool is_floating(aclDataType d) {
    const DtypeInfo *i = find_dtype(d);
    return i && i->kind == DtypeKind::floating;
}
constexpr bool is_integral(aclDataType d) {  // not BOOL
    const DtypeInfo *i = find_dtype(d);
    return i && (i->kind == DtypeKind::signed_integer || i->kind == DtypeKind::unsigned_integer);
}

// A set of data types.
class DtypeSet {
public:
    constexpr DtypeSet() = default;
    constexpr DtypeSet(std::initializer_list<aclDataType> types) {
        for (aclDataType d : types) bits_ |= bit(d);
    }
    constexpr bool contains(aclDataType d) const { return (bits_ & bit(d)) != 0; }
    constexpr DtypeSet operator|(DtypeSet o) const { return from_bits(bits_ | o.bits_); }
    constexpr DtypeSet without(DtypeSet o) const { return from_bits(bits_ & ~o.bits_); }
    constexpr bool empty() const { return bits_ == 0; }
    // "FLOAT, FLOAT16, ..." in kDtypes order.
    std::string names() const {
        std::string s;
        for (const DtypeInfo &i : kDtypes)
            if (contains(i.dtype)) s += (s.empty() ? "" : ", ") + std::string(i.name);
        return s;
    }

private:
    static constexpr uint64_t bit(aclDataType d) {
        return int(d) >= 0 && int(d) < 64 ? uint64_t(1) << int(d) : 0;
    }
    static constexpr DtypeSet from_bits(uint64_t b) {
        DtypeSet s;
        s.bits_ = b;
        return s;
    }
    uint64_t bits_ = 0;
};

// aclnn's PromoteType of two tensor dtypes; ACL_DT_UNDEFINED when there is none (UINT16, UINT32
// and UINT64 promote only with themselves).
constexpr aclDataType promote_types(aclDataType a, aclDataType b) {
    if (!find_dtype(a) || !find_dtype(b)) return ACL_DT_UNDEFINED;
    if (a == b) return a;
    const auto either = [&](aclDataType d) { return a == d || b == d; };
    if (either(ACL_UINT16) || either(ACL_UINT32) || either(ACL_UINT64)) return ACL_DT_UNDEFINED;
    if (either(ACL_DOUBLE)) return ACL_DOUBLE;
    if (either(ACL_FLOAT)) return ACL_FLOAT;
    if (either(ACL_FLOAT16) && either(ACL_BF16)) return ACL_FLOAT;
    if (either(ACL_FLOAT16)) return ACL_FLOAT16;
    if (either(ACL_BF16)) return ACL_BF16;
    if (a == ACL_BOOL) return b;
    if (b == ACL_BOOL) return a;
    if (either(ACL_UINT8)) {  // with a signed type
        const aclDataType s = a == ACL_UINT8 ? b : a;
        return s == ACL_INT8 ? ACL_INT16 : s;
    }
    return dtype_size(a) >= dtype_size(b) ? a : b;  // two signed integers
}

// A tensor of dtype `tensor` with a scalar of dtype `scalar` (aclnn's CombineCategories): a
// floating tensor keeps its type; a BOOL tensor, or a floating scalar, promotes; otherwise the
// tensor's type wins (a UINT8 tensor with an INT64 scalar stays UINT8).
constexpr aclDataType promote_tensor_scalar(aclDataType tensor, aclDataType scalar) {
    if (is_floating(tensor)) return tensor;
    if (tensor == ACL_BOOL || is_floating(scalar)) return promote_types(tensor, scalar);
    return tensor;
}

// Whether an operator may cast a result of type `from` to `out`'s type `to` (aclnn's CanCast):
// not from floating to integral, and not from anything but BOOL to BOOL.
constexpr bool can_cast(aclDataType from, aclDataType to) {
    if (is_floating(from) && is_integral(to)) return false;
    if (from != ACL_BOOL && to == ACL_BOOL) return false;
    return true;
}

}  // namespace gguftool::cann_emulator
