// GGUF files rewritten for tests: metadata and tensor infos edited, tensor bytes copied unless the
// edit replaces them (gguf::write_model, written whole or not at all).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/output_file.hpp"

namespace gguftool::testkit {

// `in` rewritten to `out` by `edit`.
inline void rewrite(const std::string &in, const std::string &out,
                    const std::function<void(gguf::Header &, std::vector<gguf::TensorData> &,
                                             const gguf::File &)> &edit) {
    const auto file = gguf::File::open(in);
    gguf::Header h;
    h.alignment = file->alignment();
    for (const gguf::MetadataEntry &e : file->metadata())
        h.metadata.push_back(gguf::MetadataItem::of(e));
    std::vector<gguf::TensorData> data;
    for (const gguf::TensorInfo &t : file->tensors()) {
        h.tensors.push_back({std::string(t.name), uint32_t(t.type),
                             std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), 0});
        data.push_back(gguf::TensorData::copy(*file, t));
    }
    edit(h, data, *file);
    OutputFile f(out);
    gguf::write_model(f, h, data);
    f.commit();
    f.keep();
}

// `in` with the metadata key `key` removed (or, with `value`, set).
inline void edit_key(const std::string &in, const std::string &out, const std::string &key,
                     std::optional<gguf::MetaValue> value = std::nullopt) {
    rewrite(in, out, [&](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
        std::erase_if(h.metadata, [&](const gguf::MetadataItem &m) { return m.key == key; });
        if (value) h.metadata.push_back({key, *value});
    });
}

// `in` with its architecture renamed to `to` (general.architecture and every "<from>." key).
inline void rename_arch(const std::string &in, const std::string &out, const std::string &from,
                        const std::string &to) {
    rewrite(in, out, [&](gguf::Header &h, std::vector<gguf::TensorData> &, const gguf::File &) {
        for (gguf::MetadataItem &m : h.metadata) {
            if (m.key == "general.architecture")
                m.value = gguf::MetaValue::str(to);
            else if (m.key.rfind(from + ".", 0) == 0)
                m.key = to + "." + m.key.substr(from.size() + 1);
        }
    });
}

// `in` without the tensor `name`.
inline void drop_tensor(const std::string &in, const std::string &out, const std::string &name) {
    rewrite(in, out, [&](gguf::Header &h, std::vector<gguf::TensorData> &data, const gguf::File &) {
        for (size_t i = 0; i < h.tensors.size(); ++i)
            if (h.tensors[i].name == name) {
                h.tensors.erase(h.tensors.begin() + long(i));
                data.erase(data.begin() + long(i));
                return;
            }
    });
}

}  // namespace gguftool::testkit
