// Parsing and validating the GGUF header and metadata key-value pairs.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "byte_reader.hpp"
#include "file_impl.hpp"

namespace gguftool::gguf::detail {
namespace {

// Smallest possible encodings, for checking declared counts against the bytes that remain.
constexpr uint64_t kMinKvSize = 8 + 4 + 1;       // key length, type, 1-byte value
constexpr uint64_t kMinNestedArraySize = 4 + 8;  // element type, count

// Moves past an array value (after its type tag) checking every count and length. `level` is the
// nesting level of this array, 1 for an array that is a key's value.
void skip_array(ByteReader &r, std::string_view key, uint32_t level) {
    if (level > kMaxArrayNesting)
        r.fail(r.pos(), fmt::format("key '{}': arrays nested more than {} levels deep",
                                    printable(key), kMaxArrayNesting));
    const uint64_t type_at = r.pos();
    const uint32_t t = r.u32("array element type");
    if (!valid_value_type(t))
        r.fail(type_at, fmt::format("key '{}': invalid array element type {}", printable(key), t));
    const auto type = static_cast<ValueType>(t);
    const uint64_t count_at = r.pos();
    const uint64_t count = r.u64("array length");
    const uint64_t element_size = scalar_size(type);
    const uint64_t min_size = element_size                ? element_size
                              : type == ValueType::string ? 8
                                                          : kMinNestedArraySize;
    if (count > r.remaining() / min_size)
        r.fail(count_at, fmt::format("key '{}': array of {} {} elements cannot fit in the {} "
                                     "bytes that remain",
                                     printable(key), count, value_type_name(type), r.remaining()));
    if (element_size) {
        r.take(count * element_size, "array elements");
    } else if (type == ValueType::string) {
        for (uint64_t i = 0; i < count; ++i) r.string("string in array");
    } else {
        for (uint64_t i = 0; i < count; ++i) skip_array(r, key, level + 1);
    }
}

Value read_value(ByteReader &r, ValueType type, std::string_view key) {
    const uint64_t start = r.pos();
    if (const uint32_t s = scalar_size(type))
        return Value(type, r.take(s, "metadata value"), s, r.order());
    if (type == ValueType::string) {
        const std::string_view s = r.string("string value");
        return Value(type, reinterpret_cast<const uint8_t *>(s.data()), 8 + s.size(), r.order(),
                     ValueType::uint8, s.size());
    }
    skip_array(r, key, 1);
    const uint8_t *p = r.at(start);
    return Value(ValueType::array, p + 12, r.pos() - start, r.order(),
                 static_cast<ValueType>(load<uint32_t>(p, r.order())),
                 load<uint64_t>(p + 4, r.order()));
}

void read_magic_and_version(ByteReader &r, File::Impl &f) {
    const uint8_t *magic = r.take(4, "magic");
    if (std::memcmp(magic, "GGUF", 4) != 0)
        r.fail(0, fmt::format("not a GGUF file: magic is '{}', expected 'GGUF'",
                              printable({reinterpret_cast<const char *>(magic), 4})));
    // The byte order is not stored; as gguf-py does, take a version whose low 16 bits are zero
    // when read as little-endian to be a big-endian file.
    uint32_t version = r.u32("version");
    if ((version & 0xffff) == 0) {
        r.set_order(ByteOrder::big);
        version = byteswap(version);
    }
    if (version != 2 && version != 3)
        r.fail(4, fmt::format("unsupported GGUF version {}: only versions 2 and 3 can be read",
                              version));
    f.version = version;
    f.order = r.order();
}

void read_alignment(ByteReader &r, File::Impl &f) {
    const uint32_t i =
        f.key_index.find("general.alignment", [&](uint32_t k) { return f.metadata[k].key; });
    if (i == NameTable::kNone) return;
    const MetadataEntry &e = f.metadata[i];
    if (e.value.type() != ValueType::uint32)
        r.fail(e.offset, fmt::format("general.alignment must be of type uint32, not {}",
                                     value_type_name(e.value.type())));
    const uint64_t a = e.value.as_uint();
    if (a == 0 || (a & (a - 1)) != 0)
        r.fail(e.offset, fmt::format("general.alignment {} is not a power of two", a));
    f.alignment = a;
}

}  // namespace

uint64_t parse_header_and_metadata(ByteReader &r, File::Impl &f) {
    read_magic_and_version(r, f);
    const uint64_t n_tensors = r.u64("tensor count");
    const uint64_t n_kv = r.u64("metadata count");
    if (n_tensors > r.remaining() / kMinTensorInfoSize)
        r.fail(8, fmt::format("tensor count {} cannot fit in the {} bytes after the header",
                              n_tensors, r.remaining()));
    if (n_kv > r.remaining() / kMinKvSize)
        r.fail(16, fmt::format("metadata count {} cannot fit in the {} bytes after the header",
                               n_kv, r.remaining()));

    if (n_kv > kMaxEntries)
        r.fail(16, fmt::format("metadata count {} is more than this reader supports ({})", n_kv,
                               kMaxEntries));
    f.metadata.reserve(std::min(n_kv, kReserveLimit));
    f.key_index = NameTable(n_kv);
    const auto key_of = [&](uint32_t k) { return f.metadata[k].key; };
    for (uint64_t i = 0; i < n_kv; ++i) {
        const uint64_t at = r.pos();
        const std::string_view key = r.string("metadata key");
        if (key.empty()) r.fail(at, fmt::format("metadata key {} is empty", i));
        const uint32_t first = f.key_index.insert(key, f.metadata.size(), key_of);
        if (first != NameTable::kNone)
            r.fail(at, fmt::format("duplicate key '{}' (first at offset {})", printable(key),
                                   f.metadata[first].offset));
        const uint64_t type_at = r.pos();
        const uint32_t t = r.u32("metadata value type");
        if (!valid_value_type(t))
            r.fail(type_at, fmt::format("key '{}' has invalid value type {}", printable(key), t));
        f.metadata.push_back({key, read_value(r, static_cast<ValueType>(t), key), at});
    }
    read_alignment(r, f);
    return n_tensors;
}

}  // namespace gguftool::gguf::detail
