// Decoded values and statistics of tensors, through gguftool::quant::decode for every type.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dump.hpp"
#include "gguftool/byte_order.hpp"
#include "tensor_decode.hpp"

namespace gguftool::cli::dump {
namespace {

// Elements decoded at a time: whole blocks, about 1 Mi values (8 MiB of doubles).
constexpr uint64_t kChunkElements = uint64_t(1) << 20;

bool is_integer(GgmlType t) {
    return t == GgmlType::i8 || t == GgmlType::i16 || t == GgmlType::i32 || t == GgmlType::i64;
}

const gguf::File &shard_of(const gguf::Model &model, const gguf::TensorInfo &t) {
    return *model.shards().at(t.shard);
}

// Calls f(values, n) for consecutive chunks covering the first `limit` elements of `t`, rounded
// up to whole blocks.
template <class F>
void decode_chunks(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t limit, F &&f) {
    const uint64_t bs = traits(t.type).block_size;
    const uint64_t chunk = std::max<uint64_t>(bs, kChunkElements / bs * bs);
    const uint64_t total = std::min(t.elements, (limit + bs - 1) / bs * bs);
    std::vector<double> values(std::min(chunk, total));
    std::vector<uint8_t> swapped;
    for (uint64_t start = 0; start < total; start += chunk) {
        const uint64_t n = std::min(chunk, total - start);
        decode_elements(model, t, start, n, values.data(), DataType::float64, swapped);
        f(values.data(), static_cast<size_t>(n));
    }
}

// Integer tensors are read directly so that i64 values stay exact.
std::vector<int64_t> first_ints(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t n) {
    const size_t width = traits(t.type).type_size;
    const bool big = shard_of(model, t).byte_order() == gguf::ByteOrder::big;
    std::vector<int64_t> out(std::min(n, t.elements));
    for (size_t i = 0; i < out.size(); ++i) {
        uint8_t b[8];
        const uint8_t *p = t.data.data() + i * width;
        if (big)
            quant::swap_byte_order(t.type, p, b, 1);  // one element: one block
        else
            std::memcpy(b, p, width);
        switch (t.type) {
            case GgmlType::i8:
                out[i] = static_cast<int8_t>(b[0]);
                break;
            case GgmlType::i16:
                out[i] = int16_t(b[0] | b[1] << 8);
                break;
            case GgmlType::i32: {
                int32_t v;
                std::memcpy(&v, b, 4);
                out[i] = v;
                break;
            }
            default:
                std::memcpy(&out[i], b, 8);
        }
    }
    return out;
}

}  // namespace

Values first_values(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t n) {
    Values v;
    v.integer = is_integer(t.type);
    v.is_f64 = t.type == GgmlType::f64;
    if (v.integer) {
        v.ints = first_ints(model, t, n);
        return v;
    }
    const uint64_t keep = std::min(n, t.elements);
    v.reals.reserve(keep);
    decode_chunks(model, t, keep, [&](const double *x, size_t count) {
        const size_t take = std::min<uint64_t>(count, keep - v.reals.size());
        v.reals.insert(v.reals.end(), x, x + take);
    });
    return v;
}

// Per chunk: a two-pass mean and sum of squared deviations, merged into the running totals with
// Chan et al.'s formula — stable in double even for large tensors with a large mean.
Stats tensor_stats(const gguf::Model &model, const gguf::TensorInfo &t) {
    Stats s;
    s.count = t.elements;
    s.min = INFINITY;
    s.max = -INFINITY;
    double m2 = 0;
    decode_chunks(model, t, t.elements, [&](const double *x, size_t n) {
        double sum = 0;
        uint64_t finite = 0;
        for (size_t i = 0; i < n; ++i) {
            const double v = x[i];
            if (std::isnan(v)) {
                ++s.nan;
            } else if (std::isinf(v)) {
                ++s.inf;
            } else {
                ++finite;
                sum += v;
                s.min = std::min(s.min, v);
                s.max = std::max(s.max, v);
            }
        }
        if (finite == 0) return;
        const double mean = sum / double(finite);
        double chunk_m2 = 0;
        for (size_t i = 0; i < n; ++i)
            if (std::isfinite(x[i])) chunk_m2 += (x[i] - mean) * (x[i] - mean);
        const double total = double(s.finite + finite);
        const double delta = mean - s.mean;
        s.mean += delta * double(finite) / total;
        m2 += chunk_m2 + delta * delta * double(s.finite) * double(finite) / total;
        s.finite += finite;
    });
    if (s.finite == 0) {
        s.min = s.max = s.mean = NAN;
        s.std = NAN;
    } else {
        s.std = std::sqrt(m2 / double(s.finite));
    }
    return s;
}

}  // namespace gguftool::cli::dump
