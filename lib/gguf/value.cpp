// gguf::Value: typed views of metadata values, decoded on access.
#include <bit>
#include <limits>
#include <string>

#include "endian.hpp"
#include "gguftool/gguf.hpp"

namespace gguftool::gguf {
namespace detail {

uint64_t encoded_size(const uint8_t *p, ValueType t, ByteOrder order) {
    if (const uint32_t s = scalar_size(t)) return s;
    if (t == ValueType::string) return 8 + load<uint64_t>(p, order);
    const auto element_type = static_cast<ValueType>(load<uint32_t>(p, order));
    const uint64_t count = load<uint64_t>(p + 4, order);
    if (const uint32_t s = scalar_size(element_type)) return 12 + count * s;
    uint64_t size = 12;
    for (uint64_t i = 0; i < count; ++i) size += encoded_size(p + size, element_type, order);
    return size;
}

}  // namespace detail

namespace {

using detail::load;

[[noreturn]] void wrong_type(ValueType have, const char *wanted) {
    throw Error(std::string("metadata value is of type ") + value_type_name(have) + ", not " +
                wanted);
}

bool is_unsigned(ValueType t) {
    return t == ValueType::uint8 || t == ValueType::uint16 || t == ValueType::uint32 ||
           t == ValueType::uint64;
}

bool is_signed(ValueType t) {
    return t == ValueType::int8 || t == ValueType::int16 || t == ValueType::int32 ||
           t == ValueType::int64;
}

uint64_t load_unsigned(const uint8_t *p, ValueType t, ByteOrder o) {
    switch (t) {
        case ValueType::uint8:
            return p[0];
        case ValueType::uint16:
            return load<uint16_t>(p, o);
        case ValueType::uint32:
            return load<uint32_t>(p, o);
        default:
            return load<uint64_t>(p, o);
    }
}

int64_t load_signed(const uint8_t *p, ValueType t, ByteOrder o) {
    switch (t) {
        case ValueType::int8:
            return static_cast<int8_t>(p[0]);
        case ValueType::int16:
            return static_cast<int16_t>(load<uint16_t>(p, o));
        case ValueType::int32:
            return static_cast<int32_t>(load<uint32_t>(p, o));
        default:
            return static_cast<int64_t>(load<uint64_t>(p, o));
    }
}

}  // namespace

uint64_t Value::as_uint() const {
    if (is_unsigned(type_)) return load_unsigned(data_, type_, order_);
    if (type_ == ValueType::bool_) return data_[0] != 0;
    if (is_signed(type_)) {
        const int64_t v = load_signed(data_, type_, order_);
        if (v < 0) throw Error("metadata value " + std::to_string(v) + " is negative");
        return static_cast<uint64_t>(v);
    }
    wrong_type(type_, "an unsigned integer");
}

int64_t Value::as_int() const {
    if (is_signed(type_)) return load_signed(data_, type_, order_);
    if (is_unsigned(type_)) {
        const uint64_t v = load_unsigned(data_, type_, order_);
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            throw Error("metadata value " + std::to_string(v) + " does not fit in int64");
        return static_cast<int64_t>(v);
    }
    wrong_type(type_, "an integer");
}

double Value::as_double() const {
    if (type_ == ValueType::float32) return std::bit_cast<float>(load<uint32_t>(data_, order_));
    if (type_ == ValueType::float64) return std::bit_cast<double>(load<uint64_t>(data_, order_));
    if (is_unsigned(type_)) return static_cast<double>(load_unsigned(data_, type_, order_));
    if (is_signed(type_)) return static_cast<double>(load_signed(data_, type_, order_));
    wrong_type(type_, "a number");
}

bool Value::as_bool() const {
    if (type_ != ValueType::bool_) wrong_type(type_, "bool");
    return data_[0] != 0;
}

std::string_view Value::as_string() const {
    if (type_ != ValueType::string) wrong_type(type_, "string");
    return {reinterpret_cast<const char *>(data_), count_};
}

ValueType Value::array_type() const {
    if (type_ != ValueType::array) wrong_type(type_, "array");
    return array_type_;
}

uint64_t Value::array_size() const {
    if (type_ != ValueType::array) wrong_type(type_, "array");
    return count_;
}

Value Value::element(uint64_t i) const {
    if (type_ != ValueType::array) wrong_type(type_, "array");
    if (i >= count_)
        throw Error("array index " + std::to_string(i) + " is out of range (size " +
                    std::to_string(count_) + ")");
    if (const uint32_t s = detail::scalar_size(array_type_)) return element_at(data_ + i * s);
    const uint8_t *p = data_;
    for (uint64_t k = 0; k < i; ++k) p += detail::encoded_size(p, array_type_, order_);
    return element_at(p);
}

Value Value::element_at(const uint8_t *p) const {
    if (const uint32_t s = detail::scalar_size(array_type_))
        return Value(array_type_, p, s, order_);
    if (array_type_ == ValueType::string) {
        const uint64_t len = load<uint64_t>(p, order_);
        return Value(ValueType::string, p + 8, 8 + len, order_, ValueType::uint8, len);
    }
    const auto inner = static_cast<ValueType>(load<uint32_t>(p, order_));
    const uint64_t count = load<uint64_t>(p + 4, order_);
    return Value(ValueType::array, p + 12, detail::encoded_size(p, ValueType::array, order_),
                 order_, inner, count);
}

}  // namespace gguftool::gguf
