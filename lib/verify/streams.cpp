// Streams of values, chunk by chunk, and their comparison.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "gguftool/parallel.hpp"
#include "verify_impl.hpp"

namespace gguftool::verify::detail {

DataType plain_dtype(GgmlType type) {
    return onnx_data_type(type);
}

Stream own_bytes(const gguf::TensorInfo &t) {
    const DataType dtype = plain_dtype(t.type);
    const size_t size = dtype_size(dtype);
    const std::span<const uint8_t> data = t.data;
    return {dtype, [data, size](uint64_t first, uint64_t count, void *out) {
                if (count) std::memcpy(out, data.data() + first * size, count * size);
            }};
}

StreamOrReason expected_float32(Context &ctx, const gguf::TensorInfo &t) {
    if (!ctx.options.reference_dir.empty()) return reference_stream(ctx, t, DataType::float32);
    if (auto why = ctx.llama->unsupported(t.type)) return *why;
    const LlamaDecoder *llama = ctx.llama.get();
    const TypeTraits &tt = traits(t.type);
    const std::span<const uint8_t> data = t.data;
    const unsigned threads = ctx.threads;
    return Stream{DataType::float32, [=, &tt](uint64_t first, uint64_t count, void *out) {
                      const uint64_t offset = first / tt.block_size * tt.type_size;
                      llama->decode(t.type, data.subspan(offset, *row_bytes(t.type, count)), count,
                                    static_cast<float *>(out), threads);
                  }};
}

Stream convert_float32(Stream in, DataType out_dtype) {
    if (out_dtype == DataType::float32) return in;
    // The float32 values go through a scratch buffer, then are converted element by element.
    auto scratch = std::make_shared<std::vector<float>>();
    Fill source = std::move(in.fill);
    return {out_dtype, [=](uint64_t first, uint64_t count, void *out) {
                scratch->resize(count);
                source(first, count, scratch->data());
                const float *f = scratch->data();
                if (out_dtype == DataType::float64) {
                    for (uint64_t i = 0; i < count; ++i) static_cast<double *>(out)[i] = f[i];
                } else {
                    uint16_t *h = static_cast<uint16_t *>(out);
                    const bool half = out_dtype == DataType::float16;
                    for (uint64_t i = 0; i < count; ++i)
                        h[i] = half ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
                }
            }};
}

Diff compare_streams(Context &ctx, uint64_t elements, uint64_t granule, const Stream &ours,
                     const Stream &expected, uint64_t progress_units) {
    const size_t size = dtype_size(ours.dtype);
    const uint64_t chunk =
        std::max<uint64_t>(granule, ctx.options.chunk_elements / granule * granule);
    // uint64_t words: 8-byte alignment, enough for every element type.
    std::vector<uint64_t> a((std::min(chunk, elements) * size + 7) / 8);
    std::vector<uint64_t> b(a.size());
    Diff total;
    uint64_t units_done = 0;
    for (uint64_t first = 0; first < elements; first += chunk) {
        const uint64_t n = std::min(chunk, elements - first);
        ours.fill(first, n, a.data());
        expected.fill(first, n, b.data());
        // The comparison in parallel parts, joined in order.
        const unsigned parts =
            unsigned(std::min<uint64_t>(ctx.threads, n / (uint64_t(1) << 16) + 1));
        std::vector<Diff> diffs(parts);
        const auto *pa = reinterpret_cast<const uint8_t *>(a.data());
        const auto *pb = reinterpret_cast<const uint8_t *>(b.data());
        for_each_part(n, 1, parts, [&](unsigned p, uint64_t lo, uint64_t hi) {
            diffs[p] = compare_bits(ours.dtype, pa + lo * size, pb + lo * size, hi - lo);
        });
        for (const Diff &d : diffs) total.append(d);
        const uint64_t units = elements ? progress_units * (first + n) / elements : 0;
        ctx.advance(units - units_done);
        units_done = units;
    }
    ctx.advance(progress_units - units_done);
    return total;
}

bool selected(const Options &options, std::string_view name) {
    return gguf::name_matches(name, options.tensor_globs);
}

bool big_endian(const gguf::Model &model, const gguf::TensorInfo &t) {
    return model.shards().at(t.shard)->byte_order() == gguf::ByteOrder::big;
}

TensorResult new_result(std::string name, std::string type, uint64_t elements) {
    TensorResult r;
    r.name = std::move(name);
    r.type = std::move(type);
    r.elements = elements;
    return r;
}

void record(const Options &options, Report &report, TensorResult r) {
    switch (r.status) {
        case Status::match:
            ++report.matched;
            break;
        case Status::mismatch:
            ++report.mismatched;
            break;
        case Status::not_compared:
            ++report.not_compared;
            break;
    }
    if (options.on_result) options.on_result(r);
    report.tensors.push_back(std::move(r));
}

}  // namespace gguftool::verify::detail
