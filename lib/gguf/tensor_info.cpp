// Parsing and validating tensor infos and the layout of the tensor data section.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "byte_reader.hpp"
#include "file_impl.hpp"
#include "gguftool/prefault.hpp"
#include "name_table.hpp"

namespace gguftool::gguf::detail {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

std::string shape_string(const std::array<uint64_t, 4> &ne, uint32_t n_dims) {
    std::string s = "[";
    for (uint32_t j = 0; j < n_dims; ++j) s += (j ? ", " : "") + std::to_string(ne[j]);
    return s + "]";
}

// ggml's test (gguf.cpp): the element count, and every partial product, must stay below
// INT64_MAX. A tensor with a zero dimension has no elements and passes.
bool element_count_fits(const std::array<uint64_t, 4> &ne) {
    if (ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0) return true;
    const auto n0 = static_cast<int64_t>(ne[0]), n1 = static_cast<int64_t>(ne[1]);
    const auto n2 = static_cast<int64_t>(ne[2]), n3 = static_cast<int64_t>(ne[3]);
    if (kInt64Max / n1 <= n0) return false;
    if (kInt64Max / n2 <= n0 * n1) return false;
    return kInt64Max / n3 > n0 * n1 * n2;
}

// One tensor info.
TensorInfo read_tensor_info(ByteReader &r, uint32_t index, NameTable &names,
                            const std::vector<TensorInfo> &tensors) {
    TensorInfo t{};
    const uint64_t name_at = r.pos();
    t.name = r.string("tensor name");
    if (t.name.size() > kMaxTensorName)
        r.fail(name_at, fmt::format("tensor {}: name is {} bytes long, at most {} are allowed",
                                    index, t.name.size(), kMaxTensorName));
    const auto name = [&] { return printable(t.name); };  // for messages only
    const uint32_t first = names.insert(t.name, index, [&](uint32_t i) { return tensors[i].name; });
    if (first != NameTable::kNone)
        r.fail(name_at,
               fmt::format("duplicate tensor name '{}' (tensors {} and {})", name(), first, index));

    const uint64_t dims_at = r.pos();
    t.n_dims = r.u32("tensor dimension count");
    if (t.n_dims > kMaxDims)
        r.fail(dims_at, fmt::format("tensor '{}': {} dimensions, at most {} are allowed", name(),
                                    t.n_dims, kMaxDims));
    t.ne = {1, 1, 1, 1};
    for (uint32_t j = 0; j < t.n_dims; ++j) {
        const uint64_t at = r.pos();
        t.ne[j] = r.u64("tensor dimension");
        if (static_cast<int64_t>(t.ne[j]) < 0)
            r.fail(at, fmt::format("tensor '{}': dimension {} is negative ({})", name(), j,
                                   static_cast<int64_t>(t.ne[j])));
    }
    if (!element_count_fits(t.ne))
        r.fail(dims_at, fmt::format("tensor '{}': element count of shape {} overflows int64",
                                    name(), shape_string(t.ne, t.n_dims)));
    t.elements = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];

    const uint64_t type_at = r.pos();
    const uint32_t type = r.u32("tensor type");
    const TypeTraits *tt = type_traits(type);
    if (!tt) r.fail(type_at, fmt::format("tensor '{}': unknown type id {}", name(), type));
    if (tt->removed)
        r.fail(type_at, fmt::format("tensor '{}': type id {} ({}) is a removed type that ggml "
                                    "no longer supports",
                                    name(), type, tt->name));
    t.type = static_cast<GgmlType>(type);
    if (t.ne[0] % tt->block_size != 0)
        r.fail(type_at, fmt::format("tensor '{}': row of {} elements is not a multiple of the {} "
                                    "block size {}",
                                    name(), t.ne[0], tt->name, tt->block_size));
    const auto bytes = row_bytes(t.type, t.elements);
    if (!bytes)
        r.fail(type_at, fmt::format("tensor '{}': size in bytes of shape {} overflows", name(),
                                    shape_string(t.ne, t.n_dims)));
    t.bytes = *bytes;

    t.offset = r.u64("tensor data offset");
    return t;
}

// File offset of a tensor info's data-offset field, for errors: the info is name length, name,
// n_dims, the dims, type, offset.
uint64_t offset_field(const ByteReader &r, const TensorInfo &t) {
    const auto name_at = reinterpret_cast<const uint8_t *>(t.name.data()) - r.at(0);
    return uint64_t(name_at) + t.name.size() + 4 + 8 * t.n_dims + 4;
}

// Data offsets: aligned, inside the file, not overlapping. Any order and gaps are allowed.
void check_data_layout(ByteReader &r, File::Impl &f) {
    const uint64_t size = r.size();
    const uint64_t room = size - f.data_offset;
    for (size_t i = 0; i < f.tensors.size(); ++i) {
        TensorInfo &t = f.tensors[i];
        if (t.offset % f.alignment != 0)
            r.fail(offset_field(r, t),
                   fmt::format("tensor '{}': data offset {} is not a multiple of the alignment {}",
                               printable(t.name), t.offset, f.alignment));
        if (t.offset > room || t.bytes > room - t.offset)
            r.fail(offset_field(r, t),
                   fmt::format("tensor '{}': {} bytes of data at offset {} (data section at {}) "
                               "extend past the end of the file ({} bytes)",
                               printable(t.name), t.bytes, t.offset, f.data_offset, size));
        t.file_offset = f.data_offset + t.offset;
        t.data = {r.at(t.file_offset), t.bytes};
    }

    // In offset order; the usual file is in that order already and needs no sorted copy.
    const auto by_offset = [](const TensorInfo &a, const TensorInfo &b) {
        return a.offset < b.offset;
    };
    std::vector<const TensorInfo *> order;
    if (!std::is_sorted(f.tensors.begin(), f.tensors.end(), by_offset)) {
        for (const TensorInfo &t : f.tensors) order.push_back(&t);
        std::stable_sort(order.begin(), order.end(), [&](const TensorInfo *a, const TensorInfo *b) {
            return by_offset(*a, *b);
        });
    }
    const TensorInfo *prev = nullptr;
    for (size_t i = 0; i < f.tensors.size(); ++i) {
        const TensorInfo &t = order.empty() ? f.tensors[i] : *order[i];
        if (t.bytes == 0) continue;
        if (prev && t.offset < prev->offset + prev->bytes)
            r.fail(offset_field(r, t),
                   fmt::format("tensor '{}': data [{}, {}) overlaps the data of tensor '{}' "
                               "[{}, {})",
                               printable(t.name), t.offset, t.offset + t.bytes,
                               printable(prev->name), prev->offset, prev->offset + prev->bytes));
        prev = &t;
    }
}

}  // namespace

void parse_tensor_infos(ByteReader &r, File::Impl &f, uint64_t n_tensors) {
    if (n_tensors > r.remaining() / kMinTensorInfoSize)
        r.fail(8, fmt::format("tensor count {} cannot fit in the {} bytes after the metadata",
                              n_tensors, r.remaining()));
    if (n_tensors > kMaxEntries)
        r.fail(8, fmt::format("tensor count {} is more than this reader supports ({})", n_tensors,
                              kMaxEntries));
    // 112 bytes a tensor, all written below: faulted in at once (prefault.hpp).
    reserve_prefaulted(f.tensors, std::min(n_tensors, kReserveLimit));
    f.tensor_index = NameTable(n_tensors);
    for (uint32_t i = 0; i < n_tensors; ++i)
        f.tensors.push_back(read_tensor_info(r, i, f.tensor_index, f.tensors));

    // The data section starts at the next multiple of the alignment. Like ggml, a file without
    // tensors needs no padding: its data offset is the end of the tensor infos.
    const uint64_t end = r.pos();
    f.data_offset = end;
    if (n_tensors > 0) {
        const uint64_t padded = end + (f.alignment - end % f.alignment) % f.alignment;
        if (padded > r.size())
            r.fail(end, fmt::format("padding to the data section (at {}) runs past the end of "
                                    "the file ({} bytes)",
                                    padded, r.size()));
        f.data_offset = padded;
    }
    check_data_layout(r, f);
}

}  // namespace gguftool::gguf::detail
