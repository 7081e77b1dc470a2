// The hashes, from the libraries: xxHash and Nettle. Nothing here computes a hash itself; it only
// formats the digests as llama-gguf-hash prints them.
//
// xxHash is used in its header-only mode (XXH_INLINE_ALL, xxhash.h of Debian's libxxhash-dev):
// compiled here at -O3 its XXH64 runs at 8-11 GB/s and XXH3 at 10-12 GB/s (SSE2) on this machine,
// against 6.5 and 5.5 GB/s for Debian's libxxhash.a, which also lacks the .so's AVX2 dispatch.
#include "hasher.hpp"

#include <nettle/sha1.h>
#include <nettle/sha2.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <new>

namespace gguftool::hash::detail {
namespace {

std::string hex(const uint8_t *bytes, size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        s[2 * i] = kDigits[bytes[i] >> 4];
        s[2 * i + 1] = kDigits[bytes[i] & 15];
    }
    return s;
}

// xxHash's canonical form, the big-endian bytes of the hash: what xxhsum and llama-gguf-hash print.
std::string xxh_text(XXH64_hash_t h) {
    XXH64_canonical_t c;
    XXH64_canonicalFromHash(&c, h);
    return hex(c.digest, sizeof c.digest);
}

class Xxh64 final : public Hasher {
public:
    Xxh64() : state_(XXH64_createState()) {
        if (!state_) throw std::bad_alloc();
        XXH64_reset(state_.get(), 0);
    }
    void update(const uint8_t *data, size_t size) override {
        XXH64_update(state_.get(), data, size);
    }
    std::string finish() override { return xxh_text(XXH64_digest(state_.get())); }

private:
    struct Free {
        void operator()(XXH64_state_t *s) const { XXH64_freeState(s); }
    };
    std::unique_ptr<XXH64_state_t, Free> state_;
};

class Xxh3 final : public Hasher {
public:
    Xxh3() : state_(XXH3_createState()) {
        if (!state_) throw std::bad_alloc();
        XXH3_64bits_reset(state_.get());
    }
    void update(const uint8_t *data, size_t size) override {
        XXH3_64bits_update(state_.get(), data, size);
    }
    std::string finish() override { return xxh_text(XXH3_64bits_digest(state_.get())); }

private:
    struct Free {
        void operator()(XXH3_state_t *s) const { XXH3_freeState(s); }
    };
    std::unique_ptr<XXH3_state_t, Free> state_;
};

class Sha1 : public Hasher {
public:
    Sha1() { sha1_init(&ctx_); }
    void update(const uint8_t *data, size_t size) override { sha1_update(&ctx_, size, data); }
    std::string finish() override {
        const auto d = digest();
        return hex(d.data(), d.size());
    }

protected:
    std::array<uint8_t, SHA1_DIGEST_SIZE> digest() {
        std::array<uint8_t, SHA1_DIGEST_SIZE> d;
        sha1_digest(&ctx_, d.size(), d.data());
        return d;
    }

private:
    sha1_ctx ctx_;
};

class Sha256 final : public Hasher {
public:
    Sha256() { sha256_init(&ctx_); }
    void update(const uint8_t *data, size_t size) override { sha256_update(&ctx_, size, data); }
    std::string finish() override {
        std::array<uint8_t, SHA256_DIGEST_SIZE> d;
        sha256_digest(&ctx_, d.size(), d.data());
        return hex(d.data(), d.size());
    }

private:
    sha256_ctx ctx_;
};

// RFC 9562, 5.5: the first 16 bytes of SHA-1(namespace || name), version 5, variant 0b10.
class Uuid final : public Sha1 {
public:
    Uuid() { Sha1::update(kUuidNamespace.data(), kUuidNamespace.size()); }
    std::string finish() override {
        const auto d = digest();
        std::array<uint8_t, 16> u;
        std::copy(d.begin(), d.begin() + 16, u.begin());
        u[6] = uint8_t((u[6] & 0x0f) | 0x50);
        u[8] = uint8_t((u[8] & 0x3f) | 0x80);
        const std::string h = hex(u.data(), u.size());
        return h.substr(0, 8) + '-' + h.substr(8, 4) + '-' + h.substr(12, 4) + '-' +
               h.substr(16, 4) + '-' + h.substr(20);
    }
};

}  // namespace

std::unique_ptr<Hasher> make_hasher(Kind k) {
    switch (k) {
        case Kind::xxh64:
            return std::make_unique<Xxh64>();
        case Kind::xxh3:
            return std::make_unique<Xxh3>();
        case Kind::sha1:
            return std::make_unique<Sha1>();
        case Kind::sha256:
            return std::make_unique<Sha256>();
        case Kind::uuid:
            return std::make_unique<Uuid>();
    }
    return nullptr;
}

}  // namespace gguftool::hash::detail
