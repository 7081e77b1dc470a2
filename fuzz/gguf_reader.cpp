// Fuzz target: the GGUF reader. Any bytes must give a validated File or a gguftool::Error; on a
// valid file every metadata value and every tensor's first values are read back, so anything the
// validation missed shows up as a sanitizer report.
#include <algorithm>
#include <vector>

#include "fuzz_support.hpp"
#include "gguftool/error.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/quant.hpp"

using namespace gguftool;

namespace {

uint64_t visit(const gguf::Value &v) {
    using gguf::ValueType;
    switch (v.type()) {
        case ValueType::string:
            return v.as_string().size();
        case ValueType::array: {
            // Random access to the last element, then a walk over all (visiting each once: nested
            // arrays can be 64 deep).
            uint64_t sum = v.array_size();
            if (v.array_size() > 0) sum += v.element(v.array_size() - 1).byte_size();
            v.for_each_element([&](const gguf::Value &e) { sum += visit(e); });
            return sum;
        }
        case ValueType::bool_:
            return v.as_bool();
        case ValueType::float32:
        case ValueType::float64:
            return v.as_double() == 0;
        case ValueType::int8:
        case ValueType::int16:
        case ValueType::int32:
        case ValueType::int64:
            return uint64_t(v.as_int());
        default:
            return v.as_uint();
    }
}

// Decodes up to one row's worth (at most 4096 values) of each tensor from the mapping.
void decode_heads(const gguf::File &file) {
    std::vector<float> out;
    for (const gguf::TensorInfo &t : file.tensors()) {
        const uint64_t block = traits(t.type).block_size;
        if (t.elements == 0) continue;
        const uint64_t n = std::min<uint64_t>(t.ne[0], 4096) / block * block;
        if (n == 0) continue;
        out.resize(n);
        try {
            quant::decode_f32(t.type, t.data.first(*row_bytes(t.type, n)), n, out.data(), 1);
        } catch (const Error &) {
            // Formats without a decoder (none today) may refuse; nothing else may throw.
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fuzz::MemoryFile file;
    const std::string &path = file.write(data, size);
    try {
        auto f = gguf::File::open(path);
        volatile uint64_t sink = f->data_offset() + f->alignment();
        for (const gguf::MetadataEntry &e : f->metadata())
            sink = sink + e.key.size() + visit(e.value);
        for (const gguf::TensorInfo &t : f->tensors()) {
            if (t.file_offset + t.bytes > f->file_size() || t.data.size() != t.bytes) std::abort();
            sink = sink + t.name.size();
        }
        decode_heads(*f);
    } catch (const Error &) {
    }
    return 0;
}
