// How metadata values read in a terminal: `dump`'s table and `edit`'s list of changes.
//
// Written once for any value with gguf::Value's interface (type, as_uint ... as_string,
// array_type, array_size, element): a value read from a file, or a value to be written seen
// through MetaView.
#pragma once

#include <bit>
#include <string>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "output.hpp"

namespace gguftool::cli {

inline constexpr size_t kArrayItems = 8;    // array items shown before "... N more"
inline constexpr size_t kStringBytes = 72;  // longer strings are cut
inline constexpr size_t kItemStringBytes = 24;

// A MetaValue with gguf::Value's reading interface.
class MetaView {
public:
    explicit MetaView(const gguf::MetaValue &v) : v_(&v) {}
    gguf::ValueType type() const { return v_->type(); }
    uint64_t as_uint() const { return v_->bits(); }
    int64_t as_int() const {  // sign-extended from the type's width
        const int unused = 64 - 8 * int(width());
        return std::bit_cast<int64_t>(v_->bits() << unused) >> unused;
    }
    bool as_bool() const { return v_->bits() != 0; }
    double as_double() const {
        return type() == gguf::ValueType::float32
                   ? double(std::bit_cast<float>(uint32_t(v_->bits())))
                   : std::bit_cast<double>(v_->bits());
    }
    std::string_view as_string() const { return v_->string(); }
    gguf::ValueType array_type() const { return v_->element_type(); }
    uint64_t array_size() const { return v_->elements().size(); }
    MetaView element(uint64_t i) const { return MetaView(v_->elements()[i]); }

private:
    size_t width() const {
        switch (type()) {
            case gguf::ValueType::int8:
                return 1;
            case gguf::ValueType::int16:
                return 2;
            case gguf::ValueType::int32:
                return 4;
            default:
                return 8;
        }
    }
    const gguf::MetaValue *v_;
};

// "uint32", "float32[320]".
template <class V>
std::string type_label(const V &v) {
    if (v.type() != gguf::ValueType::array) return gguf::value_type_name(v.type());
    return fmt::format("{}[{}]", gguf::value_type_name(v.array_type()), v.array_size());
}

// Writes an integer or bool metadata value, which the table and JSON spell alike; false (nothing
// written) for the other types, whose spelling differs.
template <class V>
bool put_integer_or_bool(Out &out, const V &v) {
    using gguf::ValueType;
    switch (v.type()) {
        case ValueType::uint8:
        case ValueType::uint16:
        case ValueType::uint32:
        case ValueType::uint64:
            out.put_uint(v.as_uint());
            return true;
        case ValueType::int8:
        case ValueType::int16:
        case ValueType::int32:
        case ValueType::int64:
            out.put_int(v.as_int());
            return true;
        case ValueType::bool_:
            out.put(v.as_bool() ? "true" : "false");
            return true;
        default:
            return false;
    }
}

template <class V>
void put_value(Out &out, const V &v, size_t string_bytes = kStringBytes);

// The first kArrayItems elements, then "... N more".
template <class V>
void put_array(Out &out, const V &v) {
    const uint64_t n = v.array_size();
    const uint64_t shown = std::min<uint64_t>(n, kArrayItems);
    out.put('[');
    for (uint64_t i = 0; i < shown; ++i) {
        if (i) out.put(", ");
        put_value(out, v.element(i), kItemStringBytes);
    }
    if (shown < n) out.print("{}... {} more", shown ? ", " : "", n - shown);
    out.put(']');
}

// A value as the table shows it: strings quoted and cut after `string_bytes` bytes (their length
// given then), floats in their shortest exact form.
template <class V>
void put_value(Out &out, const V &v, size_t string_bytes) {
    using gguf::ValueType;
    if (put_integer_or_bool(out, v)) return;
    switch (v.type()) {
        case ValueType::float32:
            put_float(out, static_cast<float>(v.as_double()));
            break;
        case ValueType::float64:
            put_double(out, v.as_double());
            break;
        case ValueType::string: {
            const std::string_view s = v.as_string();
            out.put('"');
            put_display_string(out, s, string_bytes, true);
            out.put('"');
            if (s.size() > string_bytes) out.print(" ({} bytes)", s.size());
            break;
        }
        case ValueType::array:
            put_array(out, v);
            break;
        default:  // integers and bool: done above
            break;
    }
}

}  // namespace gguftool::cli
