// Writing a whole GGUF model, streaming: the header (gguf_header.hpp), then each tensor's bytes,
// copied from a source file in the kernel or produced by the caller in bounded pieces, padded to
// the alignment. Memory stays bounded by small fixed buffers whatever the model size; the output
// is an OutputFile (temporary name, renamed on commit, removed on failure or signal).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/output_file.hpp"

namespace gguftool::gguf {

// Where one output tensor's bytes come from.
struct TensorData {
    uint64_t size = 0;  // bytes
    // Copied unchanged (OutputFile::copy_from): `size` bytes at `offset` of the open descriptor
    // `fd` of the file `path` (named in errors).
    int fd = -1;
    uint64_t offset = 0;
    std::string path;
    // Or, when set, produced by the caller: called once, it must write exactly `size` bytes to
    // the sink, in pieces of a size of its choosing (convert-endian: converted chunks).
    std::function<void(ByteSink &)> produce;

    // Tensor `t` of the open file `shard` (any shard of a split model), copied unchanged.
    static TensorData copy(const File &shard, const TensorInfo &t);
    static TensorData produced(uint64_t size, std::function<void(ByteSink &)> produce);
};

// Progress of write_model: tensor bytes written so far and in all.
using WriteProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes a GGUF file to `out`, a fresh OutputFile (nothing written yet; the caller commits it):
// `header` with its tensor offsets set by lay_out() from the sizes in `data` (one entry per
// header.tensors entry, same order), then every tensor's bytes, each followed by zeros up to the
// alignment. header.alignment must be what the metadata says (alignment_of(header.metadata)).
// Returns the bytes written. Throws gguftool::Error naming the output and offset (and the source
// for a copy), also if a producer writes more or fewer bytes than its size.
uint64_t write_model(OutputFile &out, Header &header, const std::vector<TensorData> &data,
                     const WriteProgress &progress = {});

// The size write_model would write, without writing: sets header's offsets the same way.
uint64_t planned_size(Header &header, const std::vector<TensorData> &data);

}  // namespace gguftool::gguf
