// The state behind gguf::File (internal to lib/gguf).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/mapped_file.hpp"
#include "name_table.hpp"

namespace gguftool::gguf {

struct File::Impl {
    explicit Impl(const std::string &p) : path(p), map(p) {}

    std::string path;
    MappedFile map;
    uint32_t version = 0;
    ByteOrder order = ByteOrder::little;
    uint64_t alignment = 32;
    uint64_t data_offset = 0;
    std::vector<MetadataEntry> metadata;
    detail::NameTable key_index;  // key -> index in metadata
    std::vector<TensorInfo> tensors;
    detail::NameTable tensor_index;  // tensor name -> index in tensors
};

namespace detail {

// Entries are indexed by uint32_t; counts up to this are supported (files of 100 GB and more
// of tensor infos alone would be needed to reach it).
inline constexpr uint64_t kMaxEntries = NameTable::kNone - 1;

// Upper bound for reserve() from a count that was only checked against the file size: bigger
// vectors grow as entries are actually parsed.
inline constexpr uint64_t kReserveLimit = 1 << 16;

inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxArrayNesting = 64;               // arrays of arrays, levels
inline constexpr uint32_t kMaxDims = 4;                        // GGML_MAX_DIMS
inline constexpr uint64_t kMaxTensorName = 64;                 // bytes, per the GGUF specification
inline constexpr uint64_t kMinTensorInfoSize = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset

class ByteReader;

// Header and metadata: sets version, order, metadata, key_index and alignment; leaves `r` at the
// first tensor info. Returns the tensor count from the header.
uint64_t parse_header_and_metadata(ByteReader &r, File::Impl &f);

// Tensor infos and the data section: sets tensors, tensor_index and data_offset, checks the tensor
// data layout.
void parse_tensor_infos(ByteReader &r, File::Impl &f, uint64_t n_tensors);

}  // namespace detail
}  // namespace gguftool::gguf
