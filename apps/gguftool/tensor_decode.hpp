// Decoding part of a tensor, whatever the byte order of its file: what dump's values and
// statistics and diff's numbers are computed from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gguftool/data_type.hpp"
#include "gguftool/gguf.hpp"

namespace gguftool::cli {

// Reverses the bytes of each of `count` elements of `width` bytes (in and out must not overlap).
void byteswap_elements(const uint8_t *in, uint8_t *out, size_t count, size_t width);

// Decodes the `n` elements of `t` from element `first` (both whole blocks) into `out` as
// `out_type` (quant::decode, on up to `threads` threads; 0 = all). Plain values of a big-endian
// file are stored big-endian and are swapped first, into `scratch`; quantized data of a
// big-endian file cannot be decoded (gguftool::Error, as for a type without a decoder).
void decode_elements(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t first,
                     uint64_t n, void *out, DataType out_type, std::vector<uint8_t> &scratch,
                     unsigned threads = 0);

}  // namespace gguftool::cli
