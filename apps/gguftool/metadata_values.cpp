// The spelling of metadata values in JSON (dump --json, diff --json); for people:
// value_display.hpp.
#include "metadata_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gguftool::cli {
namespace {

using gguf::Value;
using gguf::ValueType;

template <class T>
T load(const uint8_t *p, bool big) {
    T v;
    if (!big) {
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    uint8_t b[sizeof v];
    for (size_t i = 0; i < sizeof v; ++i) b[i] = p[sizeof v - 1 - i];
    std::memcpy(&v, b, sizeof v);
    return v;
}

// Arrays of fixed-size elements are read straight from the mapping: a 150,000-entry array is one
// tight loop.
template <class T, class Put>
void put_fixed_array(Out &out, const Value &v, Put &&put) {
    const uint8_t *p = v.data();
    const bool big = v.byte_order() == gguf::ByteOrder::big;
    const uint64_t n = v.array_size();
    out.put('[');
    for (uint64_t i = 0; i < n; ++i, p += sizeof(T)) {
        if (i) out.put(',');
        put(load<T>(p, big));
    }
    out.put(']');
}

void put_json_array(Out &out, const Value &v) {
    const auto u = [&](uint64_t x) { out.put_uint(x); };
    const auto s = [&](int64_t x) { out.put_int(x); };
    switch (v.array_type()) {
        case ValueType::uint8:
            return put_fixed_array<uint8_t>(out, v, u);
        case ValueType::int8:
            return put_fixed_array<int8_t>(out, v, s);
        case ValueType::uint16:
            return put_fixed_array<uint16_t>(out, v, u);
        case ValueType::int16:
            return put_fixed_array<int16_t>(out, v, s);
        case ValueType::uint32:
            return put_fixed_array<uint32_t>(out, v, u);
        case ValueType::int32:
            return put_fixed_array<int32_t>(out, v, s);
        case ValueType::uint64:
            return put_fixed_array<uint64_t>(out, v, u);
        case ValueType::int64:
            return put_fixed_array<int64_t>(out, v, s);
        case ValueType::float32:
            return put_fixed_array<float>(out, v, [&](float x) { put_json_float(out, x); });
        case ValueType::float64:
            return put_fixed_array<double>(out, v, [&](double x) { put_json_double(out, x); });
        case ValueType::bool_:
            return put_fixed_array<uint8_t>(out, v,
                                            [&](uint8_t x) { out.put(x ? "true" : "false"); });
        case ValueType::string: {  // vocabularies: the hot loop of --json
            // Straight from the mapping too: each a uint64 length and the bytes (validated on
            // open). The usual token needs no escape and goes out as `,"token"` in one piece.
            const uint8_t *p = v.data();
            const bool big = v.byte_order() == gguf::ByteOrder::big;
            out.put('[');
            for (uint64_t i = 0; i < v.array_size(); ++i) {
                const uint64_t len = load<uint64_t>(p, big);
                const std::string_view s(reinterpret_cast<const char *>(p + 8), len);
                p += 8 + len;
                if (i == 0) {
                    put_json_string(out, s);
                } else if (json_plain(s)) {
                    char *w = out.extend(len + 3);
                    w[0] = ',', w[1] = '"', w[len + 2] = '"';
                    copy_bytes(w + 2, s.data(), len);
                } else {
                    out.put(',');
                    put_json_string_escaped(out, s);
                }
                out.maybe_flush();
            }
            out.put(']');
            return;
        }
        case ValueType::array: {
            out.put('[');
            bool first = true;
            v.for_each_element([&](const Value &e) {
                if (!first) out.put(',');
                first = false;
                put_value_json(out, e);
            });
            out.put(']');
            return;
        }
    }
}

// What an array of arrays holds, which its "array_type" ("array") does not say: one entry per
// inner array, its element type, or, when it is an array of arrays as well, the list of its own
// entries. [[1, 2], [["a"]]] is described as ["int32", ["string"]].
void put_element_array_types(Out &out, const Value &v) {
    out.put('[');
    bool first = true;
    v.for_each_element([&](const Value &e) {
        if (!first) out.put(',');
        first = false;
        if (e.array_type() == ValueType::array)
            put_element_array_types(out, e);
        else
            out.print("\"{}\"", gguf::value_type_name(e.array_type()));
    });
    out.put(']');
}

}  // namespace

void put_json_float(Out &out, float v) {
    if (std::isfinite(v))
        put_float(out, v);
    else
        out.put("null");
}

void put_json_double(Out &out, double v) {
    if (std::isfinite(v))
        put_double(out, v);
    else
        out.put("null");
}

void put_value_json(Out &out, const Value &v) {
    if (put_integer_or_bool(out, v)) return;
    switch (v.type()) {
        case ValueType::float32:
            put_json_float(out, static_cast<float>(v.as_double()));
            break;
        case ValueType::float64:
            put_json_double(out, v.as_double());
            break;
        case ValueType::string:
            put_json_string(out, v.as_string());
            break;
        case ValueType::array:
            put_json_array(out, v);
            break;
        default:  // integers and bool: done above
            break;
    }
}

void put_json_type_members(Out &out, const Value &v, std::string_view suffix) {
    out.print("\"type{}\": \"{}\"", suffix, gguf::value_type_name(v.type()));
    if (v.type() != ValueType::array) return;
    out.print(", \"array_type{}\": \"{}\"", suffix, gguf::value_type_name(v.array_type()));
    if (v.array_type() != ValueType::array) return;
    out.print(", \"element_array_types{}\": ", suffix);
    put_element_array_types(out, v);
}

}  // namespace gguftool::cli
