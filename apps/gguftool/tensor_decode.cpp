#include "tensor_decode.hpp"

#include <fmt/format.h>

#include "gguftool/quant.hpp"

namespace gguftool::cli {

void byteswap_elements(const uint8_t *in, uint8_t *out, size_t count, size_t width) {
    for (size_t i = 0; i < count; ++i)
        for (size_t b = 0; b < width; ++b) out[i * width + b] = in[i * width + width - 1 - b];
}

void decode_elements(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t first,
                     uint64_t n, void *out, DataType out_type, std::vector<uint8_t> &scratch,
                     unsigned threads) {
    const TypeTraits &tt = traits(t.type);
    const gguf::File &file = *model.shards().at(t.shard);
    const bool swap = file.byte_order() == gguf::ByteOrder::big && tt.type_size > 1;
    if (swap && tt.quantized)
        throw Error(fmt::format("decoding {} data of a big-endian file is not supported", tt.name));
    const uint64_t bs = tt.block_size;
    std::span<const uint8_t> bytes =
        t.data.subspan(first / bs * tt.type_size, n / bs * tt.type_size);
    if (swap) {
        scratch.resize(bytes.size());
        byteswap_elements(bytes.data(), scratch.data(), n, tt.type_size);
        bytes = scratch;
    }
    quant::decode(t.type, bytes, n, out, out_type, threads);
}

}  // namespace gguftool::cli
