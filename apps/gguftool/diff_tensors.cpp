// gguftool diff: the tensors of two models, one at a time — bytes first, then, where both
// decode, numbers from their decoded values.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "diff.hpp"
#include "gguftool/parallel.hpp"
#include "tensor_decode.hpp"

namespace gguftool::cli::diff {
namespace {

// Elements decoded per side at a time (then a multiple of both block sizes, which are powers
// of two): two float buffers of 4 MiB, reused for every tensor.
constexpr uint64_t kChunkElements = uint64_t(1) << 20;
// The sums are taken over pieces of this many elements, a fixed cut of each chunk, and added in
// piece order: the result does not depend on how many threads took the pieces.
constexpr uint64_t kPieceElements = uint64_t(1) << 14;
// Bytes compared at a time when looking for the first different block.
constexpr size_t kCompareBytes = size_t(1) << 16;

const gguf::File &shard_of(const gguf::Model &m, const gguf::TensorInfo &t) {
    return *m.shards().at(t.shard);
}

TensorDiff entry(Status status, const gguf::TensorInfo *a, const gguf::TensorInfo *b) {
    TensorDiff d;
    d.name = a ? a->name : b->name;
    d.status = status;
    d.a = a, d.b = b;
    return d;
}

struct Sums {
    double d2 = 0, a2 = 0, b2 = 0, ab = 0, max_abs = 0;
    bool nan = false;  // a NaN facing another value
    uint64_t mismatches = 0;

    void add(const Sums &o) {
        d2 += o.d2, a2 += o.a2, b2 += o.b2, ab += o.ab;
        max_abs = std::max(max_abs, o.max_abs);
        nan = nan || o.nan;
        mismatches += o.mismatches;
    }
};

// Equal elements (a == b, or both NaN) differ by 0; two NaNs are left out of every sum. The rest
// is IEEE arithmetic in double: an infinity or a NaN facing another value makes the sums, and
// so the numbers, infinite or NaN.
void add_piece(const float *a, const float *b, size_t n, Sums &s) {
    for (size_t i = 0; i < n; ++i) {
        const double x = a[i], y = b[i];
        if (std::isnan(x) && std::isnan(y)) continue;
        s.a2 += x * x, s.b2 += y * y, s.ab += x * y;
        if (x == y) continue;
        ++s.mismatches;
        const double d = x - y;
        if (std::isnan(d)) s.nan = true;
        s.d2 += d * d;
        s.max_abs = std::max(s.max_abs, std::fabs(d));
    }
}

Metrics metrics_of(const Sums &s, uint64_t elements) {
    Metrics m;
    m.mismatches = s.mismatches;
    m.max_abs_diff = s.nan ? NAN : s.max_abs;
    m.rmse = elements ? std::sqrt(s.d2 / double(elements)) : 0.0;
    if (s.b2 != 0)
        m.nmse = s.d2 / s.b2;
    else  // B is all zeros: 0 if A is too, else infinite (NaN stays NaN)
        m.nmse = s.d2 == 0 ? 0.0 : s.d2 > 0 ? INFINITY : NAN;
    if (s.a2 == 0 && s.b2 == 0)
        m.cosine = 1.0;               // two zero vectors are equal
    else if (s.a2 != 0 && s.b2 != 0)  // a zero vector has no direction: no cosine
        m.cosine = std::clamp(s.ab / (std::sqrt(s.a2) * std::sqrt(s.b2)), -1.0, 1.0);
    return m;
}

// The first block whose bytes differ, for two tensors of the same type; none when the bytes are
// equal.
std::optional<DifferentBlock> first_different_block(const gguf::TensorInfo &a,
                                                    const gguf::TensorInfo &b) {
    const size_t ts = traits(a.type).type_size;
    const size_t common = std::min(a.data.size(), b.data.size());
    size_t at = common;
    for (size_t p = 0; p < common; p += kCompareBytes) {
        const size_t n = std::min(kCompareBytes, common - p);
        if (std::memcmp(a.data.data() + p, b.data.data() + p, n) == 0) continue;
        at = size_t(
            std::mismatch(a.data.begin() + p, a.data.begin() + p + n, b.data.begin() + p).first -
            a.data.begin());
        break;
    }
    if (at == common && a.data.size() == b.data.size()) return std::nullopt;
    DifferentBlock d;
    d.index = at / ts;
    const size_t from = d.index * ts;
    if (from + ts <= a.data.size()) d.a = a.data.subspan(from, ts);
    if (from + ts <= b.data.size()) d.b = b.data.subspan(from, ts);
    return d;
}

class Comparer {
public:
    Comparer(const gguf::Model &a, const gguf::Model &b, unsigned threads)
        : a_(a), b_(b), threads_(threads) {}

    TensorDiff compare(const gguf::TensorInfo &ta, const gguf::TensorInfo &tb) {
        TensorDiff d = entry(Status::different, &ta, &tb);
        const bool same_order = shard_of(a_, ta).byte_order() == shard_of(b_, tb).byte_order();
        const bool same_dims = ta.n_dims == tb.n_dims && ta.ne == tb.ne;
        if (ta.type == tb.type && same_order) {
            d.block = first_different_block(ta, tb);
            d.same_bytes = !d.block;
        }
        if (d.same_bytes) {  // equal values: nothing to decode
            d.metrics = Metrics{0, 0, 0, 1.0, 0};
            if (same_dims) d.status = Status::same;
            return d;
        }
        if (!same_order) d.note = "the byte orders differ: values compared, bytes not";
        if (ta.elements != tb.elements) {
            d.note = fmt::format("element counts differ ({} and {}): no numbers", ta.elements,
                                 tb.elements);
            return d;
        }
        try {
            d.metrics = decoded_metrics(ta, tb);
        } catch (const Error &e) {
            d.note = e.problem();
        }
        return d;
    }

private:
    Metrics decoded_metrics(const gguf::TensorInfo &ta, const gguf::TensorInfo &tb) {
        const uint64_t step =
            std::lcm<uint64_t>(traits(ta.type).block_size, traits(tb.type).block_size);
        const uint64_t chunk = std::max(step, kChunkElements / step * step);
        const uint64_t n_max = std::min(chunk, ta.elements);
        if (fa_.size() < n_max) fa_.resize(n_max), fb_.resize(n_max);
        const unsigned threads = thread_count(threads_);
        Sums total;
        std::vector<Sums> parts;
        for (uint64_t start = 0; start < ta.elements; start += chunk) {
            const uint64_t n = std::min(chunk, ta.elements - start);
            decode(a_, ta, start, n, fa_.data(), "a");
            decode(b_, tb, start, n, fb_.data(), "b");
            const uint64_t pieces = (n + kPieceElements - 1) / kPieceElements;
            parts.assign(pieces, Sums{});
            run_pieces(threads, pieces, [&](uint64_t p) {
                const uint64_t from = p * kPieceElements;
                add_piece(fa_.data() + from, fb_.data() + from,
                          static_cast<size_t>(std::min(kPieceElements, n - from)), parts[p]);
            });
            for (const Sums &s : parts) total.add(s);
        }
        return metrics_of(total, ta.elements);
    }

    void decode(const gguf::Model &m, const gguf::TensorInfo &t, uint64_t start, uint64_t n,
                float *out, const char *side) {
        try {
            decode_elements(m, t, start, n, out, DataType::float32, scratch_, threads_);
        } catch (const Error &e) {
            throw Error(
                fmt::format("cannot decode {} ({}): {}", side, type_name(t.type), e.problem()));
        }
    }

    const gguf::Model &a_, &b_;
    unsigned threads_;
    std::vector<float> fa_, fb_;
    std::vector<uint8_t> scratch_;
};

}  // namespace

const char *status_name(Status s) {
    switch (s) {
        case Status::same:
            return "same";
        case Status::different:
            return "different";
        case Status::only_a:
            return "only_a";
        case Status::only_b:
            return "only_b";
    }
    return "?";
}

std::vector<TensorDiff> compare_tensors(const gguf::Model &a, const gguf::Model &b,
                                        const Options &opt) {
    std::vector<TensorDiff> out;
    Comparer comparer(a, b, opt.threads);
    for (const gguf::TensorInfo &t : a.tensors()) {
        if (!gguf::name_matches(t.name, opt.tensor_globs)) continue;
        if (const gguf::TensorInfo *tb = b.find_tensor(t.name))
            out.push_back(comparer.compare(t, *tb));
        else
            out.push_back(entry(Status::only_a, &t, nullptr));
    }
    for (const gguf::TensorInfo &t : b.tensors())
        if (gguf::name_matches(t.name, opt.tensor_globs) && !a.find_tensor(t.name))
            out.push_back(entry(Status::only_b, nullptr, &t));
    return out;
}

}  // namespace gguftool::cli::diff
