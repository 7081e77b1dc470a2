// gguftool dump --json: one JSON document, written straight to the output buffer (no DOM), one
// metadata entry or tensor per line. JSON has no NaN or Infinity: non-finite numbers are null.
#include "dump.hpp"
#include "gguftool/tokenizer_export.hpp"
#include "metadata_values.hpp"

namespace gguftool::cli::dump {
namespace {

void put_metadata(Out &out, const gguf::File &f) {
    out.put(",\n  \"metadata\": [");
    bool first = true;
    for (const gguf::MetadataEntry &e : f.metadata()) {
        out.put(first ? "\n    {\"key\": " : ",\n    {\"key\": ");
        first = false;
        put_json_string(out, e.key);
        out.put(", ");
        put_json_type_members(out, e.value);
        out.put(", \"value\": ");
        put_value_json(out, e.value);
        out.put('}');
    }
    out.put(first ? "]" : "\n  ]");
}

// The tokenizer summary (as in the text output): absent when the file has no tokenizer.
void put_tokenizer(Out &out, const gguf::File &f) {
    const std::optional<tokenizer::TokenizerSummary> s = tokenizer::summarize_tokenizer(f);
    if (!s) return;
    out.put(",\n  \"tokenizer\": {\"model\": ");
    put_json_string(out, s->model);
    out.put(", \"pre\": ");
    if (s->pre.empty())
        out.put("null");
    else
        put_json_string(out, s->pre);
    out.print(", \"tokens\": {}", s->vocab_size);
    if (s->problem.empty()) {  // the special ids are known only when the settings read
        out.put(", \"special_ids\": {");
        for (size_t i = 0; i < s->special_ids.size(); ++i) {
            out.put(i ? ", " : "");
            put_json_string(out, s->special_ids[i].first);
            out.print(": {}", s->special_ids[i].second);
        }
        out.print("}}, \"add_bos\": {}, \"add_eos\": {}, \"add_sep\": {}", s->add_bos, s->add_eos,
                  s->add_sep);
    }
    out.print(", \"chat_template\": {}", s->chat_template);
    if (!s->problem.empty()) {
        out.put(", \"problem\": ");
        put_json_string(out, s->problem);
    }
    out.put('}');
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
              gguf::byte_order_word(f.byte_order()), f.alignment());
    out.print(",\n  \"data_offset\": {},\n  \"file_size\": {}", f.data_offset(), f.file_size());
    out.print(",\n  \"metadata_count\": {},\n  \"tensor_count\": {},\n  \"parameters\": {}",
              f.metadata().size(), model.tensors().size(), parameters);
    put_shards(out, model);
    if (!opt.no_metadata) {
        put_metadata(out, f);
        put_tokenizer(out, f);
    }
    if (!opt.no_tensors) put_tensors(out, model, reports);
    out.put("\n}\n");
}

}  // namespace gguftool::cli::dump
