// Legacy 32-element formats: q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 (formats/SPEC.md).
#include <cstddef>

#include "formats.hpp"
#include "formats/blocks.hpp"

namespace gguftool::lower::detail {

using formats::BlockQ4_0;

// y[j] = ((qs[j] & 15) - 8) * d, y[j + 16] = ((qs[j] >> 4) - 8) * d: the codes (low nibbles,
// then high nibbles) minus 8, exact in FLOAT, times d.
Value lower_q4_0(Builder &b, const Value &blocks) {
    const Value d = f16_field(b, blocks, offsetof(BlockQ4_0, d));
    const Value qs = b.bytes(blocks, offsetof(BlockQ4_0, qs), sizeof(BlockQ4_0::qs));
    const Value codes =
        b.concat({b.low_bits(qs, DataType::uint8, 4), b.shift_right(qs, DataType::uint8, 4)}, 1);
    const Value q = b.sub(b.cast(codes, DataType::float32), b.scalar(DataType::float32, 8));
    return b.mul(q, d);
}

}  // namespace gguftool::lower::detail
