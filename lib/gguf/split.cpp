// Planning the shards of a split (gguf-split's conventions), the file of a merge, and writing a
// set of outputs that appear together or not at all.
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "gguftool/gguf_split.hpp"
#include "gguftool/output_file.hpp"

namespace gguftool::gguf {
namespace {

std::vector<std::string> input_paths(const Model &model) {
    std::vector<std::string> paths;
    for (const auto &s : model.shards()) paths.push_back(s->path());
    return paths;
}

TensorHeader tensor_header(const TensorInfo &t) {
    return {std::string(t.name), static_cast<uint32_t>(t.type),
            std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), 0};
}

// A header of the model's version and byte order; with `metadata`, the first shard's keys but
// the split keys.
Header model_header(const Model &model, bool metadata) {
    const File &first = model.first();
    Header h;
    h.version = first.version();
    h.order = first.byte_order();
    if (metadata)
        for (const MetadataEntry &e : first.metadata())
            if (!is_split_key(e.key)) h.metadata.push_back(MetadataItem::of(e));
    return h;
}

// One shard being filled: its header and data, and its size as it grows, tensor by tensor.
struct ShardBuilder {
    OutputPlan plan;
    uint64_t infos_end = 0;  // end of the header without padding
    uint64_t data_end = 0;   // end of the last tensor's bytes in the data section

    ShardBuilder(const Model &model, uint64_t no, uint64_t n_tensors) {
        plan.header = model_header(model, no == 0);
        std::vector<MetadataItem> &m = plan.header.metadata;
        // In gguf-split's order: split.count is set last (once the count is known).
        m.push_back({std::string(kSplitNoKey), MetaValue::u16(static_cast<uint16_t>(no))});
        m.push_back(
            {std::string(kSplitTensorsKey), MetaValue::i32(static_cast<int32_t>(n_tensors))});
        m.push_back({std::string(kSplitCountKey), MetaValue::u16(0)});
        plan.header.alignment = alignment_of(m);
        Header unpadded = plan.header;
        unpadded.alignment = 1;
        infos_end = header_size(unpadded);
    }
    uint64_t tensors() const { return plan.data.size(); }
    uint64_t size() const {
        return align_up(infos_end, alignment()) + align_up(data_end, alignment());
    }
    uint64_t alignment() const { return plan.header.alignment; }
    // The file size with `t` added.
    uint64_t size_with(const TensorHeader &h, const TensorInfo &t) const {
        return align_up(infos_end + tensor_info_size(h), alignment()) +
               align_up(align_up(data_end, alignment()) + t.bytes, alignment());
    }
    void add(TensorHeader h, const File &shard, const TensorInfo &t) {
        infos_end += tensor_info_size(h);
        data_end = align_up(data_end, alignment()) + t.bytes;
        plan.header.tensors.push_back(std::move(h));
        plan.data.push_back(TensorData::copy(shard, t));
    }
};

// Fails before any output is created when a directory lacks the room for what goes into it.
void check_free_space(const std::vector<OutputPlan> &plans) {
    std::map<std::string, uint64_t> needed;
    for (const OutputPlan &p : plans) {
        const std::filesystem::path path(p.path);
        needed[path.has_parent_path() ? path.parent_path().string() : "."] += p.size;
    }
    for (const auto &[dir, bytes] : needed) {
        struct statvfs st {};
        if (::statvfs(dir.c_str(), &st) != 0) continue;  // the output's own error will say why
        // Root may also use the blocks reserved for it.
        const uint64_t blocks = ::geteuid() == 0 ? st.f_bfree : st.f_bavail;
        const uint64_t available = blocks * st.f_frsize;
        if (bytes > available)
            throw Error(dir, std::nullopt,
                        fmt::format("not enough free space: {} bytes needed, {} available", bytes,
                                    available));
    }
}

}  // namespace

bool is_split_key(std::string_view key) {
    return key == kSplitNoKey || key == kSplitCountKey || key == kSplitTensorsKey;
}

std::string shard_suffix(uint64_t no, uint64_t count) {
    return fmt::format("-{:05}-of-{:05}.gguf", no + 1, count);
}

std::string shard_path(std::string_view prefix, uint64_t no, uint64_t count) {
    return std::string(prefix) + shard_suffix(no, count);
}

std::vector<OutputPlan> plan_split(const Model &model, const std::string &prefix,
                                   const SplitLimit &limit) {
    if ((limit.max_tensors == 0) == (limit.max_bytes == 0))
        throw Error("split: give either a tensor count or a size limit, above 0");
    const std::vector<TensorInfo> &tensors = model.tensors();
    const std::string &input = model.first().path();
    if (tensors.empty()) throw Error(input, std::nullopt, "no tensors: nothing to split");
    if (tensors.size() > uint64_t(std::numeric_limits<int32_t>::max()))
        throw Error(input, std::nullopt,
                    fmt::format("{} tensors: more than split.tensors.count (int32) can count",
                                tensors.size()));

    std::vector<ShardBuilder> shards;
    shards.emplace_back(model, 0, tensors.size());
    for (uint64_t i = 0; i < tensors.size(); ++i) {
        const TensorInfo &t = tensors[i];
        TensorHeader h = tensor_header(t);
        const ShardBuilder &last = shards.back();
        const bool full = limit.max_tensors ? last.tensors() == limit.max_tensors
                                            : last.size_with(h, t) > limit.max_bytes;
        if (last.tensors() > 0 && full) {
            if (shards.size() == kMaxShards)
                throw Error(input, std::nullopt,
                            fmt::format("more than {} shards (split.count is a uint16): give a "
                                        "larger limit",
                                        kMaxShards));
            shards.emplace_back(model, shards.size(), tensors.size());
            shards.back().plan.first_tensor = i;
        }
        shards.back().add(std::move(h), *model.shards().at(t.shard), t);
    }

    const std::vector<std::string> inputs = input_paths(model);
    std::vector<OutputPlan> plans;
    for (size_t no = 0; no < shards.size(); ++no) {
        ShardBuilder &b = shards[no];
        OutputPlan &p = b.plan;
        p.header.metadata.back().value = MetaValue::u16(static_cast<uint16_t>(shards.size()));
        p.path = shard_path(prefix, no, shards.size());
        p.size = planned_size(p.header, p.data);
        if (p.size != b.size())  // the limit was applied to b.size(): they must agree
            throw Error(
                p.path, std::nullopt,
                fmt::format("internal error: shard of {} bytes, planned {}", p.size, b.size()));
        p.over_limit = limit.max_bytes && p.size > limit.max_bytes;
        refuse_to_write_over(p.path, inputs);
        plans.push_back(std::move(p));
    }
    return plans;
}

OutputPlan plan_merge(const Model &model, const std::string &path) {
    const File &first = model.first();
    if (!first.find(kSplitCountKey))
        throw Error(first.path(), std::nullopt,
                    "not a shard of a split model (it has no split.count)");
    OutputPlan p;
    p.path = path;
    p.header = model_header(model, true);
    p.header.alignment = alignment_of(p.header.metadata);
    for (const TensorInfo &t : model.tensors()) {
        p.header.tensors.push_back(tensor_header(t));
        p.data.push_back(TensorData::copy(*model.shards().at(t.shard), t));
    }
    p.size = planned_size(p.header, p.data);
    refuse_to_write_over(path, input_paths(model));
    return p;
}

void write_outputs(std::vector<OutputPlan> &plans, bool replace, const OutputsProgress &progress) {
    const auto refuse_existing = [&] {
        if (replace) return;
        for (const OutputPlan &p : plans)
            if (std::filesystem::exists(std::filesystem::symlink_status(p.path)))
                throw Error(p.path, std::nullopt, "already exists; not replaced");
    };
    refuse_existing();
    check_free_space(plans);

    uint64_t total = 0, before = 0;
    for (const OutputPlan &p : plans)
        for (const TensorData &d : p.data) total += d.size;
    std::vector<std::unique_ptr<OutputFile>> outs;
    for (OutputPlan &p : plans) {
        auto &out = *outs.emplace_back(std::make_unique<OutputFile>(p.path));
        WriteProgress each;
        if (progress) each = [&](uint64_t done, uint64_t) { progress(before + done, total); };
        const uint64_t written = write_model(out, p.header, p.data, each);
        if (written != p.size)  // planned_size and write_model share the layout; a bug otherwise
            throw Error(p.path, written,
                        fmt::format("internal error: wrote {} bytes, planned {}", written, p.size));
        for (const TensorData &d : p.data) before += d.size;
        out.close();  // a descriptor each until the end would limit the number of shards
    }
    for (auto &out : outs)
        out->commit(replace ? OutputFile::Existing::replace : OutputFile::Existing::refuse);
    for (auto &out : outs) out->keep();
}

}  // namespace gguftool::gguf
