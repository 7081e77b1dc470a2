// gguftool dump --json: one JSON document, written straight to the output buffer (no DOM), one
// metadata entry or tensor per line. JSON has no NaN or Infinity: non-finite numbers are null.
#include <cmath>
#include <cstring>

#include "dump.hpp"

namespace gguftool::cli::dump {
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

void put_json_value(Out &out, const Value &v);

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
                put_json_value(out, e);
            });
            out.put(']');
            return;
        }
    }
}

void put_json_value(Out &out, const Value &v) {
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

void put_metadata(Out &out, const gguf::File &f) {
    out.put(",\n  \"metadata\": [");
    bool first = true;
    for (const gguf::MetadataEntry &e : f.metadata()) {
        out.put(first ? "\n    {\"key\": " : ",\n    {\"key\": ");
        first = false;
        put_json_string(out, e.key);
        out.print(", \"type\": \"{}\"", gguf::value_type_name(e.value.type()));
        if (e.value.type() == ValueType::array) {
            out.print(", \"array_type\": \"{}\"", gguf::value_type_name(e.value.array_type()));
            if (e.value.array_type() == ValueType::array) {
                out.put(", \"element_array_types\": ");
                put_element_array_types(out, e.value);
            }
        }
        out.put(", \"value\": ");
        put_json_value(out, e.value);
        out.put('}');
    }
    out.put(first ? "]" : "\n  ]");
}

void put_values(Out &out, const Values &v) {
    out.put(", \"values\": [");
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out.put(',');
        if (v.integer)
            out.put_int(v.ints[i]);
        else if (v.is_f64)
            put_json_double(out, v.reals[i]);
        else
            put_json_float(out, static_cast<float>(v.reals[i]));
    }
    out.put(']');
}

void put_stats(Out &out, const Stats &s) {
    out.print(", \"stats\": {{\"count\": {}, \"finite\": {}, \"nan\": {}, \"inf\": {}", s.count,
              s.finite, s.nan, s.inf);
    const std::pair<const char *, double> reals[] = {
        {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"std", s.std}};
    for (const auto &[name, x] : reals) {
        out.print(", \"{}\": ", name);
        put_json_double(out, x);
    }
    out.put('}');
}

void put_tensors(Out &out, const gguf::Model &model, const std::vector<TensorReport> &reports) {
    const bool split = model.shards().size() > 1;
    out.put(",\n  \"tensors\": [");
    bool first = true;
    for (const TensorReport &r : reports) {
        const gguf::TensorInfo &t = *r.info;
        out.put(first ? "\n    {\"name\": " : ",\n    {\"name\": ");
        first = false;
        put_json_string(out, t.name);
        out.put(", \"type\": \"");
        out.put(type_name(t.type));
        out.put("\", \"dims\": [");
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            if (d) out.put(',');
            out.put_uint(t.ne[d]);
        }
        out.put("], \"offset\": ");
        out.put_uint(t.offset);
        out.put(", \"file_offset\": ");
        out.put_uint(t.file_offset);
        out.put(", \"bytes\": ");
        out.put_uint(t.bytes);
        out.put(", \"elements\": ");
        out.put_uint(t.elements);
        if (split) {
            out.put(", \"shard\": ");
            out.put_uint(t.shard);
        }
        if (r.values()) put_values(out, *r.values());
        if (r.stats()) put_stats(out, *r.stats());
        if (!r.error().empty()) {
            out.put(", \"decode_error\": ");
            put_json_string(out, r.error());
        }
        out.put('}');
    }
    out.put(first ? "]" : "\n  ]");
}

void put_shards(Out &out, const gguf::Model &model) {
    out.put(",\n  \"shards\": [");
    for (size_t i = 0; i < model.shards().size(); ++i) {
        const gguf::File &s = *model.shards()[i];
        out.put(i ? ",\n    {\"path\": " : "\n    {\"path\": ");
        put_json_string(out, s.path());
        out.print(", \"data_offset\": {}, \"file_size\": {}, \"tensor_count\": {}}}",
                  s.data_offset(), s.file_size(), s.tensors().size());
    }
    out.put("\n  ]");
}

}  // namespace

void write_json(Out &out, const gguf::Model &model, const Options &opt,
                const std::vector<TensorReport> &reports) {
    const gguf::File &f = model.first();
    uint64_t parameters = 0;
    for (const gguf::TensorInfo &t : model.tensors()) parameters += t.elements;
    out.put("{\n  \"file\": ");
    put_json_string(out, f.path());
    out.print(",\n  \"version\": {},\n  \"byte_order\": \"{}\",\n  \"alignment\": {}", f.version(),
              f.byte_order() == gguf::ByteOrder::little ? "little" : "big", f.alignment());
    out.print(",\n  \"data_offset\": {},\n  \"file_size\": {}", f.data_offset(), f.file_size());
    out.print(",\n  \"metadata_count\": {},\n  \"tensor_count\": {},\n  \"parameters\": {}",
              f.metadata().size(), model.tensors().size(), parameters);
    put_shards(out, model);
    if (!opt.no_metadata) put_metadata(out, f);
    if (!opt.no_tensors) put_tensors(out, model, reports);
    out.put("\n}\n");
}

}  // namespace gguftool::cli::dump
