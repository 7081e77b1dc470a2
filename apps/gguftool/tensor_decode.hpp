// Decoding part of a tensor, whatever the byte order of its file: what dump's values and
// statistics and diff's numbers are computed from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/gguf.hpp"

namespace gguftool::cli {

// Decodes the `n` elements of `t` from element `first` (both whole blocks) into `out` as
// `out_type` (quant::decode, on up to `threads` threads; 0 = all). Data of a big-endian file is
// converted to little-endian first, into `scratch` (quant::swap_byte_order; gguftool::Error for
// iq2_xxs, which has no defined big-endian layout).
void decode_elements(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t first,
                     uint64_t n, void *out, DataType out_type, std::vector<uint8_t> &scratch,
                     unsigned threads = 0);

}  // namespace gguftool::cli
