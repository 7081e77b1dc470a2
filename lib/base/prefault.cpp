// Faulting in fresh memory in one call (prefault.hpp).
#include "gguftool/prefault.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it, older kernels say EINVAL
#endif

namespace gguftool {

void prefault_for_write(void *data, size_t bytes) {
    if (!data || bytes < kPrefaultMin) return;
    static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
    if (end > begin)
        (void)::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_POPULATE_WRITE);
}

}  // namespace gguftool
