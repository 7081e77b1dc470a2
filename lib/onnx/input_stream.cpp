// Streaming tensor bytes out of the memory-mapped GGUF in bounded chunks.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "plan.hpp"

namespace gguftool::onnx_export::detail {
namespace {

// Drops this process's mapping of the whole pages inside [data, data + size). Advisory: failure
// only means the pages stay resident a little longer.
void release_pages(const uint8_t *data, size_t size) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(page - 1);
    if (end > begin) ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

void prepare_input(std::span<const uint8_t> mapping) {
    if (mapping.empty()) return;
    void *p = const_cast<uint8_t *>(mapping.data());  // the start of an mmap: page-aligned
    ::madvise(p, mapping.size(), MADV_NOHUGEPAGE);
    ::madvise(p, mapping.size(), MADV_SEQUENTIAL);
}

void transform_blocks(Sink &sink, std::span<const uint8_t> bytes, size_t in_block, size_t out_block,
                      const BlockTransform &transform) {
    const size_t nblocks = bytes.size() / in_block;
    const size_t per_chunk = std::max<size_t>(1, kChunkBytes / std::max(in_block, out_block));
    std::vector<uint8_t> out(std::min(nblocks, per_chunk) * out_block);
    for (size_t b = 0; b < nblocks;) {
        const size_t n = std::min(per_chunk, nblocks - b);
        const uint8_t *in = bytes.data() + b * in_block;
        transform(in, n, out.data());
        sink.write(out.data(), n * out_block);
        release_pages(in, n * in_block);
        b += n;
    }
}

}  // namespace gguftool::onnx_export::detail
