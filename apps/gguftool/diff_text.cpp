// gguftool diff, human output: which sections are identical, what differs, and the tensors in
// both ordered by how much they lost (NMSE, worst first).
#include <algorithm>
#include <cmath>

#include "diff.hpp"
#include "metadata_values.hpp"

namespace gguftool::cli::diff {
namespace {

constexpr size_t kNameColumnMax = 48;  // longer names push their line out instead of the column

std::string model_summary(const gguf::Model &m) {
    uint64_t bytes = 0;
    for (const auto &s : m.shards()) bytes += s->file_size();
    const size_t n = m.tensors().size();
    std::string s = fmt::format("{} {}", n, plural(n, "tensor"));
    if (m.shards().size() > 1) s += fmt::format(" in {} shards", m.shards().size());
    s += fmt::format(", {} {}", bytes, plural(bytes, "byte"));
    return bytes < 1024 ? s : s + fmt::format(" ({})", human_bytes(double(bytes)));
}

std::string shape(const gguf::TensorInfo &t) {
    if (t.n_dims == 0) return "scalar";
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d) s += fmt::format("{}{}", d ? " x " : "", t.ne[d]);
    return s;
}

std::string side(const gguf::TensorInfo &t) {
    return fmt::format("{} {} ({} {})", type_name(t.type), shape(t), t.bytes,
                       plural(t.bytes, "byte"));
}

std::string hex(std::span<const uint8_t> bytes) {
    std::string s;
    s.reserve(bytes.size() * 2);
    for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
    return s;
}

// "3", or "12 and 5" style lists of what a section has.
std::string counts(std::initializer_list<std::pair<size_t, const char *>> parts) {
    std::string s;
    for (const auto &[n, what] : parts) {
        if (n == 0) continue;
        if (!s.empty()) s += ", ";
        s += fmt::format("{} {}", n, what);
    }
    return s;
}

void write_header(Out &out, const gguf::Model &a, const Report &r, const Style &st) {
    const gguf::File &f = a.first();
    if (r.header.empty()) {
        out.print("\n{}header{}: identical (version {}, {}, alignment {})\n", st.bold, st.reset,
                  f.version(), gguf::byte_order_name(f.byte_order()), f.alignment());
        return;
    }
    out.print("\n{}header{}: {} {}\n", st.bold, st.reset, r.header.size(),
              plural(r.header.size(), "difference"));
    for (const HeaderDifference &d : r.header) out.print("  {:<10}  {} -> {}\n", d.field, d.a, d.b);
}

void put_key(Out &out, std::string_view kind, std::string_view key, size_t width, const Style &st) {
    out.print("  {:<9}  {}", kind, st.key);
    const size_t w = put_display_string(out, key, SIZE_MAX);
    out.put(st.reset);
    out.pad(w, width);
    out.put("  ");
}

void write_changed(Out &out, const ChangedKey &c, size_t width, const Style &st) {
    const gguf::Value &va = c.a->value, &vb = c.b->value;
    put_key(out, "changed", c.a->key, width, st);
    const std::string ta = type_label(va), tb = type_label(vb);
    out.print("{}{}{}", st.type, ta == tb ? ta : ta + " -> " + tb, st.reset);
    if (c.first_different_index) {  // arrays of the same element type
        const uint64_t i = *c.first_different_index;
        out.print("  first difference at index {}: ", i);
        if (i < va.array_size())
            put_value(out, va.element(i));
        else
            out.put("(none)");
        out.put(" -> ");
        if (i < vb.array_size())
            put_value(out, vb.element(i));
        else
            out.put("(none)");
    } else {
        out.put("  ");
        put_value(out, va);
        out.put(" -> ");
        put_value(out, vb);
    }
    out.put('\n');
}

void write_metadata(Out &out, const MetadataDiff &m, const Style &st) {
    if (m.same()) {
        out.print("\n{}metadata{}: identical ({} {})\n", st.bold, st.reset, m.identical,
                  plural(m.identical, "key"));
        return;
    }
    out.print("\n{}metadata{}: {}; {} {} identical\n", st.bold, st.reset,
              counts({{m.changed.size(), "changed"},
                      {m.only_a.size(), "only in a"},
                      {m.only_b.size(), "only in b"}}),
              m.identical, plural(m.identical, "key"));
    size_t width = 0;
    for (const auto *e : m.only_a) width = std::max(width, display_width(e->key));
    for (const auto *e : m.only_b) width = std::max(width, display_width(e->key));
    for (const ChangedKey &c : m.changed) width = std::max(width, display_width(c.a->key));
    width = std::min(width, kNameColumnMax);
    for (const auto &[kind, list] : {std::pair{"only in a", &m.only_a}, {"only in b", &m.only_b}})
        for (const gguf::MetadataEntry *e : *list) {
            put_key(out, kind, e->key, width, st);
            out.print("{}{}{}  ", st.type, type_label(e->value), st.reset);
            put_value(out, e->value);
            out.put('\n');
        }
    for (const ChangedKey &c : m.changed) write_changed(out, c, width, st);
}

// A tensor in both that differs in more than its type: shape, no numbers, or its bytes.
bool has_details(const TensorDiff &t) {
    return t.status == Status::different &&
           (t.a->n_dims != t.b->n_dims || t.a->ne != t.b->ne || !t.note.empty() || t.block);
}

void write_tensors(Out &out, const Report &r, const Style &st) {
    size_t same = 0, different = 0, only_a = 0, only_b = 0, width = 0;
    for (const TensorDiff &t : r.tensors) {
        same += t.status == Status::same;
        different += t.status == Status::different;
        only_a += t.status == Status::only_a;
        only_b += t.status == Status::only_b;
        if (t.status != Status::same)
            width = std::max(width, std::min(kNameColumnMax, display_width(t.name)));
    }
    if (different + only_a + only_b == 0) {
        out.print("\n{}tensors{}: identical ({})\n", st.bold, st.reset, same);
        return;
    }
    out.print("\n{}tensors{}: {}\n", st.bold, st.reset,
              counts({{different, "different"},
                      {same, "same"},
                      {only_a, "only in a"},
                      {only_b, "only in b"}}));
    for (const TensorDiff &t : r.tensors) {
        if (t.status == Status::only_a || t.status == Status::only_b) {
            put_key(out, t.status == Status::only_a ? "only in a" : "only in b", t.name, width, st);
            out.print("{}\n", side(t.a ? *t.a : *t.b));
            continue;
        }
        if (!has_details(t)) continue;
        put_key(out, "different", t.name, width, st);
        const std::string sa = side(*t.a), sb = side(*t.b);
        out.print("{}\n", sa == sb ? sa : sa + " -> " + sb);
        if (!t.note.empty()) out.print("             {}\n", t.note);
        if (t.block) {
            out.print("             first different block: {}\n", t.block->index);
            out.print("               a  {}\n", t.block->a ? hex(*t.block->a) : "(none)");
            out.print("               b  {}\n", t.block->b ? hex(*t.block->b) : "(none)");
        }
    }
}

std::string number(double v, const char *format) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return fmt::format(fmt::runtime(format), v);
}

// NaN is the worst NMSE of all, then the largest.
bool worse(const TensorDiff *x, const TensorDiff *y) {
    const double a = x->metrics->nmse, b = y->metrics->nmse;
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && !std::isnan(b);
    return a > b;
}

void write_summary(Out &out, const Report &r, const Style &st) {
    std::vector<const TensorDiff *> rows;
    size_t width = 4;
    for (const TensorDiff &t : r.tensors)
        if (t.status == Status::different && t.metrics) {
            rows.push_back(&t);
            width = std::max(width, std::min(kNameColumnMax, display_width(t.name)));
        }
    if (rows.empty()) return;
    std::stable_sort(rows.begin(), rows.end(), worse);
    out.print("\n{}summary{}: {} different {} by NMSE, worst first (b is the reference)\n", st.bold,
              st.reset, rows.size(), plural(rows.size(), "tensor"));
    out.print("  {}{:<{}}  {:<7}  {:<7}  {:>10}  {:>10}  {:>12}  {:>9}  {:>10}{}\n", st.dim, "name",
              width, "type_a", "type_b", "nmse", "rmse", "max_abs_diff", "cosine", "mismatches",
              st.reset);
    for (const TensorDiff *t : rows) {
        const Metrics &m = *t->metrics;
        out.put("  ");
        out.pad(put_display_string(out, t->name, SIZE_MAX), width);
        out.print("  {:<7}  {:<7}  {:>10}  {:>10}  {:>12}  {:>9}  {:>10}\n", type_name(t->a->type),
                  type_name(t->b->type), number(m.nmse, "{:.3e}"), number(m.rmse, "{:.4g}"),
                  number(m.max_abs_diff, "{:.4g}"),
                  m.cosine ? number(*m.cosine, "{:.6f}") : std::string("-"), m.mismatches);
    }
}

}  // namespace

void write_text(Out &out, const gguf::Model &a, const gguf::Model &b, const Report &r) {
    const Style st = style_for(stdout);
    out.print("a  {}{}{}  ({})\n", st.bold, a.first().path(), st.reset, model_summary(a));
    out.print("b  {}{}{}  ({})\n", st.bold, b.first().path(), st.reset, model_summary(b));
    write_header(out, a, r, st);
    write_metadata(out, r.metadata, st);
    if (r.tensors_compared) {
        write_tensors(out, r, st);
        write_summary(out, r, st);
    }
    std::string sections;
    const auto add = [&](const char *s) {
        sections += sections.empty() ? s : std::string(", ") + s;
    };
    if (!r.header.empty()) add("header");
    if (!r.metadata.same()) add("metadata");
    if (std::any_of(r.tensors.begin(), r.tensors.end(),
                    [](const TensorDiff &t) { return t.status != Status::same; }))
        add("tensors");
    const char *scope = !r.tensors_compared ? " (header and metadata)"
                        : r.tensor_subset   ? " (in the tensors selected)"
                                            : "";
    if (sections.empty())
        out.print("\na and b are identical{}\n", scope);
    else
        out.print("\na and b differ in {}{}\n", sections, scope);
}

}  // namespace gguftool::cli::diff
