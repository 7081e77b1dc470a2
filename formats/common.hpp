// Small exact helpers shared by the block decoders. Target-independent scalar code; the family
// files include it inside their per-target namespaces, so it is compiled for each target.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguftool/byte_order.hpp"
#include "gguftool/half.hpp"
#include "gguftool/types.hpp"

namespace gguftool::formats {

// Each family file declares a format's block once, as ggml does, as a struct of its fields with
// the type it encodes (`struct BlockQ4_0 { static constexpr GgmlType type = GgmlType::q4_0;
// uint16_t d; uint8_t qs[16]; };`). Kernels step by sizeof(Block) bytes and kBlockElements<Block>
// outputs, and read fields at offsetof(Block, field): no size is written a second time.
template <class Block>
inline constexpr size_t kBlockElements = traits(Block::type).block_size;

// The block struct of each quantized type: BlockOf<GgmlType::q4_0>::type is BlockQ4_0 (void for
// a type without one). GGUFTOOL_CHECK_BLOCK declares it, so whoever needs a type's layout (byte
// order, the ONNX export) walks the type table and finds the struct.
template <GgmlType T>
struct BlockOf {
    using type = void;
};

// Ties a block struct to its row of the type table (gguftool/types.hpp), the one place sizes are
// written: its size must be the bytes per block, and `elements`, the element count its code fields
// imply (e.g. sizeof(qs) * 2 for 16 bytes of nibbles), the elements per block. The structs hold
// only byte and 16-bit fields at even offsets (q8_K: a float first), so they have no padding.
#define GGUFTOOL_CHECK_BLOCK(Block, elements)                                     \
    template <>                                                                   \
    struct BlockOf<Block::type> {                                                 \
        using type = Block;                                                       \
    };                                                                            \
    static_assert(sizeof(Block) == ::gguftool::traits(Block::type).type_size,     \
                  #Block ": size differs from the type table's bytes per block"); \
    static_assert((elements) == ::gguftool::formats::kBlockElements<Block>,       \
                  #Block ": its fields hold another element count than the type table's")

// Byte order (gguftool/byte_order.hpp, lib/quant/byte_order.cpp): each block struct states the
// width of the numbers each of its fields holds, as ggml's quantizer writes them and its
// dequantizer reads them (1: bytes, left as they are; 2 and 4: words, reversed), or why its data
// has no certain big-endian layout:
//   GGUFTOOL_BYTE_ORDER(BlockQ4_0, GGUFTOOL_FIELD(d, 2), GGUFTOOL_FIELD(qs, 1));
//   GGUFTOOL_NO_BYTE_ORDER(BlockIq2_XXS, "why");
// Offsets and sizes come from the struct (offsetof, sizeof); the fields must cover it in order.
template <class Block>
struct ByteOrder;

#define GGUFTOOL_FIELD(member, width)                       \
    ::gguftool::quant::ByteOrderField {                     \
        offsetof(Self, member), sizeof(Self::member), width \
    }

// Fields in order, each a whole number of its words, together exactly `block_bytes`.
template <size_t N>
constexpr bool covers(const std::array<quant::ByteOrderField, N> &fields, size_t block_bytes) {
    uint32_t at = 0;
    for (const quant::ByteOrderField &f : fields) {
        if (f.offset != at || f.width == 0 || f.size % f.width != 0) return false;
        at += f.size;
    }
    return at == block_bytes;
}

#define GGUFTOOL_BYTE_ORDER(Block, ...)                            \
    template <>                                                    \
    struct ByteOrder<Block> {                                      \
        using Self = Block;                                        \
        static constexpr std::array fields{__VA_ARGS__};           \
        static constexpr const char *refusal = nullptr;            \
    };                                                             \
    static_assert(covers(ByteOrder<Block>::fields, sizeof(Block)), \
                  #Block ": the byte-order fields do not cover the block")
#define GGUFTOOL_NO_BYTE_ORDER(Block, reason)                           \
    template <>                                                         \
    struct ByteOrder<Block> {                                           \
        static constexpr std::array<quant::ByteOrderField, 0> fields{}; \
        static constexpr const char *refusal = reason;                  \
    }

inline float bits_to_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint16_t load_u16(const uint8_t *p) {
    return uint16_t(p[0] | (p[1] << 8));
}
inline uint32_t load_u32(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The little-endian IEEE half at p (fp16_to_f32: exact, NaNs quiet with their payload kept).
inline float load_f16(const uint8_t *p) {
    return fp16_to_f32(load_u16(p));
}

// MXFP4 block scale. An E8M0 byte x means 2^(x-127); like ggml (ggml_e8m0_to_fp32_half) we return
// half of it, 2^(x-128), because the e2m1 table holds doubled values. x = 0 and 1 give the
// subnormals 2^-128 and 2^-127; 0xFF gives 2^127 (ggml does not treat it as NaN).
inline float e8m0_to_f32_half(uint8_t x) {
    return bits_to_f32(x < 2 ? 0x00200000u << x : uint32_t(x - 1) << 23);
}

// NVFP4 sub-block scale: UE4M3 (4 exponent bits with bias 7, 3 mantissa bits; bit 7 is ignored),
// halved like e8m0 above, as ggml's ggml_ue4m3_to_fp32 does. 0x00 and 0x7F (the E4M3 NaN) give 0;
// exponent 0 is subnormal, man * 2^-9. Every value is exact in float.
constexpr float ue4m3_to_f32_half(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    const uint32_t exp = (x >> 3) & 0xF, man = x & 0x7;
    if (exp == 0) return float(man) * 0x1p-10f;
    // (1 + man/8) * 2^(exp-7) / 2 = (8 + man) * 2^(exp-11): exponent field exp - 8 + 127.
    return std::bit_cast<float>((exp + 119) << 23 | man << 20);
}

// ue4m3_to_f32_half for every byte, so decoders index instead of branching.
inline constexpr std::array<float, 256> kUe4m3Half = [] {
    std::array<float, 256> t{};
    for (int x = 0; x < 256; ++x) t[x] = ue4m3_to_f32_half(uint8_t(x));
    return t;
}();

}  // namespace gguftool::formats
