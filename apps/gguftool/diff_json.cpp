// gguftool diff --json: one JSON document, written straight to the output buffer, one metadata key
// or tensor per line. Numbers that are not finite, and those not computed, are null.
#include <cmath>

#include "diff.hpp"
#include "metadata_values.hpp"

namespace gguftool::cli::diff {
namespace {

void put_header(Out &out, const gguf::File &a, const gguf::File &b, const Report &r) {
    out.print(
        ",\n  \"header\": {{\"identical\": {}, \"version_a\": {}, \"version_b\": {}, "
        "\"byte_order_a\": \"{}\", \"byte_order_b\": \"{}\", \"alignment_a\": {}, "
        "\"alignment_b\": {}}}",
        r.header.empty(), a.version(), b.version(), gguf::byte_order_word(a.byte_order()),
        gguf::byte_order_word(b.byte_order()), a.alignment(), b.alignment());
}

void put_entries(Out &out, const char *name, const std::vector<const gguf::MetadataEntry *> &list) {
    out.print(",\n    \"{}\": [", name);
    for (size_t i = 0; i < list.size(); ++i) {
        out.put(i ? ",\n      {\"key\": " : "\n      {\"key\": ");
        put_json_string(out, list[i]->key);
        out.put(", ");
        put_json_type_members(out, list[i]->value);
        out.put(", \"value\": ");
        put_value_json(out, list[i]->value);
        out.put('}');
    }
    out.put(list.empty() ? "]" : "\n    ]");
}

void put_length(Out &out, const char *name, const gguf::Value &v) {
    out.print(", \"{}\": ", name);
    if (v.type() == gguf::ValueType::array)
        out.put_uint(v.array_size());
    else
        out.put("null");
}

void put_metadata(Out &out, const MetadataDiff &m) {
    out.print(",\n  \"metadata\": {{\n    \"identical\": {},\n    \"identical_keys\": {}", m.same(),
              m.identical);
    put_entries(out, "only_a", m.only_a);
    put_entries(out, "only_b", m.only_b);
    out.put(",\n    \"changed\": [");
    for (size_t i = 0; i < m.changed.size(); ++i) {
        const ChangedKey &c = m.changed[i];
        out.put(i ? ",\n      {\"key\": " : "\n      {\"key\": ");
        put_json_string(out, c.a->key);
        out.put(", ");
        put_json_type_members(out, c.a->value, "_a");
        out.put(", ");
        put_json_type_members(out, c.b->value, "_b");
        out.print(", \"type_changed\": {}", c.type_changed);
        put_length(out, "length_a", c.a->value);
        put_length(out, "length_b", c.b->value);
        out.put(", \"first_different_index\": ");
        if (c.first_different_index)
            out.put_uint(*c.first_different_index);
        else
            out.put("null");
        out.put(", \"value_a\": ");
        put_value_json(out, c.a->value);
        out.put(", \"value_b\": ");
        put_value_json(out, c.b->value);
        out.put('}');
    }
    out.put(m.changed.empty() ? "]\n  }" : "\n    ]\n  }");
}

void put_side(Out &out, const char *side, const gguf::TensorInfo *t) {
    if (!t) {
        out.print(
            ", \"type_{0}\": null, \"dims_{0}\": null, \"elements_{0}\": null, "
            "\"bytes_{0}\": null",
            side);
        return;
    }
    out.print(", \"type_{}\": \"{}\", \"dims_{}\": [", side, type_name(t->type), side);
    for (uint32_t d = 0; d < t->n_dims; ++d) {
        if (d) out.put(',');
        out.put_uint(t->ne[d]);
    }
    out.print("], \"elements_{}\": {}, \"bytes_{}\": {}", side, t->elements, side, t->bytes);
}

void put_number(Out &out, const char *name, std::optional<double> v) {
    out.print(", \"{}\": ", name);
    if (v)
        put_json_double(out, *v);
    else
        out.put("null");
}

void put_hex(Out &out, const char *name, const std::optional<std::span<const uint8_t>> &bytes) {
    out.print(", \"{}\": ", name);
    if (!bytes) {
        out.put("null");
        return;
    }
    out.put('"');
    for (uint8_t b : *bytes) out.print("{:02x}", b);
    out.put('"');
}

void put_tensor(Out &out, const TensorDiff &t) {
    out.put("{\"name\": ");
    put_json_string(out, t.name);
    out.print(", \"status\": \"{}\"", status_name(t.status));
    put_side(out, "a", t.a);
    put_side(out, "b", t.b);
    const Metrics *m = t.metrics ? &*t.metrics : nullptr;
    put_number(out, "max_abs_diff", m ? std::optional(m->max_abs_diff) : std::nullopt);
    put_number(out, "rmse", m ? std::optional(m->rmse) : std::nullopt);
    put_number(out, "nmse", m ? std::optional(m->nmse) : std::nullopt);
    put_number(out, "cosine", m ? m->cosine : std::nullopt);
    out.put(", \"mismatches\": ");
    if (m)
        out.put_uint(m->mismatches);
    else
        out.put("null");
    out.put(", \"first_different_block\": ");
    if (t.block)
        out.put_uint(t.block->index);
    else
        out.put("null");
    put_hex(out, "block_a", t.block ? t.block->a : std::nullopt);
    put_hex(out, "block_b", t.block ? t.block->b : std::nullopt);
    out.put(", \"note\": ");
    put_json_string(out, t.note);
    out.put('}');
}

}  // namespace

void write_json(Out &out, const gguf::Model &a, const gguf::Model &b, const Report &r) {
    out.put("{\n  \"a\": ");
    put_json_string(out, a.first().path());
    out.put(",\n  \"b\": ");
    put_json_string(out, b.first().path());
    out.print(",\n  \"identical\": {}", r.identical());
    put_header(out, a.first(), b.first(), r);
    put_metadata(out, r.metadata);
    out.print(",\n  \"tensors_compared\": {}", r.tensors_compared);
    out.put(",\n  \"tensors\": [");
    size_t counts[4] = {};
    for (size_t i = 0; i < r.tensors.size(); ++i) {
        out.put(i ? ",\n    " : "\n    ");
        put_tensor(out, r.tensors[i]);
        ++counts[static_cast<int>(r.tensors[i].status)];
        out.maybe_flush();
    }
    out.put(r.tensors.empty() ? "]" : "\n  ]");
    out.print(
        ",\n  \"summary\": {{\"same\": {}, \"different\": {}, \"only_a\": {}, \"only_b\": "
        "{}}}\n}}\n",
        counts[0], counts[1], counts[2], counts[3]);
}

}  // namespace gguftool::cli::diff
