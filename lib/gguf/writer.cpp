// gguf::Writer: a whole GGUF file in memory, its header by the shared encoder (header.cpp).
#include <algorithm>

#include "gguftool/gguf_writer.hpp"
#include "gguftool/output_file.hpp"

namespace gguftool::gguf {

Writer &Writer::add(std::string key, MetaValue value) {
    return add(MetadataItem{std::move(key), std::move(value)});
}

Writer &Writer::add(MetadataItem item) {
    metadata_.push_back(std::move(item));
    return *this;
}

Writer &Writer::set_alignment(uint64_t alignment) {
    alignment_ = alignment;
    return *this;
}

Writer &Writer::add_tensor(std::string name, GgmlType type, std::vector<uint64_t> dims,
                           std::vector<uint8_t> data, std::optional<uint64_t> offset) {
    return add_tensor(std::move(name), static_cast<uint32_t>(type), std::move(dims),
                      std::move(data), offset);
}

Writer &Writer::add_tensor(std::string name, uint32_t type_id, std::vector<uint64_t> dims,
                           std::vector<uint8_t> data, std::optional<uint64_t> offset) {
    tensors_.push_back({std::move(name), type_id, std::move(dims), std::move(data), offset});
    return *this;
}

uint64_t Writer::alignment() const {
    return alignment_ ? *alignment_ : alignment_of(metadata_);
}

std::vector<uint8_t> Writer::to_bytes() const {
    Header h{version_, order_, alignment(), metadata_, {}};
    if (h.alignment == 0) throw Error("GGUF writer: alignment is 0");

    // Place the data: explicit offsets as given, the rest after the furthest data so far (the
    // layout rule of lay_out() when no offset is given).
    uint64_t data_size = 0;
    for (const Tensor &t : tensors_) {
        const uint64_t offset = t.offset.value_or(align_up(data_size, h.alignment));
        h.tensors.push_back({t.name, t.type, t.dims, offset});
        data_size = std::max(data_size, offset + t.data.size());
    }
    data_size = align_up(data_size, h.alignment);

    std::vector<uint8_t> out = encode_header(h);
    const size_t data_offset = out.size();
    out.resize(data_offset + data_size, 0);
    for (size_t i = 0; i < tensors_.size(); ++i)
        std::copy(tensors_[i].data.begin(), tensors_[i].data.end(),
                  out.begin() + static_cast<ptrdiff_t>(data_offset + h.tensors[i].offset));
    return out;
}

void Writer::write(const std::string &path) const {
    const std::vector<uint8_t> bytes = to_bytes();
    OutputFile out(path);
    out.write(bytes.data(), bytes.size());
    out.commit();
    out.keep();
}

}  // namespace gguftool::gguf
