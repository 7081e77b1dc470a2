// One running hash of one kind, fed bytes in order: xxHash's and Nettle's states behind one
// interface. Internal to lib/hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gguftool/hash.hpp"

namespace gguftool::hash::detail {

class Hasher {
public:
    virtual ~Hasher() = default;
    virtual void update(const uint8_t *data, size_t size) = 0;
    // The digest as lines show it (lower case; see is_digest_text). Called once, last.
    virtual std::string finish() = 0;
};

// A fresh hash of kind `k`: XXH64 with seed 0, XXH3's 64-bit hash with its default secret, SHA-1,
// SHA-256, or for uuid a SHA-1 already fed kUuidNamespace (RFC 9562's UUIDv5 of the bytes).
std::unique_ptr<Hasher> make_hasher(Kind k);

}  // namespace gguftool::hash::detail
