// gguftool dump, human output: header, metadata, tensor table, summary, statistics, values.
#include <algorithm>
#include <cmath>
#include <map>

#include "dump.hpp"
#include "gguftool/tokenizer_export.hpp"
#include "metadata_values.hpp"

namespace gguftool::cli::dump {
namespace {

using gguf::Value;
using gguf::ValueType;

constexpr size_t kKeyColumnMax = 48;  // longer keys push their line out instead of the column

std::string human_count(uint64_t n) {
    if (n < 1000) return std::to_string(n);
    static constexpr const char *kUnits[] = {"K", "M", "B", "T"};
    double v = double(n);
    int u = -1;
    while (v >= 1000 && u < 3) v /= 1000, ++u;
    return fmt::format("{:.2f} {}", v, kUnits[u]);
}

void write_header(Out &out, const gguf::Model &model, const Style &st) {
    const gguf::File &f = model.first();
    const bool split = model.shards().size() > 1;
    const auto field = [&](std::string_view label, const std::string &value) {
        out.print("  {}{:<12}{} {}\n", st.dim, label, st.reset, value);
    };
    out.print("{}{}{}: GGUF\n", st.bold, f.path(), st.reset);
    field("version", std::to_string(f.version()));
    field("byte order", gguf::byte_order_name(f.byte_order()));
    field("alignment", std::to_string(f.alignment()));
    const size_t pairs = f.metadata().size();
    field("metadata", fmt::format("{} {}", pairs, plural(pairs, "key-value pair")));
    field("tensors",
          split ? fmt::format("{} in {} shards", model.tensors().size(), model.shards().size())
                : std::to_string(model.tensors().size()));
    field("data offset", std::to_string(f.data_offset()));
    field("file size", fmt::format("{} ({})", f.file_size(), human_bytes(f.file_size())));
    if (!split) return;
    out.print("  {}shards{}\n", st.dim, st.reset);
    for (size_t i = 0; i < model.shards().size(); ++i) {
        const gguf::File &s = *model.shards()[i];
        out.print("    {:>3}  {}  ({} {}, data offset {}, {} {})\n", i, s.path(),
                  s.tensors().size(), plural(s.tensors().size(), "tensor"), s.data_offset(),
                  s.file_size(), plural(s.file_size(), "byte"));
    }
}

void write_metadata(Out &out, const gguf::File &f, const Style &st) {
    size_t key_width = 0, type_width = 0;
    for (const gguf::MetadataEntry &e : f.metadata()) {
        key_width = std::max(key_width, std::min(kKeyColumnMax, display_width(e.key)));
        type_width = std::max(type_width, type_label(e.value).size());
    }
    const size_t pairs = f.metadata().size();
    out.print("\n{}metadata{} ({} {})\n", st.bold, st.reset, pairs,
              plural(pairs, "key-value pair"));
    for (const gguf::MetadataEntry &e : f.metadata()) {
        out.print("  {}", st.key);
        const size_t w = put_display_string(out, e.key, SIZE_MAX);
        out.put(st.reset);
        out.pad(w, key_width);
        const std::string type = type_label(e.value);
        out.print("  {}{:<{}}{}  ", st.type, type, type_width, st.reset);
        put_value(out, e.value);
        out.put('\n');
    }
}

// The tokenizer.* metadata as llama.cpp resolves it (defaults applied): a few lines, after the
// metadata, when the file has a tokenizer.
void write_tokenizer(Out &out, const gguf::File &f, const Style &st) {
    const std::optional<tokenizer::TokenizerSummary> s = tokenizer::summarize_tokenizer(f);
    if (!s) return;
    const auto label = [&](std::string_view name) {
        out.print("  {}{:<14}{} ", st.dim, name, st.reset);
    };
    out.print("\n{}tokenizer{}\n", st.bold, st.reset);
    label("model");
    put_display_string(out, s->model, SIZE_MAX);
    out.put('\n');
    label("pre-tokenizer");
    put_display_string(out, s->pre.empty() ? "-" : s->pre, SIZE_MAX);
    out.put('\n');
    label("tokens");
    out.print("{}\n", s->vocab_size);
    if (s->problem.empty()) {  // the special ids are known only when the settings read
        const std::pair<std::string_view, bool> added[] = {
            {"bos", s->add_bos}, {"eos", s->add_eos}, {"sep", s->add_sep}};
        label("special");
        for (size_t i = 0; i < s->special_ids.size(); ++i) {
            const auto &[name, id] = s->special_ids[i];
            out.print("{}{} {}", i ? ", " : "", name, id);
            for (const auto &[a, on] : added)
                if (on && name == a) out.put(" (added)");
        }
        out.put(s->special_ids.empty() ? "-\n" : "\n");
    }
    label("chat template");
    out.put(s->chat_template ? "yes\n" : "no\n");
    if (!s->problem.empty()) {
        label("problem");
        put_display_string(out, s->problem, SIZE_MAX);
        out.put('\n');
    }
}

size_t shape_width(const gguf::TensorInfo &t) {
    if (t.n_dims == 0) return 6;  // "scalar"
    size_t w = 3 * (t.n_dims - 1);
    for (uint32_t d = 0; d < t.n_dims; ++d) w += decimal_digits(t.ne[d]);
    return w;
}

// Two passes over the rows — widths, then text — with no per-cell strings: 10,000 tensors stay
// cheap.
void write_tensor_table(Out &out, const gguf::Model &model, const Options &opt,
                        const std::vector<TensorReport> &reports, const Style &st) {
    const bool split = model.shards().size() > 1;
    const size_t total = model.tensors().size();
    if (opt.tensor_globs.empty())
        out.print("\n{}tensors{} ({})\n", st.bold, st.reset, total);
    else
        out.print("\n{}tensors{} ({} of {} match)\n", st.bold, st.reset, reports.size(), total);
    if (reports.empty()) return;

    // The shape is in GGUF's order, ne0 (the fastest-varying dimension) first: the header says
    // so, since `run` and ONNX list the same dimensions the other way round.
    constexpr std::string_view kShapeHeader = "shape (GGUF order)";
    size_t w_index = 1, w_name = 4, w_type = 4, w_shape = kShapeHeader.size(), w_elements = 8,
           w_bytes = 5, w_offset = 6;
    for (const TensorReport &r : reports) {
        const gguf::TensorInfo &t = *r.info;
        w_index = std::max(w_index, decimal_digits(uint64_t(&t - model.tensors().data())));
        w_name = std::max(w_name, display_width(t.name));
        w_type = std::max(w_type, std::string_view(type_name(t.type)).size());
        w_shape = std::max(w_shape, shape_width(t));
        w_elements = std::max(w_elements, decimal_digits(t.elements));
        w_bytes = std::max(w_bytes, decimal_digits(t.bytes));
        w_offset = std::max(w_offset, decimal_digits(t.offset));
    }
    out.print("  {}{:>{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}{}{}\n", st.dim, "#",
              w_index, "name", w_name, "type", w_type, kShapeHeader, w_shape, "elements",
              w_elements, "bytes", w_bytes, "offset", w_offset, split ? "  shard" : "", st.reset);
    // Plain puts, no format strings: this loop runs once per tensor.
    for (const TensorReport &r : reports) {
        const gguf::TensorInfo &t = *r.info;
        out.put("  ");
        out.put_right(uint64_t(&t - model.tensors().data()), w_index);
        out.put("  ");
        out.pad(put_display_string(out, t.name, SIZE_MAX), w_name);
        out.put("  ");
        out.put_left(type_name(t.type), w_type);
        out.put("  ");
        if (t.n_dims == 0) out.put("scalar");
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            if (d) out.put(" x ");
            out.put_uint(t.ne[d]);
        }
        out.pad(shape_width(t), w_shape);
        out.put("  ");
        out.put_right(t.elements, w_elements);
        out.put("  ");
        out.put_right(t.bytes, w_bytes);
        out.put("  ");
        out.put_right(t.offset, w_offset);
        if (split) {
            out.put("  ");
            out.put_right(t.shard, 5);
        }
        out.put('\n');
    }
}

void write_summary(Out &out, const std::vector<TensorReport> &reports, const Style &st) {
    struct Totals {
        uint64_t tensors = 0, elements = 0, bytes = 0;
    };
    std::map<uint32_t, Totals> by_type;  // ordered by type id
    Totals all;
    for (const TensorReport &r : reports) {
        Totals &t = by_type[static_cast<uint32_t>(r.info->type)];
        for (Totals *x : {&t, &all}) {
            x->tensors += 1;
            x->elements += r.info->elements;
            x->bytes += r.info->bytes;
        }
    }
    if (reports.empty()) return;
    const auto bpw = [](const Totals &t) {
        return t.elements ? fmt::format("{:.2f}", 8.0 * double(t.bytes) / double(t.elements))
                          : std::string("-");
    };
    out.print("\n{}summary{}\n", st.bold, st.reset);
    out.print("  {}{:<8}  {:>8}  {:>14}  {:>14}  {:>11}{}\n", st.dim, "type", "tensors",
              "parameters", "bytes", "bits/weight", st.reset);
    for (const auto &[id, t] : by_type)
        out.print("  {:<8}  {:>8}  {:>14}  {:>14}  {:>11}\n", type_traits(id)->name, t.tensors,
                  t.elements, t.bytes, bpw(t));
    out.print("  {:<8}  {:>8}  {:>14}  {:>14}  {:>11}\n", "total", all.tensors, all.elements,
              all.bytes, bpw(all));
    out.print("  {} {}, {}, {} bits per weight on average\n", human_count(all.elements),
              plural(all.elements, "parameter"), human_bytes(all.bytes), bpw(all));
}

std::string number(double v) {
    return fmt::format("{:.6g}", v);
}

void write_stats(Out &out, const std::vector<TensorReport> &reports, const Style &st) {
    size_t name_width = 4;
    for (const TensorReport &r : reports)
        name_width = std::max(name_width, display_width(r.info->name));
    out.print("\n{}stats{}\n", st.bold, st.reset);
    out.print("  {}{:<{}}  {:>13}  {:>13}  {:>13}  {:>13}  {:>6}  {:>6}{}\n", st.dim, "name",
              name_width, "min", "max", "mean", "std", "nan", "inf", st.reset);
    for (const TensorReport &r : reports) {
        out.put("  ");
        out.pad(put_display_string(out, r.info->name, SIZE_MAX), name_width);
        if (!r.stats()) {
            out.print("  cannot decode: {}\n", r.error());
            continue;
        }
        const Stats &s = *r.stats();
        out.print("  {:>13}  {:>13}  {:>13}  {:>13}  {:>6}  {:>6}\n", number(s.min), number(s.max),
                  number(s.mean), number(s.std), s.nan, s.inf);
    }
}

std::string value_text(const Values &v, size_t i) {
    if (v.integer) return std::to_string(v.ints[i]);
    if (v.is_f64) return fmt::format("{}", v.reals[i]);
    return fmt::format("{}", static_cast<float>(v.reals[i]));
}

// One layout for the whole section, so that the columns of every tensor line up: one width, that
// of the widest value shown, and a power of two of values per row (8, 4, 2 or 1: as many as fit
// in 96 columns). Rows then start at element indices that are multiples of it, and the usual
// counts (--values 8, 16, 100 ...) fill every row but perhaps the last.
void write_values(Out &out, const std::vector<TensorReport> &reports, const Style &st) {
    std::vector<std::vector<std::string>> texts(reports.size());
    size_t w = 1;
    for (size_t r = 0; r < reports.size(); ++r) {
        const Values *v = reports[r].values();
        if (!v) continue;
        texts[r].resize(v->size());
        for (size_t i = 0; i < v->size(); ++i)
            w = std::max(w, (texts[r][i] = value_text(*v, i)).size());
    }
    size_t per_row = 8;
    while (per_row > 1 && per_row * (w + 2) > 96) per_row /= 2;

    out.print("\n{}values{}\n", st.bold, st.reset);
    for (size_t r = 0; r < reports.size(); ++r) {
        const TensorReport &report = reports[r];
        out.put("  ");
        put_display_string(out, report.info->name, SIZE_MAX);
        if (!report.values()) {
            out.print(" {}({}){}: cannot decode: {}\n", st.dim, type_name(report.info->type),
                      st.reset, report.error());
            continue;
        }
        out.print(" {}({}, first {} of {}){}\n", st.dim, type_name(report.info->type),
                  texts[r].size(), report.info->elements, st.reset);
        for (size_t i = 0; i < texts[r].size(); ++i) {
            out.print("{}{:>{}}", i % per_row == 0 ? "    " : "  ", texts[r][i], w);
            if (i % per_row == per_row - 1 || i + 1 == texts[r].size()) out.put('\n');
        }
    }
}

}  // namespace

void write_text(Out &out, const gguf::Model &model, const Options &opt,
                const std::vector<TensorReport> &reports) {
    const Style st = style_for(stdout);
    write_header(out, model, st);
    if (!opt.no_metadata) {
        write_metadata(out, model.first(), st);
        write_tokenizer(out, model.first(), st);
    }
    if (opt.no_tensors) return;
    write_tensor_table(out, model, opt, reports, st);
    write_summary(out, reports, st);
    if (opt.stats && !reports.empty()) write_stats(out, reports, st);
    if (opt.values > 0 && !reports.empty()) write_values(out, reports, st);
}

}  // namespace gguftool::cli::dump
