// Byte-order conversion of tensor data (gguftool/byte_order.hpp).
//
// Each format's fields are taken from its block struct (offsetof, sizeof: formats/blocks.hpp is
// the one statement of the layouts); what is written here is only each field's width, decided by
// how ggml's quantizer writes it and its dequantizer reads it (ggml-quants.c):
//   - f16 scales (d, m, s, dmin), q8_K's float d: numbers, reversed;
//   - q5_0/q5_1 qh: declared as 4 bytes, but written and read through memcpy to and from one
//     uint32_t whose bit i belongs to element i: one 32-bit word;
//   - iq3_xxs aux: a uint32_t of signs and scale per sub-block, written through a uint32_t
//     pointer and read by memcpy into one: 32-bit words;
//   - iq2_xs qs, iq1_s qh, iq4_xs scales_h, q8_K bsums: declared and used as uint16_t/int16_t;
//   - iq1_m scales: declared as 8 bytes, written and read through a uint16_t pointer: 16-bit words;
//   - everything else is bytes, read byte by byte. q3_K's scales are copied into uint32_t words
//     and unpacked with shifts and masks, but every operation stays within its byte
//     (masks 0x0f0f0f0f, 0x03030303) and the result is read back as bytes: bytes either way.
#include "gguftool/byte_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <utility>

#include "formats/blocks.hpp"
#include "gguftool/error.hpp"

namespace gguftool::quant {
namespace {

using namespace formats;  // the block structs

#define GGUFTOOL_FIELD(Block, member, width)                  \
    ByteOrderField {                                          \
        offsetof(Block, member), sizeof(Block::member), width \
    }

// Fields in order, each a whole number of its words, together exactly `block_bytes`.
template <size_t N>
constexpr bool covers(const std::array<ByteOrderField, N> &fields, uint32_t block_bytes) {
    uint32_t at = 0;
    for (const ByteOrderField &f : fields) {
        if (f.offset != at || f.width == 0 || f.size % f.width != 0) return false;
        at += f.size;
    }
    return at == block_bytes;
}

// One format's table, checked against its struct (whose size blocks.hpp checks against the type
// table).
#define GGUFTOOL_LAYOUT(name, Block, ...)   \
    constexpr std::array name{__VA_ARGS__}; \
    static_assert(covers(name, sizeof(Block)), #Block ": the fields do not cover the block")

GGUFTOOL_LAYOUT(kQ4_0, BlockQ4_0, GGUFTOOL_FIELD(BlockQ4_0, d, 2),
                GGUFTOOL_FIELD(BlockQ4_0, qs, 1));
GGUFTOOL_LAYOUT(kQ4_1, BlockQ4_1, GGUFTOOL_FIELD(BlockQ4_1, d, 2), GGUFTOOL_FIELD(BlockQ4_1, m, 2),
                GGUFTOOL_FIELD(BlockQ4_1, qs, 1));
GGUFTOOL_LAYOUT(kQ5_0, BlockQ5_0, GGUFTOOL_FIELD(BlockQ5_0, d, 2), GGUFTOOL_FIELD(BlockQ5_0, qh, 4),
                GGUFTOOL_FIELD(BlockQ5_0, qs, 1));
GGUFTOOL_LAYOUT(kQ5_1, BlockQ5_1, GGUFTOOL_FIELD(BlockQ5_1, d, 2), GGUFTOOL_FIELD(BlockQ5_1, m, 2),
                GGUFTOOL_FIELD(BlockQ5_1, qh, 4), GGUFTOOL_FIELD(BlockQ5_1, qs, 1));
GGUFTOOL_LAYOUT(kQ8_0, BlockQ8_0, GGUFTOOL_FIELD(BlockQ8_0, d, 2),
                GGUFTOOL_FIELD(BlockQ8_0, qs, 1));
GGUFTOOL_LAYOUT(kQ8_1, BlockQ8_1, GGUFTOOL_FIELD(BlockQ8_1, d, 2), GGUFTOOL_FIELD(BlockQ8_1, s, 2),
                GGUFTOOL_FIELD(BlockQ8_1, qs, 1));
GGUFTOOL_LAYOUT(kQ1_0, BlockQ1_0, GGUFTOOL_FIELD(BlockQ1_0, d, 2),
                GGUFTOOL_FIELD(BlockQ1_0, qs, 1));
GGUFTOOL_LAYOUT(kQ2_0, BlockQ2_0, GGUFTOOL_FIELD(BlockQ2_0, d, 2),
                GGUFTOOL_FIELD(BlockQ2_0, qs, 1));
GGUFTOOL_LAYOUT(kMxfp4, BlockMxfp4, GGUFTOOL_FIELD(BlockMxfp4, e, 1),
                GGUFTOOL_FIELD(BlockMxfp4, qs, 1));
GGUFTOOL_LAYOUT(kNvfp4, BlockNvfp4, GGUFTOOL_FIELD(BlockNvfp4, d, 1),
                GGUFTOOL_FIELD(BlockNvfp4, qs, 1));
GGUFTOOL_LAYOUT(kQ2_K, BlockQ2_K, GGUFTOOL_FIELD(BlockQ2_K, scales, 1),
                GGUFTOOL_FIELD(BlockQ2_K, qs, 1), GGUFTOOL_FIELD(BlockQ2_K, d, 2),
                GGUFTOOL_FIELD(BlockQ2_K, dmin, 2));
GGUFTOOL_LAYOUT(kQ3_K, BlockQ3_K, GGUFTOOL_FIELD(BlockQ3_K, hmask, 1),
                GGUFTOOL_FIELD(BlockQ3_K, qs, 1), GGUFTOOL_FIELD(BlockQ3_K, scales, 1),
                GGUFTOOL_FIELD(BlockQ3_K, d, 2));
GGUFTOOL_LAYOUT(kQ4_K, BlockQ4_K, GGUFTOOL_FIELD(BlockQ4_K, d, 2),
                GGUFTOOL_FIELD(BlockQ4_K, dmin, 2), GGUFTOOL_FIELD(BlockQ4_K, scales, 1),
                GGUFTOOL_FIELD(BlockQ4_K, qs, 1));
GGUFTOOL_LAYOUT(kQ5_K, BlockQ5_K, GGUFTOOL_FIELD(BlockQ5_K, d, 2),
                GGUFTOOL_FIELD(BlockQ5_K, dmin, 2), GGUFTOOL_FIELD(BlockQ5_K, scales, 1),
                GGUFTOOL_FIELD(BlockQ5_K, qh, 1), GGUFTOOL_FIELD(BlockQ5_K, qs, 1));
GGUFTOOL_LAYOUT(kQ6_K, BlockQ6_K, GGUFTOOL_FIELD(BlockQ6_K, ql, 1),
                GGUFTOOL_FIELD(BlockQ6_K, qh, 1), GGUFTOOL_FIELD(BlockQ6_K, scales, 1),
                GGUFTOOL_FIELD(BlockQ6_K, d, 2));
GGUFTOOL_LAYOUT(kQ8_K, BlockQ8_K, GGUFTOOL_FIELD(BlockQ8_K, d, 4), GGUFTOOL_FIELD(BlockQ8_K, qs, 1),
                GGUFTOOL_FIELD(BlockQ8_K, bsums, 2));
GGUFTOOL_LAYOUT(kTq1_0, BlockTq1_0, GGUFTOOL_FIELD(BlockTq1_0, qs, 1),
                GGUFTOOL_FIELD(BlockTq1_0, qh, 1), GGUFTOOL_FIELD(BlockTq1_0, d, 2));
GGUFTOOL_LAYOUT(kTq2_0, BlockTq2_0, GGUFTOOL_FIELD(BlockTq2_0, qs, 1),
                GGUFTOOL_FIELD(BlockTq2_0, d, 2));
GGUFTOOL_LAYOUT(kIq2_XS, BlockIq2_XS, GGUFTOOL_FIELD(BlockIq2_XS, d, 2),
                GGUFTOOL_FIELD(BlockIq2_XS, qs, 2), GGUFTOOL_FIELD(BlockIq2_XS, scales, 1));
GGUFTOOL_LAYOUT(kIq2_S, BlockIq2_S, GGUFTOOL_FIELD(BlockIq2_S, d, 2),
                GGUFTOOL_FIELD(BlockIq2_S, qs, 1), GGUFTOOL_FIELD(BlockIq2_S, qh, 1),
                GGUFTOOL_FIELD(BlockIq2_S, scales, 1));
GGUFTOOL_LAYOUT(kIq3_XXS, BlockIq3_XXS, GGUFTOOL_FIELD(BlockIq3_XXS, d, 2),
                GGUFTOOL_FIELD(BlockIq3_XXS, qs, 1), GGUFTOOL_FIELD(BlockIq3_XXS, aux, 4));
GGUFTOOL_LAYOUT(kIq3_S, BlockIq3_S, GGUFTOOL_FIELD(BlockIq3_S, d, 2),
                GGUFTOOL_FIELD(BlockIq3_S, qs, 1), GGUFTOOL_FIELD(BlockIq3_S, qh, 1),
                GGUFTOOL_FIELD(BlockIq3_S, signs, 1), GGUFTOOL_FIELD(BlockIq3_S, scales, 1));
GGUFTOOL_LAYOUT(kIq1_S, BlockIq1_S, GGUFTOOL_FIELD(BlockIq1_S, d, 2),
                GGUFTOOL_FIELD(BlockIq1_S, qs, 1), GGUFTOOL_FIELD(BlockIq1_S, qh, 2));
GGUFTOOL_LAYOUT(kIq1_M, BlockIq1_M, GGUFTOOL_FIELD(BlockIq1_M, qs, 1),
                GGUFTOOL_FIELD(BlockIq1_M, qh, 1), GGUFTOOL_FIELD(BlockIq1_M, scales, 2));
GGUFTOOL_LAYOUT(kIq4_NL, BlockIq4_NL, GGUFTOOL_FIELD(BlockIq4_NL, d, 2),
                GGUFTOOL_FIELD(BlockIq4_NL, qs, 1));
GGUFTOOL_LAYOUT(kIq4_XS, BlockIq4_XS, GGUFTOOL_FIELD(BlockIq4_XS, d, 2),
                GGUFTOOL_FIELD(BlockIq4_XS, scales_h, 2), GGUFTOOL_FIELD(BlockIq4_XS, scales_l, 1),
                GGUFTOOL_FIELD(BlockIq4_XS, qs, 1));

// A plain type: one element, one number (i8: one byte).
template <GgmlType T>
constexpr std::array<ByteOrderField, 1> kPlain{
    ByteOrderField{0, traits(T).type_size, traits(T).type_size}};

#undef GGUFTOOL_LAYOUT
#undef GGUFTOOL_FIELD

constexpr const char *kIq2XxsRefusal =
    "iq2_xxs data has no certain big-endian layout: ggml's quantizer packs each sub-block's four "
    "grid indices into one 32-bit word and its dequantizer reads them back as four bytes, which "
    "agree only on a little-endian machine";

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

// Indexed by type id; removed ids keep an empty row with their reason.
const std::array<Layout, kGgmlTypeCount> &layouts() {
    static const auto table = [] {
        std::array<Layout, kGgmlTypeCount> t{};
        for (uint32_t id = 0; id < kGgmlTypeCount; ++id)
            if (kTypeTable[id].removed) t[id].refusal = "the type is removed from ggml";
        const auto set = [&](GgmlType type, Layout l) { t[static_cast<uint32_t>(type)] = l; };
        set(GgmlType::f32, layout<kPlain<GgmlType::f32>>());
        set(GgmlType::f16, layout<kPlain<GgmlType::f16>>());
        set(GgmlType::bf16, layout<kPlain<GgmlType::bf16>>());
        set(GgmlType::f64, layout<kPlain<GgmlType::f64>>());
        set(GgmlType::i8, layout<kPlain<GgmlType::i8>>());
        set(GgmlType::i16, layout<kPlain<GgmlType::i16>>());
        set(GgmlType::i32, layout<kPlain<GgmlType::i32>>());
        set(GgmlType::i64, layout<kPlain<GgmlType::i64>>());
        set(GgmlType::q4_0, layout<kQ4_0>());
        set(GgmlType::q4_1, layout<kQ4_1>());
        set(GgmlType::q5_0, layout<kQ5_0>());
        set(GgmlType::q5_1, layout<kQ5_1>());
        set(GgmlType::q8_0, layout<kQ8_0>());
        set(GgmlType::q8_1, layout<kQ8_1>());
        set(GgmlType::q1_0, layout<kQ1_0>());
        set(GgmlType::q2_0, layout<kQ2_0>());
        set(GgmlType::mxfp4, layout<kMxfp4>());
        set(GgmlType::nvfp4, layout<kNvfp4>());
        set(GgmlType::q2_k, layout<kQ2_K>());
        set(GgmlType::q3_k, layout<kQ3_K>());
        set(GgmlType::q4_k, layout<kQ4_K>());
        set(GgmlType::q5_k, layout<kQ5_K>());
        set(GgmlType::q6_k, layout<kQ6_K>());
        set(GgmlType::q8_k, layout<kQ8_K>());
        set(GgmlType::tq1_0, layout<kTq1_0>());
        set(GgmlType::tq2_0, layout<kTq2_0>());
        set(GgmlType::iq2_xxs, Layout{{}, nullptr, kIq2XxsRefusal});
        set(GgmlType::iq2_xs, layout<kIq2_XS>());
        set(GgmlType::iq2_s, layout<kIq2_S>());
        set(GgmlType::iq3_xxs, layout<kIq3_XXS>());
        set(GgmlType::iq3_s, layout<kIq3_S>());
        set(GgmlType::iq1_s, layout<kIq1_S>());
        set(GgmlType::iq1_m, layout<kIq1_M>());
        set(GgmlType::iq4_nl, layout<kIq4_NL>());
        set(GgmlType::iq4_xs, layout<kIq4_XS>());
        return t;
    }();
    return table;
}

const Layout &layout_of(GgmlType t) {
    return layouts().at(static_cast<uint32_t>(t));
}

}  // namespace

std::span<const ByteOrderField> byte_order_fields(GgmlType t) {
    return layout_of(t).fields;
}

const char *byte_order_refusal(GgmlType t) {
    const Layout &l = layout_of(t);
    return l.swap ? nullptr : l.refusal ? l.refusal : "the type has no byte-order table";
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
