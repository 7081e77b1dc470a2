// Split models as llama.cpp's gguf-split writes them, and writing them: splitting a model into
// shards and merging shards back into one file.
//
// The conventions (llama.cpp tools/gguf-split and llama_split_path): shard i of n (from 0) is
// named <prefix>-<i+1, 5 digits>-of-<n, 5 digits>.gguf; every shard has the keys split.no
// (uint16, i), split.count (uint16, n) and split.tensors.count (int32, the tensors of all
// shards); the first shard also has all the model's metadata, before the split keys, and the
// others nothing else. Tensors keep their order, split at shard boundaries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/gguf_model_writer.hpp"

namespace gguftool::gguf {

inline constexpr std::string_view kSplitNoKey = "split.no";
inline constexpr std::string_view kSplitCountKey = "split.count";
inline constexpr std::string_view kSplitTensorsKey = "split.tensors.count";
inline constexpr uint64_t kMaxShards = 65535;  // split.count is a uint16

// One of the three keys above.
bool is_split_key(std::string_view key);

// "-00002-of-00003.gguf" for shard 1 of 3, and the whole path: llama_split_path's names.
std::string shard_suffix(uint64_t no, uint64_t count);
std::string shard_path(std::string_view prefix, uint64_t no, uint64_t count);

// How to cut: at most `max_tensors` tensors a shard, or shard files of at most `max_bytes` bytes
// each, header and padding included (a shard holding one tensor that does not fit in that is
// the one exception). Exactly one of the two is nonzero.
struct SplitLimit {
    uint64_t max_tensors = 0;
    uint64_t max_bytes = 0;
};

// One output file: where it goes, its header and the tensors' sources (views into the model,
// which must stay open), its size, and which of the model's tensors it holds.
struct OutputPlan {
    std::string path;
    Header header;
    std::vector<TensorData> data;
    uint64_t size = 0;
    uint64_t first_tensor = 0;  // index into Model::tensors()
    bool over_limit = false;    // a single tensor bigger than max_bytes with its header
};

// The shards of `model` (one file or itself split) under `prefix`: the first shard has the
// model's metadata (without split keys) and the split keys, the others only the split keys; the
// version and byte order are the model's, the alignment the metadata's (32 in shards without
// metadata). Throws gguftool::Error if the model has no tensors or would need more than
// kMaxShards shards.
std::vector<OutputPlan> plan_split(const Model &model, const std::string &prefix,
                                   const SplitLimit &limit);

// `model`, a split model, as one file at `path`: the first shard's metadata without the split
// keys, then every tensor in shard order, laid out as gguf_header.hpp's lay_out. Throws
// gguftool::Error if `model` is not split.
OutputPlan plan_merge(const Model &model, const std::string &path);

// Progress of write_outputs: tensor bytes written so far and in all.
using OutputsProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes every planned file, each under a temporary name; only when all are written are they
// renamed into place (an earlier file of the same name is replaced only then). On any error,
// nothing new is left. With `replace` false, refuses (before writing, and again when renaming)
// if any destination exists. Throws gguftool::Error.
void write_outputs(std::vector<OutputPlan> &plans, bool replace,
                   const OutputsProgress &progress = {});

}  // namespace gguftool::gguf
