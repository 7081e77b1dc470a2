// Writing GGUF files: any version, byte order, metadata and tensor layout.
//
// Used by tests, tools and generators. The writer does not validate: it writes what it is given
// (duplicate keys, odd shapes, overlapping offsets) so tests can build broken files too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/types.hpp"

namespace gguftool::gguf {

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

class Writer {
public:
    explicit Writer(uint32_t version = 3, ByteOrder order = ByteOrder::little)
        : version_(version), order_(order) {}

    // Metadata, in the order added.
    Writer &add(std::string key, MetaValue value);
    // The alignment used to lay out tensor data. Default: the value of a uint32 general.alignment
    // key if one was added, else 32. Does not add the key. Any nonzero value works (3 too).
    Writer &set_alignment(uint64_t alignment);

    // A tensor: type id (may be unknown or removed, for tests), dims in ggml order (ne0 first; any
    // count), and its bytes, already in the file's byte order. Data is placed at `offset`
    // (relative to the data section) when given, else after the furthest data so far, aligned.
    Writer &add_tensor(std::string name, GgmlType type, std::vector<uint64_t> dims,
                       std::vector<uint8_t> data, std::optional<uint64_t> offset = std::nullopt);
    Writer &add_tensor(std::string name, uint32_t type_id, std::vector<uint64_t> dims,
                       std::vector<uint8_t> data, std::optional<uint64_t> offset = std::nullopt);

    // The whole file. Throws gguftool::Error if the alignment is 0.
    std::vector<uint8_t> to_bytes() const;
    // Writes to a temporary file beside `path` and renames it into place: on any error nothing
    // is left behind. Throws gguftool::Error.
    void write(const std::string &path) const;

private:
    struct Tensor {
        std::string name;
        uint32_t type;
        std::vector<uint64_t> dims;
        std::vector<uint8_t> data;
        std::optional<uint64_t> offset;
    };
    uint64_t alignment() const;

    uint32_t version_;
    ByteOrder order_;
    std::optional<uint64_t> alignment_;
    std::vector<std::pair<std::string, MetaValue>> metadata_;
    std::vector<Tensor> tensors_;
};

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
