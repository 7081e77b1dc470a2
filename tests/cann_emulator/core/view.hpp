// What an aclTensor describes: a view (dims, strides and offset in elements) over storage at a
// device address. Executors copy views at phase one, as CANN's executors keep what they need.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/export.hpp"

namespace gguftool::cann_emulator {

// Elements of a shape (1 for rank 0).
GGUFTOOL_EMU_EXPORT int64_t element_count(std::span<const int64_t> dims);

struct GGUFTOOL_EMU_EXPORT View {
    aclDataType dtype = ACL_DT_UNDEFINED;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;
    int64_t offset = 0;
    std::vector<int64_t> storage_dims;
    uintptr_t data = 0;

    int64_t numel() const { return element_count(dims); }
    bool empty() const { return numel() == 0; }
    size_t element_size() const { return dtype_size(dtype); }
    uint64_t bytes() const { return dtype_bytes(dtype, numel()); }
    int64_t storage_numel() const { return element_count(storage_dims); }
    // Element index, from the storage's start, of the last element the view reaches (offset - 1
    // when it is empty).
    int64_t last_element() const;
    // The device bytes the view touches, [first_byte, end_byte) (empty for an empty view).
    // (INT4: the bytes holding those nibbles.)
    uintptr_t first_byte() const {
        return data + uintptr_t(dtype == ACL_INT4 ? offset / 2 : offset * int64_t(element_size()));
    }
    uintptr_t end_byte() const { return data + uintptr_t(dtype_bytes(dtype, last_element() + 1)); }
    // Row-major dense (size-1 dimensions' strides do not matter).
    bool contiguous() const;
    // "FLOAT16 [2, 3] strides [3, 1] offset 0"
    std::string describe() const;
};

// A scalar's value, copied from the caller's host memory at aclCreateScalar.
struct ScalarValue {
    aclDataType dtype = ACL_DT_UNDEFINED;
    std::array<std::byte, 8> bytes{};
};

// The scalar as an operator computing in type N sees it (converted to N first).
template <class N>
compute_t<N> scalar_as(const ScalarValue &s) {
    return visit_dtype(s.dtype, [&]<class S>(std::type_identity<S>) {
        return convert<compute_t<N>>(convert<N>(load<S>(s.bytes.data())));
    });
}

}  // namespace gguftool::cann_emulator
