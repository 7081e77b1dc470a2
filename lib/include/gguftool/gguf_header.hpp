// The GGUF header as every writer encodes it, and the layout rule of the data section.
//
// A header is the magic, version, counts, metadata key-value pairs and tensor infos, then zeros up
// to the data section, which starts at a multiple of the alignment. One encoder serves every
// writer (gguf::Writer, the streaming writer of gguf_model_writer.hpp, split, merge, edit,
// convert-endian), in either byte order. It does not validate: it writes what it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "gguftool/gguf.hpp"

namespace gguftool::gguf {

// GGUF_DEFAULT_ALIGNMENT: the alignment of a file without a general.alignment key.
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr std::string_view kAlignmentKey = "general.alignment";

// A metadata value to write: a scalar, a string or an array (arrays may nest).
class MetaValue {
public:
    static MetaValue u8(uint8_t v) { return scalar(ValueType::uint8, v); }
    static MetaValue i8(int8_t v) { return scalar(ValueType::int8, static_cast<uint8_t>(v)); }
    static MetaValue u16(uint16_t v) { return scalar(ValueType::uint16, v); }
    static MetaValue i16(int16_t v) { return scalar(ValueType::int16, static_cast<uint16_t>(v)); }
    static MetaValue u32(uint32_t v) { return scalar(ValueType::uint32, v); }
    static MetaValue i32(int32_t v) { return scalar(ValueType::int32, static_cast<uint32_t>(v)); }
    static MetaValue f32(float v);
    static MetaValue boolean(bool v) { return scalar(ValueType::bool_, v ? 1 : 0); }
    // A bool stored as any byte (the spec allows only 0 and 1; for tests).
    static MetaValue bool_byte(uint8_t v) { return scalar(ValueType::bool_, v); }
    static MetaValue str(std::string v);
    static MetaValue u64(uint64_t v) { return scalar(ValueType::uint64, v); }
    static MetaValue i64(int64_t v) { return scalar(ValueType::int64, static_cast<uint64_t>(v)); }
    static MetaValue f64(double v);

    // An array of `element_type`; every element must be of that type (throws gguftool::Error).
    static MetaValue array(ValueType element_type, std::vector<MetaValue> elements);
    // Arrays from plain vectors: integers, float, double, bool or std::string elements.
    template <class T>
    static MetaValue array_of(const std::vector<T> &values);
    // A copy of a value read from a file: any of the 13 types, arrays nested, bools as their
    // byte. Holds no view into the file. (A writer re-emitting metadata unchanged need not copy:
    // a MetadataItem takes the Value itself.)
    static MetaValue from_value(const Value &v);

    ValueType type() const { return type_; }
    ValueType element_type() const { return element_type_; }
    uint64_t bits() const { return bits_; }  // scalars: the value's bits, zero-extended
    const std::string &string() const { return str_; }
    const std::vector<MetaValue> &elements() const { return elements_; }

private:
    static MetaValue scalar(ValueType t, uint64_t bits) {
        MetaValue v;
        v.type_ = t;
        v.bits_ = bits;
        return v;
    }
    template <class T>
    static MetaValue from(T v);

    ValueType type_ = ValueType::uint8;
    ValueType element_type_ = ValueType::uint8;  // arrays only
    uint64_t bits_ = 0;
    std::string str_;
    std::vector<MetaValue> elements_;
};

// One metadata key-value pair to write: a new value, or a value read from a GGUF file re-emitted
// as it is (converted to the output's byte order). A Value is a view: its File must stay open
// until the header is written.
struct MetadataItem {
    std::string key;
    std::variant<MetaValue, Value> value;

    static MetadataItem of(const MetadataEntry &e) { return {std::string(e.key), e.value}; }
    ValueType type() const;
};

// One tensor info to write.
struct TensorHeader {
    std::string name;
    uint32_t type = 0;           // ggml type id (any value: the encoder does not check)
    std::vector<uint64_t> dims;  // ggml order, ne0 first
    uint64_t offset = 0;         // of its data, relative to the data section
};

struct Header {
    uint32_t version = 3;
    ByteOrder order = ByteOrder::little;
    uint64_t alignment = kDefaultAlignment;  // of the data section and each tensor's data; > 0
    std::vector<MetadataItem> metadata;
    std::vector<TensorHeader> tensors;
};

// Where encoded bytes go. write() throws gguftool::Error on failure.
class ByteSink {
public:
    virtual void write(const void *data, size_t size) = 0;

protected:
    ~ByteSink() = default;
};

// x rounded up to a multiple of `alignment` (> 0; any value, not only powers of two).
inline uint64_t align_up(uint64_t x, uint64_t alignment) {
    return x + (alignment - x % alignment) % alignment;
}

// The alignment a file with this metadata has: a nonzero uint32 general.alignment, else 32.
uint64_t alignment_of(std::span<const MetadataItem> metadata);

// Writes the header to `out`: everything up to the data section, padding included (also when
// there are no tensors, as ggml writes it). Throws gguftool::Error if the alignment is 0.
void encode_header(const Header &header, ByteSink &out);
std::vector<uint8_t> encode_header(const Header &header);
// What encode_header writes, in bytes: the data section's offset. (With alignment 1: the header
// without padding.)
uint64_t header_size(const Header &header);
// Bytes one tensor info takes in a header: for sizing headers tensor by tensor.
uint64_t tensor_info_size(const TensorHeader &tensor);

// The layout rule: the tensors' data placed in order, each at the next multiple of the alignment
// (as ggml and gguf-split write them). Sets header.tensors[i].offset for the tensor of sizes[i]
// bytes and returns the size of the data section, padded at its end to the alignment.
// Throws gguftool::Error if the counts differ or the alignment is 0.
uint64_t lay_out(Header &header, std::span<const uint64_t> sizes);

template <class T>
MetaValue MetaValue::from(T v) {
    if constexpr (std::is_same_v<T, bool>)
        return boolean(v);
    else if constexpr (std::is_same_v<T, std::string>)
        return str(v);
    else if constexpr (std::is_same_v<T, float>)
        return f32(v);
    else if constexpr (std::is_same_v<T, double>)
        return f64(v);
    else if constexpr (std::is_same_v<T, uint8_t>)
        return u8(v);
    else if constexpr (std::is_same_v<T, int8_t>)
        return i8(v);
    else if constexpr (std::is_same_v<T, uint16_t>)
        return u16(v);
    else if constexpr (std::is_same_v<T, int16_t>)
        return i16(v);
    else if constexpr (std::is_same_v<T, uint32_t>)
        return u32(v);
    else if constexpr (std::is_same_v<T, int32_t>)
        return i32(v);
    else if constexpr (std::is_same_v<T, uint64_t>)
        return u64(v);
    else if constexpr (std::is_same_v<T, int64_t>)
        return i64(v);
    else
        static_assert(!sizeof(T), "no GGUF value type for this element type");
}

template <class T>
MetaValue MetaValue::array_of(const std::vector<T> &values) {
    MetaValue a;
    a.type_ = ValueType::array;
    a.element_type_ = from(T{}).type();
    a.elements_.reserve(values.size());
    for (const T &v : values) a.elements_.push_back(from(v));
    return a;
}

}  // namespace gguftool::gguf
