// Plain (unquantized) tensor types — f32 f16 bf16 f64 i8 i16 i32 i64 — to any output type.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguftool/quant.hpp"

namespace gguftool::quant {

// Converts n elements of plain type `t` at `in` (any alignment) to `out`. Same type: a byte copy.
// Otherwise each value is rounded once, to nearest even (exact where the output holds it).
void decode_plain(GgmlType t, const uint8_t *in, size_t n, void *out, DataType out_type);

}  // namespace gguftool::quant
