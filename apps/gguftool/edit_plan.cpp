// gguftool edit: the new metadata (edit_plan.hpp).
#include "edit_plan.hpp"

#include <fmt/format.h>

#include <bit>
#include <map>

namespace gguftool::cli::edit {
namespace {

gguf::Assignment assignment(Edit::Kind kind, const std::string &arg) {
    switch (kind) {
        case Edit::Kind::set:
            return gguf::parse_set(arg);
        case Edit::Kind::set_json:
            return gguf::parse_set_json(arg);
        default:
            return gguf::parse_set_file(arg);
    }
}

std::string key_of(Edit::Kind kind, const std::string &arg) {
    if (kind == Edit::Kind::remove) return arg;
    if (kind == Edit::Kind::set_file) return gguf::split_set_file(arg).first;
    return assignment(kind, arg).key;
}

const char *kind_option(Edit::Kind kind) {
    switch (kind) {
        case Edit::Kind::set:
            return "--set";
        case Edit::Kind::set_json:
            return "--set-json";
        case Edit::Kind::set_file:
            return "--set-file";
        default:
            return "--delete";
    }
}

}  // namespace

std::string argument_problem(Edit::Kind kind, const std::string &arg) {
    try {
        if (kind == Edit::Kind::remove && arg.empty()) return "takes a key";
        const std::string key = key_of(kind, arg);  // parses (and range-checks) a value
        if (key.starts_with("split."))
            return fmt::format(
                "{}: split.* keys describe a shard of a split model and are written by gguftool "
                "split and merge; they cannot be edited by hand",
                key);
        if (key == gguf::kAlignmentKey && kind != Edit::Kind::remove) {
            const gguf::MetaValue v = kind == Edit::Kind::set_file ? gguf::MetaValue::str("")
                                                                   : assignment(kind, arg).value;
            if (v.type() != gguf::ValueType::uint32 || !std::has_single_bit(v.bits()))
                return fmt::format(
                    "{} must be a uint32 power of two (the alignment of the data "
                    "section, as readers require)",
                    key);
        }
        return "";
    } catch (const Error &e) {
        return e.problem();
    }
}

std::string command_line_problem(const std::vector<Edit> &edits) {
    std::map<std::string, const Edit *> seen;
    for (const Edit &e : edits) {
        if (std::string p = argument_problem(e.kind, e.arg); !p.empty())
            return fmt::format("{}: {}", kind_option(e.kind), p);
        const std::string key = key_of(e.kind, e.arg);
        if (const auto [at, fresh] = seen.emplace(key, &e); !fresh)
            return fmt::format("{} is edited twice ({} and {}): give each key one edit", key,
                               kind_option(at->second->kind), kind_option(e.kind));
    }
    return "";
}

Plan plan(const gguf::File &file, const std::vector<Edit> &edits) {
    Plan p;
    p.old_alignment = file.alignment();
    std::vector<gguf::MetadataItem> items;
    std::map<std::string, size_t, std::less<>> index;
    for (const gguf::MetadataEntry &e : file.metadata()) {
        index.emplace(std::string(e.key), items.size());
        items.push_back(gguf::MetadataItem::of(e));
    }
    std::vector<bool> deleted(items.size(), false);
    for (const Edit &e : edits) {
        if (e.kind == Edit::Kind::remove) {
            const auto at = index.find(e.arg);
            if (at == index.end())
                throw Error(file.path(), std::nullopt,
                            fmt::format("--delete {}: the file has no such key", e.arg));
            deleted[at->second] = true;
            p.changes.push_back({e.arg, file.metadata()[at->second].value, std::nullopt});
            continue;
        }
        gguf::Assignment a;
        try {
            a = assignment(e.kind, e.arg);
        } catch (const Error &error) {  // --set-file's file; the others were checked before
            throw Error(fmt::format("{} {}", kind_option(e.kind), error.what()));
        }
        if (const auto at = index.find(a.key); at != index.end()) {
            p.changes.push_back({a.key, file.metadata()[at->second].value, a.value});
            items[at->second].value = std::move(a.value);
        } else {
            p.changes.push_back({a.key, std::nullopt, a.value});
            index.emplace(a.key, items.size());
            items.push_back({a.key, std::move(a.value)});
        }
    }
    for (size_t i = 0; i < items.size(); ++i)
        if (i >= deleted.size() || !deleted[i]) p.header.metadata.push_back(std::move(items[i]));

    p.header.version = file.version();
    p.header.order = file.byte_order();
    p.header.alignment = gguf::alignment_of(p.header.metadata);
    for (const gguf::TensorInfo &t : file.tensors())
        p.header.tensors.push_back({std::string(t.name), static_cast<uint32_t>(t.type),
                                    std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims),
                                    t.offset});
    return p;
}

}  // namespace gguftool::cli::edit
