// Unpack-29 on the CPU.
//
// A row (the words along the axis at one position of the other dims) is a little-endian bit
// stream: with the host little-endian, UINT32 words in memory are exactly the bytes of that
// stream, so both storage types are read as bytes. Group j occupies bits [j*W, j*W + W); its
// index expands to G base-R digits, least significant first, trimmed to `count` codes per row.
// Rows along the last axis are decoded in place; for an inner axis, tiles of rows are gathered
// into contiguous scratch, decoded, and scattered back.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_backend.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// W bits (1..63) starting at bit `pos` of a stream of n bytes; never reads past the end.
inline uint64_t read_bits(const uint8_t *src, size_t n, uint64_t pos, unsigned w) {
    const size_t byte = size_t(pos >> 3);
    const unsigned shift = unsigned(pos & 7);
    uint64_t lo = 0;
    std::memcpy(&lo, src + byte, std::min<size_t>(8, n - byte));
    uint64_t v = lo >> shift;
    if (shift + w > 64 && byte + 8 < n) v |= uint64_t(src[byte + 8]) << (64 - shift);
    return v & ((uint64_t(1) << w) - 1);
}

// Codes [first, last) of widths that divide 8: whole bytes at a time, ragged ends code by code.
template <unsigned W>
void whole_bytes(const uint8_t *src, uint64_t first, uint64_t last, uint8_t *dst) {
    constexpr unsigned kPer = 8 / W;
    constexpr uint8_t kMask = (1u << W) - 1;
    uint64_t i = first;
    for (; i < last && i % kPer; ++i) *dst++ = (src[i / kPer] >> ((i % kPer) * W)) & kMask;
    for (; i + kPer <= last; i += kPer, dst += kPer) {
        const uint8_t b = src[i / kPer];
        for (unsigned k = 0; k < kPer; ++k) dst[k] = (b >> (k * W)) & kMask;
    }
    for (; i < last; ++i) *dst++ = (src[i / kPer] >> ((i % kPer) * W)) & kMask;
}

// The code layout of the operator's attributes (opset29::Unpack's fields).
struct Layout {
    uint32_t radix, group_size;
    unsigned group_bits;   // W: bits each group index occupies
    uint64_t group_limit;  // radix^group_size: every group index is below it

    explicit Layout(const Attributes &a)
        : radix(uint32_t(a.at<int64_t>("radix"))),
          group_size(uint32_t(a.at<int64_t>("group_size"))),
          group_bits(unsigned(a.at<int64_t>("group_bits"))),
          group_limit(uint64_t(a.at<int64_t>("group_limit"))) {}
};

struct RowDecoder {
    const Layout &p;
    std::vector<uint8_t> digits;  // group index -> G digits, when small enough to tabulate

    explicit RowDecoder(const Layout &layout) : p(layout) {
        if (p.group_size > 1 && p.group_limit * p.group_size <= (1u << 20)) {
            digits.resize(size_t(p.group_limit * p.group_size));
            for (uint64_t idx = 0; idx < p.group_limit; ++idx) {
                uint64_t v = idx;
                for (uint32_t d = 0; d < p.group_size; ++d, v /= p.radix)
                    digits[size_t(idx * p.group_size + d)] = uint8_t(v % p.radix);
            }
        }
    }

    // Codes [first, last) of one row (n bytes at src) into dst[0 .. last - first).
    // `first` is a multiple of the group size.
    void decode(const uint8_t *src, size_t n, uint64_t first, uint64_t last, uint8_t *dst,
                uint64_t row) const {
        const unsigned w = p.group_bits;
        if (p.group_size == 1) {
            if (w == 8) {
                std::memcpy(dst, src + first, size_t(last - first));
            } else if (w == 4) {
                whole_bytes<4>(src, first, last, dst);
            } else if (w == 2) {
                whole_bytes<2>(src, first, last, dst);
            } else if (w == 1) {
                whole_bytes<1>(src, first, last, dst);
            } else {
                for (uint64_t i = first; i < last; ++i)
                    *dst++ = uint8_t(read_bits(src, n, i * w, w));
            }
            return;
        }
        const uint32_t g = p.group_size;
        for (uint64_t j = first / g; j * g < last; ++j) {
            const uint64_t idx = w == 8 ? src[j] : read_bits(src, n, j * w, w);
            if (idx >= p.group_limit)
                throw Error(
                    fmt::format("row {}, group {}: index {} is not below radix^group_size "
                                "= {}",
                                row, j, idx, p.group_limit));
            const uint64_t take = std::min<uint64_t>(g, last - j * g);
            if (!digits.empty()) {
                std::memcpy(dst, &digits[size_t(idx * g)], size_t(take));
            } else {
                uint64_t v = idx;
                for (uint64_t d = 0; d < take; ++d, v /= p.radix) dst[d] = uint8_t(v % p.radix);
            }
            dst += take;
        }
    }
};

void unpack(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &x = *args.inputs[0];
    DeviceTensor &y = args.outputs[0];
    const Layout p(args.attributes);
    const size_t axis = size_t(args.attributes.at<int64_t>("axis"));
    if (y.elements() == 0) return;
    const unsigned threads = cpu.threads();
    const size_t wb = dtype_size(x.dtype);
    uint64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= uint64_t(x.shape[d]);
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= uint64_t(x.shape[d]);
    const size_t row_bytes = size_t(x.shape[axis]) * wb;
    const uint64_t count = uint64_t(y.shape[axis]);
    const uint8_t *in = bytes(x);
    uint8_t *out = mutable_bytes(y);
    const RowDecoder decoder(p);

    if (inner == 1) {
        // Contiguous rows. Split over rows, or within rows (at group boundaries) when few.
        if (outer >= 4 * thread_count(threads) || count < kGrain) {
            parallel_for(
                outer, threads, std::max<uint64_t>(1, kGrain / count), [&](uint64_t b, uint64_t e) {
                    for (uint64_t r = b; r < e; ++r)
                        decoder.decode(in + r * row_bytes, row_bytes, 0, count, out + r * count, r);
                });
        } else {
            const uint64_t g = p.group_size, groups = (count + g - 1) / g;
            for (uint64_t r = 0; r < outer; ++r)
                parallel_for(groups, threads, kGrain / g + 1, [&](uint64_t b, uint64_t e) {
                    const uint64_t first = b * g, last = std::min(count, e * g);
                    decoder.decode(in + r * row_bytes, row_bytes, first, last,
                                   out + r * count + first, r);
                });
        }
        return;
    }

    // Inner axis: tiles of up to `tile` neighbouring rows, transposed through scratch.
    const uint64_t per_row = row_bytes + count;
    const uint64_t tile = std::clamp<uint64_t>((1u << 20) / std::max<uint64_t>(per_row, 1), 1, 64);
    const uint64_t tiles_per_outer = (inner + tile - 1) / tile;
    parallel_for(outer * tiles_per_outer, threads, std::max<uint64_t>(1, kGrain / (tile * count)),
                 [&](uint64_t b, uint64_t e) {
                     std::vector<uint8_t> src(size_t(tile * row_bytes)), dst(size_t(tile * count));
                     const size_t words = size_t(x.shape[axis]);
                     for (uint64_t u = b; u < e; ++u) {
                         const uint64_t o = u / tiles_per_outer, i0 = (u % tiles_per_outer) * tile;
                         const uint64_t t_n = std::min(tile, inner - i0);
                         for (size_t k = 0; k < words; ++k) {
                             const uint8_t *w = in + ((o * words + k) * inner + i0) * wb;
                             for (uint64_t t = 0; t < t_n; ++t)
                                 std::memcpy(&src[size_t(t * row_bytes + k * wb)], w + t * wb, wb);
                         }
                         for (uint64_t t = 0; t < t_n; ++t)
                             decoder.decode(&src[size_t(t * row_bytes)], row_bytes, 0, count,
                                            &dst[size_t(t * count)], o * inner + i0 + t);
                         for (uint64_t c = 0; c < count; ++c) {
                             uint8_t *yrow = out + (o * count + c) * inner + i0;
                             for (uint64_t t = 0; t < t_n; ++t)
                                 yrow[t] = dst[size_t(t * count + c)];
                         }
                     }
                 });
}

}  // namespace

std::span<const CpuKernelRow> unpack_kernels() {
    static constexpr CpuKernelRow rows[] = {{"Unpack", unpack}};
    return rows;
}

}  // namespace gguftool::runtime::cpu
