// Faulting in fresh memory that is about to be filled, in one call: a big buffer's pages are
// otherwise faulted in one at a time as it is first written, and on some machines each fault of a
// 4 KiB page costs microseconds (1 MiB: 0.85 ms one page at a time, 0.58 ms in one call, on the
// 2-core VM this was measured on). For the few large buffers a short run fills at once, such as
// the 10,000 tensor infos of a big model that `gguftool dump` lists.
#pragma once

#include <cstddef>
#include <vector>

namespace gguftool {

// Makes the whole pages inside [data, data + bytes) present and writable, with Linux's
// madvise(MADV_POPULATE_WRITE) (5.14 and later). Changes no byte; does nothing where the call is
// not supported or fails, and for less than kPrefaultMin bytes (small blocks come from pages
// malloc has mostly touched already).
inline constexpr size_t kPrefaultMin = 64 * 1024;
void prefault_for_write(void *data, size_t bytes);

// v.reserve(n), then prefault_for_write over the new capacity.
template <class T, class A>
void reserve_prefaulted(std::vector<T, A> &v, size_t n) {
    v.reserve(n);
    prefault_for_write(v.data(), v.capacity() * sizeof(T));
}

}  // namespace gguftool
