// gguf::Model: one file, or the shards of a split model (llama.cpp's gguf-split) joined into one.
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "byte_reader.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_split.hpp"
#include "gguftool/prefault.hpp"
#include "name_table.hpp"

namespace gguftool::gguf {
namespace {

using detail::NameTable;

struct SplitKey {
    uint64_t value;
    uint64_t offset;  // of the metadata entry, for errors
};

// An integer split key of `f`, or nullopt when absent. gguf-split writes uint16/int32; any
// non-negative integer type is accepted.
std::optional<SplitKey> split_key(const File &f, std::string_view key) {
    const MetadataEntry *e = f.find(key);
    if (!e) return std::nullopt;
    const ValueType t = e->value.type();
    if (t == ValueType::string || t == ValueType::array || t == ValueType::bool_ ||
        t == ValueType::float32 || t == ValueType::float64)
        throw Error(f.path(), e->offset,
                    fmt::format("{} must be an integer, not {}", key, value_type_name(t)));
    const auto v = e->value.as_int();
    if (v < 0) throw Error(f.path(), e->offset, fmt::format("{} is negative ({})", key, v));
    return SplitKey{static_cast<uint64_t>(v), e->offset};
}

// Checks that `shard` is shard `no` of the same split model as `other`, a shard of it.
void check_shard(const File &shard, const File &other, uint64_t no, uint64_t count,
                 const std::optional<SplitKey> &tensors) {
    if (shard.byte_order() != other.byte_order() || shard.version() != other.version())
        throw Error(shard.path(), std::nullopt,
                    fmt::format("shard belongs to another model: GGUF version {}, {}; {} is "
                                "version {}, {}",
                                shard.version(), byte_order_name(shard.byte_order()), other.path(),
                                other.version(), byte_order_name(other.byte_order())));
    const auto shard_count = split_key(shard, kSplitCountKey);
    if (!shard_count || shard_count->value != count)
        throw Error(
            shard.path(), shard_count ? std::optional(shard_count->offset) : std::nullopt,
            fmt::format("shard belongs to another model: split.count is {}, expected {}",
                        shard_count ? std::to_string(shard_count->value) : "missing", count));
    const auto shard_no = split_key(shard, kSplitNoKey);
    if (!shard_no || shard_no->value != no)
        throw Error(shard.path(), shard_no ? std::optional(shard_no->offset) : std::nullopt,
                    fmt::format("wrong shard: split.no is {}, expected {}",
                                shard_no ? std::to_string(shard_no->value) : "missing", no));
    const auto shard_tensors = split_key(shard, kSplitTensorsKey);
    if (tensors && shard_tensors && shard_tensors->value != tensors->value)
        throw Error(shard.path(), shard_tensors->offset,
                    fmt::format("shard belongs to another model: split.tensors.count is {}, "
                                "expected {}",
                                shard_tensors->value, tensors->value));
}

// All shards of the split model that `opened` (at `path`) belongs to, in shard order.
std::vector<std::shared_ptr<const File>> open_shards(const std::string &path,
                                                     std::shared_ptr<const File> opened,
                                                     uint64_t count) {
    const auto no = split_key(*opened, kSplitNoKey);
    if (!no || no->value >= count)
        throw Error(path, no ? std::optional(no->offset) : std::nullopt,
                    fmt::format("split.no is {}, expected a shard number below split.count {}",
                                no ? std::to_string(no->value) : "missing", count));
    const std::string suffix = shard_suffix(no->value, count);
    if (!path.ends_with(suffix))
        throw Error(path, std::nullopt,
                    fmt::format("shard {} of {} of a split model must be named <prefix>{}",
                                no->value + 1, count, suffix));
    const std::string prefix = path.substr(0, path.size() - suffix.size());
    const auto tensors = split_key(*opened, kSplitTensorsKey);

    std::vector<std::shared_ptr<const File>> shards;
    for (uint64_t i = 0; i < count; ++i) {
        const std::string shard_path = prefix + shard_suffix(i, count);
        if (i != no->value && !std::filesystem::exists(shard_path))
            throw Error(
                shard_path, std::nullopt,
                fmt::format("missing shard {} of {} of split model '{}'", i + 1, count, path));
        auto shard = i == no->value ? opened : File::open(shard_path);
        check_shard(*shard, *opened, i, count, tensors);
        shards.push_back(std::move(shard));
    }

    uint64_t total = 0;
    for (const auto &s : shards) total += s->tensors().size();
    if (tensors && total != tensors->value) {
        // Reported at the first shard's own entry: `tensors` may have been read from another
        // shard, where the entry can sit at another offset.
        const auto first = split_key(*shards[0], kSplitTensorsKey);
        throw Error(shards[0]->path(), first ? std::optional(first->offset) : std::nullopt,
                    fmt::format("split.tensors.count is {} but the {} shards hold {} tensors",
                                tensors->value, count, total));
    }
    return shards;
}

}  // namespace

Model Model::open(const std::string &path) {
    Model m;
    std::shared_ptr<const File> opened = File::open(path);
    const auto count = split_key(*opened, kSplitCountKey);
    if (!count || count->value <= 1) {
        // One file: its own tensor list and index serve (shard is 0 in both).
        m.tensors_ = std::shared_ptr<const std::vector<TensorInfo>>(opened, &opened->tensors());
        m.shards_.push_back(std::move(opened));
        return m;
    }
    m.shards_ = open_shards(path, std::move(opened), count->value);

    // Join the tensors in shard order; names must be unique across shards.
    uint64_t total = 0;
    for (const auto &s : m.shards_) total += s->tensors().size();
    if (total > NameTable::kNone - 1)
        throw Error(path, std::nullopt,
                    fmt::format("{} tensors are more than this reader supports", total));
    auto tensors = std::make_shared<std::vector<TensorInfo>>();
    reserve_prefaulted(*tensors, total);
    auto index = std::make_shared<NameTable>(total);
    const auto name_of = [&](uint32_t i) { return (*tensors)[i].name; };
    for (size_t s = 0; s < m.shards_.size(); ++s) {
        for (TensorInfo t : m.shards_[s]->tensors()) {
            t.shard = static_cast<uint32_t>(s);
            const uint32_t first =
                index->insert(t.name, static_cast<uint32_t>(tensors->size()), name_of);
            if (first != NameTable::kNone)
                throw Error(m.shards_[s]->path(), std::nullopt,
                            fmt::format("tensor '{}' is also in shard {}",
                                        detail::printable(t.name), (*tensors)[first].shard + 1));
            tensors->push_back(t);
        }
    }
    m.tensors_ = std::move(tensors);
    m.index_ = std::move(index);
    return m;
}

const TensorInfo *Model::find_tensor(std::string_view name) const {
    if (!index_) return shards_.empty() ? nullptr : shards_.front()->find_tensor(name);
    const auto &ts = *tensors_;
    const uint32_t i = index_->find(name, [&](uint32_t k) { return ts[k].name; });
    return i == detail::NameTable::kNone ? nullptr : &ts[i];
}

}  // namespace gguftool::gguf
