// gguf::File: opening (map, parse, validate) and accessors.
#include "byte_reader.hpp"
#include "file_impl.hpp"

namespace gguftool::gguf {

std::shared_ptr<const File> File::open(const std::string &path) {
    auto impl = std::make_unique<Impl>(path);
    detail::ByteReader r(impl->path, impl->map.data(), impl->map.size());
    const uint64_t n_tensors = detail::parse_header_and_metadata(r, *impl);
    detail::parse_tensor_infos(r, *impl, n_tensors);
    return std::shared_ptr<const File>(new File(std::move(impl)));
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::~File() = default;

const std::string &File::path() const {
    return impl_->path;
}
uint32_t File::version() const {
    return impl_->version;
}
ByteOrder File::byte_order() const {
    return impl_->order;
}
uint64_t File::alignment() const {
    return impl_->alignment;
}
uint64_t File::data_offset() const {
    return impl_->data_offset;
}
uint64_t File::file_size() const {
    return impl_->map.size();
}
std::span<const uint8_t> File::bytes() const {
    return {impl_->map.data(), impl_->map.size()};
}
int File::fd() const {
    return impl_->map.fd();
}
const std::vector<MetadataEntry> &File::metadata() const {
    return impl_->metadata;
}
const std::vector<TensorInfo> &File::tensors() const {
    return impl_->tensors;
}

const MetadataEntry *File::find(std::string_view key) const {
    const auto &md = impl_->metadata;
    const uint32_t i = impl_->key_index.find(key, [&](uint32_t k) { return md[k].key; });
    return i == detail::NameTable::kNone ? nullptr : &md[i];
}

const TensorInfo *File::find_tensor(std::string_view name) const {
    const auto &ts = impl_->tensors;
    const uint32_t i = impl_->tensor_index.find(name, [&](uint32_t k) { return ts[k].name; });
    return i == detail::NameTable::kNone ? nullptr : &ts[i];
}

}  // namespace gguftool::gguf
