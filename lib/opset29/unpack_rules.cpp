// Unpack-29 (the spec's onnx-Unpack-29): the two spellings, the axis, and the packed word count
// along the axis.
#include <fmt/format.h>

#include <bit>
#include <limits>

#include "gguftool/dims.hpp"
#include "gguftool/opset29.hpp"

namespace gguftool::opset29 {
namespace {

constexpr uint64_t kMaxSize = std::numeric_limits<int64_t>::max();

[[noreturn]] void fail(std::string problem) {
    throw Error(std::move(problem));
}

}  // namespace

Unpack check_unpack(std::optional<int64_t> bits, std::optional<int64_t> radix,
                    std::optional<int64_t> group_size) {
    if (bits) {
        if (radix || group_size)
            fail("attribute 'bits' and attributes 'radix'/'group_size' are mutually exclusive");
        if (*bits < 1 || *bits > 8)
            fail(fmt::format("attribute 'bits' {} is outside [1, 8]", *bits));
        const auto b = static_cast<uint32_t>(*bits);
        return {1u << b, 1, b, uint64_t(1) << b, false};
    }
    if (!radix && !group_size) fail("needs attribute 'bits', or both 'radix' and 'group_size'");
    if (!radix) fail("attribute 'group_size' requires attribute 'radix'");
    if (!group_size) fail("attribute 'radix' requires attribute 'group_size'");
    if (*radix < 2 || *radix > 256)
        fail(fmt::format("attribute 'radix' {} is outside [2, 256]", *radix));
    if (*group_size < 1)
        fail(fmt::format("attribute 'group_size' {} is not positive", *group_size));
    // radix^group_size <= 2^63 - 1, by repeated multiplication (at most 63 steps before it fails).
    uint64_t limit = 1;
    for (int64_t i = 0; i < *group_size; ++i) {
        if (limit > kMaxSize / static_cast<uint64_t>(*radix))
            fail(fmt::format("radix^group_size = {}^{} exceeds 2^63 - 1", *radix, *group_size));
        limit *= static_cast<uint64_t>(*radix);
    }
    // W = ceil(log2(R^G)): the bits needed for group indices 0 .. R^G - 1.
    const auto w = static_cast<uint32_t>(std::bit_width(limit - 1));
    return {static_cast<uint32_t>(*radix), static_cast<uint32_t>(*group_size), w, limit, true};
}

unsigned unpack_word_bits(DataType storage) {
    if (storage == DataType::uint8) return 8;
    if (storage == DataType::uint32) return 32;
    fail(fmt::format("input X must be uint8 or uint32, not {}", dtype_name(storage)));
}

int64_t check_unpack_axis(int64_t axis, int64_t rank) {
    if (rank < 1) fail("input X must have rank at least 1, not a scalar");
    return int64_t(normalize_axis(axis, size_t(rank), "attribute 'axis'"));
}

std::optional<uint64_t> unpack_words(const Unpack &u, uint64_t count, unsigned word_bits) {
    const unsigned __int128 groups =
        (static_cast<unsigned __int128>(count) + u.group_size - 1) / u.group_size;
    const unsigned __int128 bits = groups * u.group_bits;
    const unsigned __int128 words = (bits + word_bits - 1) / word_bits;
    if (count > kMaxSize || words > kMaxSize) return std::nullopt;
    return static_cast<uint64_t>(words);
}

void check_unpack_count(int64_t count) {
    if (count < 0) fail(fmt::format("input count {} is negative", count));
}

void check_unpack_words(const Unpack &u, int64_t count, unsigned word_bits, int64_t axis,
                        std::optional<int64_t> words) {
    check_unpack_count(count);
    const std::optional<uint64_t> need = unpack_words(u, static_cast<uint64_t>(count), word_bits);
    if (!words || (need && *need == static_cast<uint64_t>(*words))) return;
    const std::string formula =
        u.grouped ? fmt::format("ceil(ceil({} / {}) * {} / {})", count, u.group_size, u.group_bits,
                                word_bits)
                  : fmt::format("ceil({} * {} / {})", count, u.group_bits, word_bits);
    fail(fmt::format("input X has {} words along axis {} but count {} needs {} = {}", *words, axis,
                     count, formula, need ? std::to_string(*need) : "more than 2^63 - 1"));
}

}  // namespace gguftool::opset29
