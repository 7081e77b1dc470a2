// gguftool diff: the headers and the metadata of two models, key by key.
#include <algorithm>
#include <string>
#include <vector>

#include "diff.hpp"

namespace gguftool::cli::diff {
namespace {

using gguf::Value;
using gguf::ValueType;

// A scalar's bits (up to 8 bytes) as a number, whatever the file's byte order: floats compare by
// their bits, so NaN equals the same NaN and -0 differs from +0.
uint64_t scalar_bits(const Value &v) {
    const uint8_t *p = v.data();
    const size_t w = static_cast<size_t>(v.byte_size());
    const bool big = v.byte_order() == gguf::ByteOrder::big;
    uint64_t bits = 0;
    for (size_t i = 0; i < w; ++i) bits |= uint64_t(p[big ? w - 1 - i : i]) << (8 * i);
    return bits;
}

bool is_fixed_size(ValueType t) {
    return t != ValueType::string && t != ValueType::array;
}

std::optional<uint64_t> first_difference(const Value &a, const Value &b);

bool equal(const Value &a, const Value &b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
        case ValueType::string:
            return a.as_string() == b.as_string();
        case ValueType::array:
            return a.array_type() == b.array_type() && a.array_size() == b.array_size() &&
                   !first_difference(a, b);
        default:
            return scalar_bits(a) == scalar_bits(b);
    }
}

// The first index at which two arrays of the same element type differ: an element that differs,
// or the end of the shorter one; none when they are equal.
std::optional<uint64_t> first_difference(const Value &a, const Value &b) {
    const uint64_t common = std::min(a.array_size(), b.array_size());
    const std::optional<uint64_t> at_end =
        a.array_size() == b.array_size() ? std::nullopt : std::optional<uint64_t>(common);
    if (common == 0) return at_end;
    if (is_fixed_size(a.array_type())) {
        const uint64_t width = a.element(0).byte_size();
        if (a.byte_order() == b.byte_order()) {  // one pass over the bytes
            const uint8_t *pa = a.data(), *pb = b.data();
            const auto [at, _] = std::mismatch(pa, pa + common * width, pb);
            if (at != pa + common * width) return uint64_t(at - pa) / width;
            return at_end;
        }
        for (uint64_t i = 0; i < common; ++i)  // element(i) is O(1) here
            if (scalar_bits(a.element(i)) != scalar_bits(b.element(i))) return i;
        return at_end;
    }
    // Strings and arrays have variable sizes: B's elements are listed once, then A walked.
    std::vector<Value> bs;
    bs.reserve(static_cast<size_t>(common));
    b.for_each_element([&](const Value &e) {
        if (bs.size() < common) bs.push_back(e);
    });
    std::optional<uint64_t> found;
    uint64_t i = 0;
    a.for_each_element([&](const Value &e) {
        if (!found && i < common && !equal(e, bs[static_cast<size_t>(i)])) found = i;
        ++i;
    });
    return found ? found : at_end;
}

}  // namespace

bool is_split_key(std::string_view key) {
    return key == "split.no" || key == "split.count" || key == "split.tensors.count";
}

std::vector<HeaderDifference> compare_headers(const gguf::Model &a, const gguf::Model &b) {
    const gguf::File &fa = a.first(), &fb = b.first();
    std::vector<HeaderDifference> d;
    if (fa.version() != fb.version())
        d.push_back({"version", std::to_string(fa.version()), std::to_string(fb.version())});
    if (fa.byte_order() != fb.byte_order())
        d.push_back({"byte order", gguf::byte_order_name(fa.byte_order()),
                     gguf::byte_order_name(fb.byte_order())});
    if (fa.alignment() != fb.alignment())
        d.push_back({"alignment", std::to_string(fa.alignment()), std::to_string(fb.alignment())});
    return d;
}

MetadataDiff compare_metadata(const gguf::File &a, const gguf::File &b) {
    MetadataDiff d;
    for (const gguf::MetadataEntry &ea : a.metadata()) {
        if (is_split_key(ea.key)) continue;
        const gguf::MetadataEntry *eb = b.find(ea.key);
        if (!eb) {
            d.only_a.push_back(&ea);
            continue;
        }
        const Value &va = ea.value, &vb = eb->value;
        ChangedKey c;
        c.a = &ea, c.b = eb;
        if (va.type() != vb.type() ||
            (va.type() == ValueType::array && va.array_type() != vb.array_type())) {
            c.type_changed = true;
        } else if (va.type() == ValueType::array) {
            c.first_different_index = first_difference(va, vb);
            if (!c.first_different_index) {
                ++d.identical;
                continue;
            }
        } else if (equal(va, vb)) {
            ++d.identical;
            continue;
        }
        d.changed.push_back(c);
    }
    for (const gguf::MetadataEntry &eb : b.metadata())
        if (!is_split_key(eb.key) && !a.find(eb.key)) d.only_b.push_back(&eb);
    return d;
}

}  // namespace gguftool::cli::diff
