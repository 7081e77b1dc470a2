// Writing small GGUF files in memory: any version, byte order, metadata and tensor layout.
//
// Used by tests, tools and generators. The writer does not validate: it writes what it is given
// (duplicate keys, odd shapes, overlapping offsets) so tests can build broken files too. Its
// header is gguf_header.hpp's encoding; writers of whole models stream instead
// (gguf_model_writer.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/types.hpp"

namespace gguftool::gguf {

class Writer {
public:
    explicit Writer(uint32_t version = 3, ByteOrder order = ByteOrder::little)
        : version_(version), order_(order) {}

    // Metadata, in the order added.
    Writer &add(std::string key, MetaValue value);
    Writer &add(MetadataItem item);
    // The alignment used to lay out tensor data. Default: the value of a uint32 general.alignment
    // key if one was added, else 32. Does not add the key. Any nonzero value works (3 too).
    Writer &set_alignment(uint64_t alignment);

    // A tensor: type id (may be unknown or removed, for tests), dims in ggml order (ne0 first; any
    // count), and its bytes, already in the file's byte order. Data is placed at `offset`
    // (relative to the data section) when given, else after the furthest data so far, aligned.
    Writer &add_tensor(std::string name, GgmlType type, std::vector<uint64_t> dims,
                       std::vector<uint8_t> data, std::optional<uint64_t> offset = std::nullopt);
    Writer &add_tensor(std::string name, uint32_t type_id, std::vector<uint64_t> dims,
                       std::vector<uint8_t> data, std::optional<uint64_t> offset = std::nullopt);

    // The whole file. Throws gguftool::Error if the alignment is 0.
    std::vector<uint8_t> to_bytes() const;
    // Writes to a temporary file beside `path` and renames it into place: on any error nothing
    // is left behind. Throws gguftool::Error.
    void write(const std::string &path) const;

private:
    struct Tensor {
        std::string name;
        uint32_t type;
        std::vector<uint64_t> dims;
        std::vector<uint8_t> data;
        std::optional<uint64_t> offset;
    };
    uint64_t alignment() const;

    uint32_t version_;
    ByteOrder order_;
    std::optional<uint64_t> alignment_;
    std::vector<MetadataItem> metadata_;
    std::vector<Tensor> tensors_;
};

}  // namespace gguftool::gguf
