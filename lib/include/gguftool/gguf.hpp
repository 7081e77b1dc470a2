// Reading GGUF files: memory-mapped, validated, parsed lazily.
//
// gguf::File is one file (one shard); gguf::Model joins the shards of a split model
// (model-00001-of-00003.gguf ...) into one list of tensors. Strings and arrays are views into the
// mapping: nothing is copied until a caller asks for it. Every structural problem is reported as a
// gguftool::Error naming the file, the byte offset and what is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/error.hpp"
#include "gguftool/types.hpp"

namespace gguftool::gguf {

namespace detail {
class NameTable;
}

// GGUF metadata value types (the GGUF specification's gguf_metadata_value_type).
enum class ValueType : uint32_t {
    uint8 = 0,
    int8 = 1,
    uint16 = 2,
    int16 = 3,
    uint32 = 4,
    int32 = 5,
    float32 = 6,
    bool_ = 7,
    string = 8,
    array = 9,
    uint64 = 10,
    int64 = 11,
    float64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// "uint8", "int8", ..., "bool", "string", "array", "uint64", "int64", "float64".
const char *value_type_name(ValueType t);
// The type value_type_name calls `name`; nullopt for any other name.
std::optional<ValueType> value_type_from_name(std::string_view name);

enum class ByteOrder { little, big };

// The names of a byte order, the one place they are spelled: "little" / "big" (JSON, and
// convert-endian's --to) and "little-endian" / "big-endian" (text and messages).
constexpr const char *byte_order_word(ByteOrder o) {
    return o == ByteOrder::little ? "little" : "big";
}
constexpr const char *byte_order_name(ByteOrder o) {
    return o == ByteOrder::little ? "little-endian" : "big-endian";
}

// A metadata value: a typed view into the mapped file. Scalars are decoded on access (byte order
// handled); strings are string_views into the mapping; arrays are walked lazily.
class Value {
public:
    ValueType type() const { return type_; }

    // Scalars. Each throws gguftool::Error if the value is not of a compatible type.
    uint64_t as_uint() const;            // any unsigned or non-negative signed integer, or bool
    int64_t as_int() const;              // any integer type that fits
    double as_double() const;            // any numeric type
    bool as_bool() const;                // bool only
    std::string_view as_string() const;  // string only

    // Arrays.
    ValueType array_type() const;  // element type (may itself be array)
    uint64_t array_size() const;
    // Element i. O(1) for fixed-size element types; for strings and nested arrays it walks from
    // the start (use for_each_element to visit all elements in O(n)).
    Value element(uint64_t i) const;
    template <class F>
    void for_each_element(F &&f) const {
        const uint8_t *p = data_;
        for (uint64_t i = 0; i < count_; ++i) {
            Value v = element_at(p);
            p += v.byte_size();
            f(v);
        }
    }

    // Bytes the encoded value occupies in the file (after its type tag).
    uint64_t byte_size() const { return size_; }
    // Raw little/big-endian bytes of a scalar, or of an array's elements (after type and count).
    const uint8_t *data() const { return data_; }
    ByteOrder byte_order() const { return order_; }

    // Constructed by the reader only (after validation).
    Value(ValueType type, const uint8_t *data, uint64_t size, ByteOrder order,
          ValueType array_type = ValueType::uint8, uint64_t count = 0)
        : type_(type),
          array_type_(array_type),
          data_(data),
          size_(size),
          count_(count),
          order_(order) {}

private:
    Value element_at(const uint8_t *p) const;

    ValueType type_;
    ValueType array_type_;  // arrays only
    const uint8_t *data_;   // scalar bytes / string bytes / first array element
    uint64_t size_;         // bytes of the whole encoded value
    uint64_t count_;        // arrays: element count; strings: length
    ByteOrder order_;
};

struct MetadataEntry {
    std::string_view key;
    Value value;
    uint64_t offset;  // file offset of the key's length field
};

struct TensorInfo {
    std::string_view name;
    GgmlType type;
    uint32_t n_dims;
    std::array<uint64_t, 4> ne;  // ggml order: ne[0] is the fastest-varying; unused dims are 1
    uint64_t offset;             // relative to the data section, as stored
    uint64_t file_offset;        // absolute position of the first byte in its shard
    uint64_t elements;
    uint64_t bytes;
    uint32_t shard;                 // index into Model::shards() (0 for a single file)
    std::span<const uint8_t> data;  // the tensor's bytes in the mapping
};

// One GGUF file, mapped and validated on open.
class File {
public:
    // Maps and parses `path`, checking every count, length and offset before use: magic,
    // version (2 or 3; byte order taken from it as gguf-py does), metadata (all 13 types, arrays
    // nested up to 64 levels, unique non-empty keys, general.alignment a uint32 power of two),
    // tensor infos (unique names of at most 64 bytes, at most 4 dims, element count below
    // INT64_MAX, known non-removed type, rows a whole number of blocks) and the data layout
    // (offsets aligned, inside the file, not overlapping; any order). Throws gguftool::Error.
    static std::shared_ptr<const File> open(const std::string &path);

    const std::string &path() const;
    uint32_t version() const;
    ByteOrder byte_order() const;
    uint64_t alignment() const;
    // Start of the data section: the end of the tensor infos rounded up to the alignment. As in
    // ggml, a file without tensors has no padding: its data offset is the end of the infos.
    uint64_t data_offset() const;
    uint64_t file_size() const;
    std::span<const uint8_t> bytes() const;  // the whole mapping
    // The read-only descriptor of the mapped file, open as long as this File: writers copy
    // tensor bytes from it (OutputFile::copy_from) rather than through the mapping.
    int fd() const;

    const std::vector<MetadataEntry> &metadata() const;
    const MetadataEntry *find(std::string_view key) const;       // nullptr when absent
    const std::vector<TensorInfo> &tensors() const;              // shard field is 0
    const TensorInfo *find_tensor(std::string_view name) const;  // nullptr when absent

    ~File();
    struct Impl;

private:
    explicit File(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Whether a tensor name matches any of the shell globs (fnmatch); an empty list matches every
// name. The --tensor selection of dump, to-onnx and verify.
bool name_matches(std::string_view name, const std::vector<std::string> &globs);

// A model: one file, or all shards of a split model presented as one.
class Model {
public:
    // Opens `path`; if it is a shard of a split model (split.count > 1), opens every shard
    // (named <prefix>-NNNNN-of-MMMMM.gguf beside it, as llama.cpp's llama_split_path names them),
    // checks they belong together (same split.count and split.tensors.count, split.no equal to
    // the shard's number, total tensor count equal to split.tensors.count, no tensor name in two
    // shards), and joins the tensors. Throws gguftool::Error on any problem.
    static Model open(const std::string &path);

    const std::vector<std::shared_ptr<const File>> &shards() const { return shards_; }
    const File &first() const { return *shards_.front(); }
    const std::vector<TensorInfo> &tensors() const { return *tensors_; }  // file order, by shard
    const TensorInfo *find_tensor(std::string_view name) const;

private:
    std::vector<std::shared_ptr<const File>> shards_;
    // A single file's own list (no copy), or the shards' lists joined.
    std::shared_ptr<const std::vector<TensorInfo>> tensors_;
    std::shared_ptr<const detail::NameTable> index_;  // split models: name -> index in tensors_
};

}  // namespace gguftool::gguf
