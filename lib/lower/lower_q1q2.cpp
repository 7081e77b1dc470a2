// 1- and 2-bit formats: q1_0 q2_0 (formats/SPEC.md).
//
// Each byte of qs holds consecutive elements, lowest bits first, so a lookup of the byte in a
// [256, k] FLOAT table of its k code values gives the elements in order; one Mul by d follows.
// (Measured in onnxruntime for q2_0: faster than extracting the codes with BitShift/BitwiseAnd and
// interleaving them with a Concat, ~92 against ~99 ms for 16M elements on one thread.)
#include <cstddef>
#include <vector>

#include "formats.hpp"
#include "formats/blocks.hpp"

namespace gguftool::lower::detail {
namespace {

using formats::BlockQ1_0;
using formats::BlockQ2_0;

// table[byte][k] = value(k-th kBits-bit field of the byte, lowest first), a [256, 8 / kBits]
// FLOAT table; then table[qs] * d for every block, [nb, elements].
template <class Block, unsigned kBits>
Value bytes_table_times_d(LoweringBuilder &b, const Value &blocks, const char *name,
                          float (*value)(unsigned code)) {
    constexpr size_t per_byte = 8 / kBits;
    static_assert(sizeof(Block::qs) * per_byte == formats::kBlockElements<Block>);
    std::vector<float> v(256 * per_byte);
    for (unsigned i = 0; i < 256; ++i)
        for (size_t k = 0; k < per_byte; ++k)
            v[i * per_byte + k] = value((i >> (kBits * k)) & ((1u << kBits) - 1));
    const Value table = float_table(b, name, {256, int64_t(per_byte)}, v);
    const Value d = f16_field(b, blocks, offsetof(Block, d));
    const Value qs = b.bytes(blocks, offsetof(Block, qs), sizeof(Block::qs));
    const Value codes =
        b.reshape(b.gather(table, as_index(b, qs)), {-1, int64_t(sizeof(Block::qs) * per_byte)});
    return b.mul(codes, d);
}

// y[j] = d if bit j is set, else -d: a multiplication by +1 or -1, which is the sign flip for
// every d but NaN (any NaN is as good as any other).
Value lower_q1_0(LoweringBuilder &b, const Value &blocks) {
    return bytes_table_times_d<BlockQ1_0, 1>(b, blocks, "q1_0_signs",
                                             [](unsigned bit) { return bit ? 1.0f : -1.0f; });
}

// y[j] = (c - 1) * d for the 2-bit code c of element j.
Value lower_q2_0(LoweringBuilder &b, const Value &blocks) {
    return bytes_table_times_d<BlockQ2_0, 2>(b, blocks, "q2_0_codes",
                                             [](unsigned c) { return float(int(c) - 1); });
}

}  // namespace

std::span<const Lowering> q1q2_lowerings() {
    static constexpr Lowering kLowerings[] = {
        {GgmlType::q1_0, lower_q1_0},
        {GgmlType::q2_0, lower_q2_0},
    };
    return kLowerings;
}

}  // namespace gguftool::lower::detail
