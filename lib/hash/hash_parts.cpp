// hash_parts: the schedule. Every part is hashed once per kind on its own, and once more as a
// piece of the whole's stream; the whole's streams are sequential by definition.
//
// One thread: a single pass. Each piece of a part is fed to the part's hashers and to the whole's
// while it is in L1, so memory is read once (reading it once per hasher was 1.5x slower for
// xxh64, whose in-cache speed is above the memory's).
// More threads: one job per whole-model stream, longest first, then one job per part (all its
// kinds in one pass) from the last part to the first, taken by whichever thread is free. With two
// threads and one kind one thread streams the whole while the other hashes the parts, each at the
// speed of one stream; with more, the parts are done before the whole's stream (the longest job)
// is. The parts go last to first so that the whole's streams, going first to last, and the part
// jobs each fault in about half of the mapping (the page faults are a sixth of a warm XXH64
// stream's time): 1 GiB, two threads, --xxh64, 110 ms in file order, 96 ms last to first. Each
// part is still read first to last, as readahead wants.
#include <algorithm>
#include <exception>
#include <memory>
#include <vector>

#include "gguftool/hash.hpp"
#include "gguftool/parallel.hpp"
#include "hasher.hpp"

namespace gguftool::hash {
namespace {

using detail::Hasher;
using detail::make_hasher;

// Bytes fed to every hasher before the next piece, and how far ahead of the hashers the memory
// is asked for, when several hashers read the same bytes: small pieces keep the bytes in L1 for
// every hasher after the first. Measured on a 4 GiB mapped model (XXH64, one thread): two hashes
// of the same bytes (a tensor's and the model's) 3.5 GB/s in 32 KiB chunks without prefetching,
// 4.7 GB/s with 512-byte pieces prefetched 4 KiB ahead.
constexpr size_t kPiece = 512;
constexpr size_t kAhead = 4096;
// One hasher alone is given the bytes in large spans: an update call per 512 bytes costs a
// single XXH64 stream 5-10% (state loaded and stored per call), and the hardware prefetcher
// streams a long span as well as the software prefetch does (1 GiB mapped, warm: 97 ms in 64 KiB
// spans, 103 ms in prefetched 512-byte pieces).
constexpr size_t kSpan = 65536;

// Feeds `bytes` to every hasher: to one in spans of kSpan, to several a piece at a time, each
// piece's memory asked for kAhead before.
void feed(std::span<const uint8_t> bytes, const std::vector<Hasher *> &hashers) {
    const uint8_t *p = bytes.data(), *const end = p + bytes.size();
    if (hashers.size() == 1) {
        for (; p < end; p += kSpan) hashers[0]->update(p, std::min<size_t>(kSpan, size_t(end - p)));
        return;
    }
    for (; p < end; p += kPiece) {
        const size_t n = std::min<size_t>(kPiece, size_t(end - p));
        if (size_t(end - p) > kAhead)
            for (const uint8_t *q = p + kAhead; q < p + kAhead + n && q < end; q += 64)
                __builtin_prefetch(q);
        for (Hasher *h : hashers) h->update(p, n);
    }
}

// The whole-model streams, most expensive first (SHA-256 about 1.3 GB/s with SHA-NI, SHA-1 1.5,
// XXH64 9, XXH3 11), so that the longest jobs start first.
constexpr std::array<Kind, kKindCount> kByCost = {Kind::sha256, Kind::sha1, Kind::uuid, Kind::xxh64,
                                                  Kind::xxh3};

struct Stream {
    Kind kind;
    std::unique_ptr<Hasher> hasher;
};

std::vector<Stream> streams_of(KindSet kinds, const std::array<Kind, kKindCount> &order) {
    std::vector<Stream> out;
    for (Kind k : order)
        if (kinds.has(k)) out.push_back({k, make_hasher(k)});
    return out;
}

// One part's hashes, of every kind in `kinds`, in one pass; `also` (the whole's streams, on one
// thread) are fed the same pieces.
void hash_part(std::span<const uint8_t> part, KindSet kinds, Digests &out,
               const std::vector<Stream> &also) {
    std::vector<Stream> own = streams_of(kinds, kKinds);
    std::vector<Hasher *> all;
    for (const Stream &s : own) all.push_back(s.hasher.get());
    for (const Stream &s : also) all.push_back(s.hasher.get());
    feed(part, all);
    for (Stream &s : own) out[size_t(s.kind)] = s.hasher->finish();
}

}  // namespace

Hashes hash_parts(std::span<const std::span<const uint8_t>> parts, const Options &options) {
    const KindSet part_kinds = options.per_part ? options.kinds.without(Kind::uuid) : KindSet{};
    Hashes out;
    if (options.per_part) out.parts.resize(parts.size());

    std::vector<Stream> whole = streams_of(options.kinds, kByCost);
    const bool part_jobs = !part_kinds.empty();
    const uint64_t jobs = whole.size() + (part_jobs ? parts.size() : 0);
    const unsigned threads = thread_count(options.threads);

    if (threads <= 1 || jobs <= 1) {
        for (size_t i = 0; i < parts.size(); ++i) {
            if (part_jobs) {
                hash_part(parts[i], part_kinds, out.parts[i], whole);
            } else {
                std::vector<Hasher *> all;
                for (const Stream &s : whole) all.push_back(s.hasher.get());
                feed(parts[i], all);
            }
        }
    } else {
        // run_pieces wants jobs that do not throw; a hasher's allocation may.
        std::vector<std::exception_ptr> errors(jobs);
        run_pieces(threads, jobs, [&](uint64_t job) {
            try {
                if (job < whole.size()) {
                    const std::vector<Hasher *> one = {whole[job].hasher.get()};
                    for (std::span<const uint8_t> p : parts) feed(p, one);
                } else {
                    const size_t i = parts.size() - 1 - size_t(job - whole.size());  // last first
                    hash_part(parts[i], part_kinds, out.parts[i], {});
                }
            } catch (...) {
                errors[job] = std::current_exception();
            }
        });
        for (const std::exception_ptr &e : errors)
            if (e) std::rethrow_exception(e);
    }
    for (Stream &s : whole) out.whole[size_t(s.kind)] = s.hasher->finish();
    return out;
}

}  // namespace gguftool::hash
