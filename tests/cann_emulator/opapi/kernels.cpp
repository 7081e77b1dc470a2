#include "opapi/kernels.hpp"

#include <cstring>

namespace gguftool::cann_emulator {

std::vector<int64_t> element_offsets(const View &v, std::span<const int64_t> shape) {
    std::vector<int64_t> offsets(size_t(std::max<int64_t>(element_count(shape), 0)));
    for_each_offset(v, shape, [&](size_t k, int64_t at) { offsets[k] = at; });
    return offsets;
}

std::vector<std::byte> read_raw(const DeviceMemory &m, const View &v,
                                std::span<const int64_t> shape) {
    const size_t size = v.element_size();
    std::vector<std::byte> bytes(size_t(std::max<int64_t>(element_count(shape), 0)) * size);
    if (bytes.empty()) return bytes;
    const std::byte *base = m.host(v.data);
    for_each_offset(v, shape, [&](size_t k, int64_t at) {
        std::memcpy(bytes.data() + k * size, base + at * size, size);
    });
    return bytes;
}

void write_raw(const DeviceMemory &m, const View &out, const std::vector<std::byte> &bytes) {
    if (bytes.empty()) return;
    std::byte *base = m.host(out.data);
    const size_t size = out.element_size();
    for_each_offset(out, out.dims, [&](size_t k, int64_t at) {
        std::memcpy(base + at * size, bytes.data() + k * size, size);
    });
}

}  // namespace gguftool::cann_emulator
