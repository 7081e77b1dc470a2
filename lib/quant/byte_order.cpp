// Byte-order conversion of tensor data (gguftool/byte_order.hpp).
//
// Each format's fields and their widths are stated beside its block struct (formats/blocks.hpp,
// GGUFTOOL_BYTE_ORDER, or GGUFTOOL_NO_BYTE_ORDER with the reason it is refused); the per-type table
// here is derived by walking the type table and finding each quantized type's struct.
#include "gguftool/byte_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "formats/blocks.hpp"
#include "gguftool/error.hpp"

namespace gguftool::quant {
namespace {

// A plain type: one element, one number (i8: one byte).
template <GgmlType T>
constexpr std::array<ByteOrderField, 1> kPlain{
    ByteOrderField{0, traits(T).type_size, traits(T).type_size}};

template <uint32_t W>
void reverse_words(uint8_t *p, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k, p += W) {
        if constexpr (W == 2) {
            uint16_t v;
            std::memcpy(&v, p, 2);
            v = __builtin_bswap16(v);
            std::memcpy(p, &v, 2);
        } else if constexpr (W == 4) {
            uint32_t v;
            std::memcpy(&v, p, 4);
            v = __builtin_bswap32(v);
            std::memcpy(p, &v, 4);
        } else {
            static_assert(W == 8);
            uint64_t v;
            std::memcpy(&v, p, 8);
            v = __builtin_bswap64(v);
            std::memcpy(p, &v, 8);
        }
    }
}

template <ByteOrderField F>
void swap_field(uint8_t *block) {
    if constexpr (F.width > 1) reverse_words<F.width>(block + F.offset, F.size / F.width);
}

// The converter of one layout: every field's width is a constant, so the words of a block are
// reversed by straight-line code. Blocks are copied in runs of kRun blocks, then swapped in place.
template <const auto &kFields>
void swap_blocks(const uint8_t *src, uint8_t *dst, uint64_t nblocks) {
    constexpr uint32_t kBlock = kFields.back().offset + kFields.back().size;
    constexpr uint64_t kRun = 4096 / kBlock + 1;
    for (uint64_t first = 0; first < nblocks; first += kRun) {
        const uint64_t n = std::min(kRun, nblocks - first);
        uint8_t *out = dst + first * kBlock;
        if (src != dst) std::memcpy(out, src + first * kBlock, n * kBlock);
        for (uint64_t i = 0; i < n; ++i, out += kBlock)
            [&]<size_t... I>(std::index_sequence<I...>) {
                (swap_field<kFields[I]>(out), ...);
            }
        (std::make_index_sequence<kFields.size()>());
    }
}

struct Layout {
    std::span<const ByteOrderField> fields;
    void (*swap)(const uint8_t *, uint8_t *, uint64_t) = nullptr;
    const char *refusal = nullptr;
};

template <const auto &kFields>
constexpr Layout layout() {
    return {kFields, swap_blocks<kFields>, nullptr};
}

// The row of type id `id`: a plain type's element, a quantized type's fields from its block
// struct (formats/blocks.hpp; every quantized type must have one), a removed id's reason.
template <uint32_t id>
constexpr Layout layout_of_id() {
    constexpr auto type = static_cast<GgmlType>(id);
    if constexpr (kTypeTable[id].removed) {
        return {{}, nullptr, "the type is removed from ggml"};
    } else if constexpr (!kTypeTable[id].quantized) {
        return layout<kPlain<type>>();
    } else {
        using Block = typename formats::BlockOf<type>::type;
        static_assert(!std::is_void_v<Block>, "a quantized type without a block struct");
        using Order = formats::ByteOrder<Block>;
        if constexpr (Order::refusal != nullptr)
            return {{}, nullptr, Order::refusal};
        else
            return layout<Order::fields>();
    }
}

// Indexed by type id.
constexpr auto kLayouts = []<uint32_t... I>(std::integer_sequence<uint32_t, I...>) {
    return std::array<Layout, kGgmlTypeCount>{layout_of_id<I>()...};
}
(std::make_integer_sequence<uint32_t, kGgmlTypeCount>());

const Layout &layout_of(GgmlType t) {
    return kLayouts.at(static_cast<uint32_t>(t));
}

}  // namespace

std::span<const ByteOrderField> byte_order_fields(GgmlType t) {
    return layout_of(t).fields;
}

const char *byte_order_refusal(GgmlType t) {
    return layout_of(t).refusal;
}

bool byte_order_changes(GgmlType t) {
    for (const ByteOrderField &f : layout_of(t).fields)
        if (f.width > 1) return true;
    return false;
}

void swap_byte_order(GgmlType t, const uint8_t *src, uint8_t *dst, uint64_t nblocks) {
    const Layout &l = layout_of(t);
    if (!l.swap)
        throw Error(fmt::format("{} data cannot be converted to the other byte order: {}",
                                traits(t).name, byte_order_refusal(t)));
    l.swap(src, dst, nblocks);
}

}  // namespace gguftool::quant
