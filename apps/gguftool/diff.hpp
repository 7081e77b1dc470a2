// gguftool diff: what two GGUF models differ in — header, metadata, tensors — and, for tensors in
// both, by how much their decoded values differ. The pieces shared by the comparison and the text
// and JSON output.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/gguf.hpp"
#include "output.hpp"

namespace gguftool::cli::diff {

struct Options {
    std::string file_a, file_b;
    bool json = false;
    std::vector<std::string> tensor_globs;  // empty: every tensor
    bool metadata_only = false;
    unsigned threads = 0;  // 0: all cores
};

// One header field whose values differ ("version", "byte order", "alignment").
struct HeaderDifference {
    std::string field, a, b;
};

// A key in both files whose type or value differs. For arrays of the same element type, the
// first index at which they differ (the shorter length when one is a prefix of the other).
struct ChangedKey {
    const gguf::MetadataEntry *a = nullptr;
    const gguf::MetadataEntry *b = nullptr;
    bool type_changed = false;  // type, or for arrays the element type
    std::optional<uint64_t> first_different_index;
};

struct MetadataDiff {
    std::vector<const gguf::MetadataEntry *> only_a, only_b;  // in file order
    std::vector<ChangedKey> changed;                          // in A's order
    size_t identical = 0;                                     // keys equal in both
    bool same() const { return only_a.empty() && only_b.empty() && changed.empty(); }
};

// The numbers of a tensor in both files, from the decoded float values, accumulated in double.
// B is the reference: nmse = sum (a - b)^2 / sum b^2.
struct Metrics {
    double max_abs_diff = 0, rmse = 0, nmse = 0;
    std::optional<double> cosine;  // none when exactly one side is all zeros
    uint64_t mismatches = 0;       // elements whose decoded values differ
};

// The first block (of the common type) whose bytes differ; a side without that block (the
// tensors differ in length, one being a prefix of the other) has no bytes.
struct DifferentBlock {
    uint64_t index = 0;
    std::optional<std::span<const uint8_t>> a, b;
};

enum class Status { same, different, only_a, only_b };
const char *status_name(Status s);  // "same", "different", "only_a", "only_b"

struct TensorDiff {
    std::string_view name;
    Status status = Status::different;
    const gguf::TensorInfo *a = nullptr;  // null for only_b
    const gguf::TensorInfo *b = nullptr;  // null for only_a
    bool same_bytes = false;              // same type and the same bytes (not decoded)
    std::optional<Metrics> metrics;       // where both decode and have the same element count
    std::optional<DifferentBlock> block;  // same type, bytes differ
    std::string note;                     // why there are no numbers, or what else to know
};

struct Report {
    std::vector<HeaderDifference> header;
    MetadataDiff metadata;
    bool tensors_compared = false;    // false with --metadata-only
    bool tensor_subset = false;       // --tensor chose some
    std::vector<TensorDiff> tensors;  // A's order, then those only in B in B's order
    bool identical() const;
};

std::vector<HeaderDifference> compare_headers(const gguf::Model &a, const gguf::Model &b);
MetadataDiff compare_metadata(const gguf::File &a, const gguf::File &b);
// Whether a key is left out of the comparison: split.no, split.count and split.tensors.count
// say how a model is cut into shards, not what it is.
bool is_split_key(std::string_view key);

// Tensors of both models whose names match the globs (all when there are none), one at a time.
std::vector<TensorDiff> compare_tensors(const gguf::Model &a, const gguf::Model &b,
                                        const Options &opt);

void write_text(Out &out, const gguf::Model &a, const gguf::Model &b, const Report &r);
void write_json(Out &out, const gguf::Model &a, const gguf::Model &b, const Report &r);

}  // namespace gguftool::cli::diff
