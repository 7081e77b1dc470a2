// quant::decode: checks lengths, splits the blocks over threads, decodes and converts.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "convert.hpp"
#include "formats/formats.hpp"
#include "gguftool/error.hpp"
#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"
#include "plain.hpp"

namespace gguftool::quant {
namespace {

// Per-thread staging buffer for non-FLOAT output: small enough to stay in L1/L2 between the
// decode and the conversion, a whole number of blocks for every block size (32..256).
constexpr size_t kChunkFloats = 4096;
// Below this much output, threads cost more than they save.
constexpr uint64_t kSerialOutputBytes = 256 << 10;

void store_floats(const float *in, size_t n, uint8_t *out, DataType t) {
    switch (t) {
        case DataType::float32:
            std::memcpy(out, in, n * 4);
            break;
        case DataType::float16:
            f32_to_f16(in, reinterpret_cast<uint16_t *>(out), n);
            break;
        case DataType::bfloat16:
            f32_to_bf16(in, reinterpret_cast<uint16_t *>(out), n);
            break;
        case DataType::float64:
            f32_to_f64(in, reinterpret_cast<double *>(out), n);
            break;
        default:  // decode() accepts only the four floating types
            break;
    }
}

// Decodes blocks [begin, end) of a quantized tensor.
void decode_blocks(formats::BlockDecoder decoder, const TypeTraits &tt, const uint8_t *in,
                   uint64_t begin, uint64_t end, uint8_t *out, DataType t) {
    const size_t out_size = output_size(t);
    in += begin * tt.type_size;
    out += begin * tt.block_size * out_size;
    const uint64_t count = end - begin;
    if (t == DataType::float32) {
        decoder(in, count, reinterpret_cast<float *>(out));
        return;
    }
    alignas(64) float buf[kChunkFloats];
    const size_t step = kChunkFloats / tt.block_size;
    for (uint64_t b = 0; b < count; b += step) {
        const size_t blocks = std::min<uint64_t>(step, count - b);
        decoder(in + b * tt.type_size, blocks, buf);
        store_floats(buf, blocks * tt.block_size, out + b * tt.block_size * out_size, t);
    }
}

// Threads take contiguous pieces of about this much output from a shared counter, so a thread
// that is slowed down (a busy machine) leaves more pieces to the others instead of holding
// everyone up at the end.
constexpr uint64_t kPieceOutputBytes = 256 << 10;

unsigned threads_for(unsigned requested, uint64_t pieces, uint64_t output_bytes) {
    if (output_bytes < kSerialOutputBytes) return 1;
    return unsigned(std::min<uint64_t>(thread_count(requested), pieces));
}

}  // namespace

size_t output_size(DataType t) {
    return is_floating(t) ? dtype_size(t) : 0;
}

void decode(GgmlType type, std::span<const uint8_t> input, uint64_t elements, void *output,
            DataType out_type, unsigned threads) {
    const uint32_t id = static_cast<uint32_t>(type);
    const TypeTraits *tt = type_traits(id);
    if (!tt) throw Error(fmt::format("unknown ggml type id {}", id));
    if (tt->removed)
        throw Error(fmt::format("type {} (id {}) was removed from ggml and cannot be decoded",
                                tt->name, id));
    const size_t out_size = output_size(out_type);
    if (out_size == 0)
        throw Error(fmt::format("{}: unsupported output type {}", tt->name, int(out_type)));
    if (elements % tt->block_size != 0)
        throw Error(fmt::format("{}: {} elements is not a whole number of {}-element blocks",
                                tt->name, elements, tt->block_size));
    const std::optional<uint64_t> need = row_bytes(type, elements);
    if (!need || elements > SIZE_MAX / out_size)
        throw Error(fmt::format("{}: {} elements is too many", tt->name, elements));
    if (input.size() != *need)
        throw Error(fmt::format(
            "{}: input is {} bytes but {} elements take {} ({} blocks of {} bytes)", tt->name,
            input.size(), elements, *need, elements / tt->block_size, tt->type_size));
    if (elements == 0) return;
    if (!output) throw Error(fmt::format("{}: no output buffer", tt->name));

    formats::BlockDecoder decoder = nullptr;
    if (tt->quantized) {
        decoder = formats::block_decoder(type);
        if (!decoder) throw Error(fmt::format("{}: no decoder for this format yet", tt->name));
    }

    // Work units: blocks for quantized types, elements for plain ones (block size 1). Every unit
    // is decoded the same way whichever thread takes it, so the bytes never depend on `threads`.
    const uint64_t units = elements / tt->block_size;
    const uint64_t unit_bytes = uint64_t(tt->block_size) * out_size;
    uint64_t piece = std::max<uint64_t>(1, kPieceOutputBytes / unit_bytes);
    uint64_t pieces = (units + piece - 1) / piece;
    const unsigned n = threads_for(threads, pieces, elements * out_size);
    // A large FLOAT output is split evenly, one piece per thread, so that each decoder call is big
    // enough for streaming stores (formats::kStreamMinBytes).
    if (decoder && out_type == DataType::float32 &&
        elements * out_size / n >= formats::kStreamMinBytes) {
        piece = (units + n - 1) / n;
        pieces = (units + piece - 1) / piece;
    }
    const uint8_t *in = input.data();
    auto *out = static_cast<uint8_t *>(output);
    run_pieces(n, pieces, [&](uint64_t p) {
        const uint64_t begin = p * piece, end = std::min(units, begin + piece);
        if (decoder) {
            decode_blocks(decoder, *tt, in, begin, end, out, out_type);
        } else {
            decode_plain(type, in + begin * tt->type_size, end - begin, out + begin * out_size,
                         out_type);
        }
    });
}

void decode_f32(GgmlType type, std::span<const uint8_t> input, uint64_t elements, float *output,
                unsigned threads) {
    decode(type, input, elements, output, DataType::float32, threads);
}

}  // namespace gguftool::quant
