// Fuzz target: the block decoders of every format, on arbitrary bytes. Byte 0 picks the type,
// byte 1 the output type, the instruction set (AVX3, AVX2, portable: each forced in turn) and the
// thread count; the rest are blocks. FLOAT output must equal llama.cpp's
// dequantize_row_<type> bit for bit (NaN matches NaN) wherever the reference library has one; the
// other outputs must equal that FLOAT output converted, which the library's own tests check
// exhaustively, so here they only have to run clean.
#include <vector>

#include "floats.hpp"
#include "formats/dispatch.hpp"
#include "gguftool/error.hpp"
#include "gguftool/quant.hpp"
#include "gguftool/reference.hpp"
#include "gguftool/types.hpp"

using namespace gguftool;

namespace {

void compare_with_llama(GgmlType type, const uint8_t *blocks, uint64_t n, const float *ours) {
    const auto g = reference::ggml();
    if (!g || !g->dequantize_row[int(type)]) return;
    std::vector<float> theirs(n);
    g->dequantize_row[int(type)](blocks, theirs.data(), int64_t(n));
    for (uint64_t i = 0; i < n; ++i)
        if (!testkit::same_bits(ours[i], theirs[i], testkit::Nans::any))
            std::abort();  // a decoding difference is a finding
}

constexpr DataType kOutputs[] = {DataType::float32, DataType::float16, DataType::bfloat16,
                                 DataType::float64};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint32_t id = data[0] % 48;  // a few ids past the table: unknown types must be refused
    const DataType out_type = kOutputs[data[1] % 4];
    const unsigned threads = 1 + (data[1] >> 7);
    static const std::vector<int64_t> targets = simd::usable_targets();
    simd::force_target(targets[(((data[1] >> 2) & 1) | ((data[1] >> 5) & 2)) % targets.size()]);
    const uint8_t *blocks = data + 2;
    const size_t bytes = size - 2;

    const TypeTraits *t = type_traits(id);
    // Whole blocks normally; every 8th input asks for a wrong count, which must be an error.
    uint64_t elements = t && t->type_size ? bytes / t->type_size * t->block_size : bytes;
    if ((data[1] & 0x38) == 0x38) elements += 1;

    std::vector<uint8_t> out(elements * 8 + 8);
    try {
        quant::decode(GgmlType(id), {blocks, bytes}, elements, out.data(), out_type, threads);
    } catch (const Error &) {
        return 0;
    }
    // Accepted: the type is known and the input was exactly whole blocks.
    if (!t || t->removed || bytes != *row_bytes(GgmlType(id), elements)) std::abort();
    if (out_type == DataType::float32 && t->quantized)
        compare_with_llama(GgmlType(id), blocks, elements, reinterpret_cast<float *>(out.data()));
    return 0;
}
