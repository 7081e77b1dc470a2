#include "tensor_decode.hpp"

#include "gguftool/byte_order.hpp"
#include "gguftool/quant.hpp"

namespace gguftool::cli {

void decode_elements(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t first,
                     uint64_t n, void *out, DataType out_type, std::vector<uint8_t> &scratch,
                     unsigned threads) {
    const TypeTraits &tt = traits(t.type);
    const gguf::File &file = *model.shards().at(t.shard);
    const uint64_t bs = tt.block_size;
    std::span<const uint8_t> bytes =
        t.data.subspan(first / bs * tt.type_size, n / bs * tt.type_size);
    if (file.byte_order() == gguf::ByteOrder::big &&
        (quant::byte_order_changes(t.type) || quant::byte_order_refusal(t.type))) {
        // Blocks of a big-endian file, converted field by field (refused, with the reason, for a
        // type whose big-endian layout is not defined).
        scratch.resize(bytes.size());
        quant::swap_byte_order(t.type, bytes.data(), scratch.data(), n / bs);
        bytes = scratch;
    }
    quant::decode(t.type, bytes, n, out, out_type, threads);
}

}  // namespace gguftool::cli
