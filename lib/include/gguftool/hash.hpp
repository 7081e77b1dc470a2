// Hashing tensor data as llama.cpp's llama-gguf-hash does: each tensor's bytes, and the whole
// model's (every tensor's bytes, in order, as one stream), with xxHash's XXH64 and XXH3 (64-bit)
// and Nettle's SHA-1 and SHA-256, plus a UUIDv5 of the model's bytes in llama.cpp's namespace.
// Parts are hashed in parallel, straight from the memory they are in (a mapped file): no copies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguftool::hash {

// The hashes, in the order llama-gguf-hash prints them (uuid last, for the whole model only).
enum class Kind : uint8_t { xxh64, xxh3, sha1, sha256, uuid };
inline constexpr size_t kKindCount = 5;
inline constexpr std::array<Kind, kKindCount> kKinds = {Kind::xxh64, Kind::xxh3, Kind::sha1,
                                                        Kind::sha256, Kind::uuid};
// Strongest first: the order llama-gguf-hash lists a manifest's kinds in, and picks the one to
// check by when none is asked for.
inline constexpr std::array<Kind, kKindCount> kByStrength = {Kind::sha256, Kind::sha1, Kind::xxh64,
                                                             Kind::xxh3, Kind::uuid};

// "xxh64", "xxh3", "sha1", "sha256", "uuid": the type names of output lines and manifests.
std::string_view kind_name(Kind k);
std::optional<Kind> kind_named(std::string_view name);

// Whether `text` has the form of a digest of kind `k` as lines show it: 16 hex digits for xxh64
// and xxh3 (the hash as a big-endian number, as xxhsum prints it), 40 for sha1, 64 for sha256, and
// 8-4-4-4-12 hex digits for uuid. Digits of either case.
bool is_digest_text(Kind k, std::string_view text);
// That form in words, for messages: "16 hex digits", ..., "8-4-4-4-12 hex digits".
std::string_view digest_form(Kind k);

// llama.cpp's UUIDv5 namespace: uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp"),
// ef001206-dadc-5f6d-a15f-3359e577d4e5.
inline constexpr std::array<uint8_t, 16> kUuidNamespace = {
    0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d, 0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

class KindSet {
public:
    constexpr KindSet() = default;
    constexpr KindSet &add(Kind k) {
        bits_ |= bit(k);
        return *this;
    }
    constexpr KindSet without(Kind k) const {
        KindSet s = *this;
        s.bits_ &= uint8_t(~bit(k));
        return s;
    }
    constexpr bool has(Kind k) const { return (bits_ & bit(k)) != 0; }
    constexpr bool empty() const { return bits_ == 0; }
    friend constexpr bool operator==(KindSet, KindSet) = default;

private:
    static constexpr uint8_t bit(Kind k) { return uint8_t(1u << unsigned(k)); }
    uint8_t bits_ = 0;
};

struct Options {
    KindSet kinds;         // of the whole; of each part too, except uuid
    bool per_part = true;  // false: the whole's hashes only (llama-gguf-hash's --no-layer)
    unsigned threads = 0;  // 0: all cores (thread_count)
};

// Digest texts (see is_digest_text; lower case) indexed by Kind; "" for a kind not computed.
using Digests = std::array<std::string, kKindCount>;

struct Hashes {
    std::vector<Digests> parts;  // one per part (uuid never set); empty unless per_part
    Digests whole;               // of all parts' bytes, in order, as one stream
};

// Hashes every part and all of them in order as one stream. The whole's hash of each kind is one
// sequential stream; with more than one thread each such stream is a job of its own, run beside
// the jobs that hash one part each (all kinds of a part in one pass over it). On one thread it is
// one pass over the bytes, every hash fed each chunk while it is in the cache.
Hashes hash_parts(std::span<const std::span<const uint8_t>> parts, const Options &options);

}  // namespace gguftool::hash
