// The corpus of broken GGUF files (testdata/broken) and of valid edge cases (testdata/valid-edge).
// Every file is built byte by byte with RawGguf. For each broken file the line `gguftool dump`
// must print is written here by hand, from the rule the file breaks and the offset of the field
// that breaks it (recorded while building the file, never taken from the reader).
//
// Used by tools/make_broken_files.cpp, which writes the files, and by
// tests/cli/broken_corpus_test.cpp, which checks that the committed files are what this builds.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "files.hpp"
#include "raw_gguf.hpp"

namespace gguftool::testkit {

// What llama.cpp's reader (gguf_init_from_file, metadata only) does with a broken file.
enum class LlamaVerdict { rejects, accepts };

struct BrokenFile {
    std::string name;  // file name in testdata/broken
    std::string why;   // one line of explanation for the manifest
    std::vector<uint8_t> bytes;
    std::string error;  // the line on stderr; {file}: the path given, {dir}: its directory
    LlamaVerdict llama = LlamaVerdict::rejects;
};

struct ValidFile {
    std::string name;  // file name in testdata/valid-edge
    std::vector<uint8_t> bytes;
};

namespace detail {

// GGUF metadata value type ids (GGUF specification).
constexpr uint32_t kU8 = 0, kU16 = 2, kU32 = 4, kI32 = 5, kString = 8, kArray = 9, kU64 = 10;
// ggml tensor type ids (ggml.h).
constexpr uint32_t kF32 = 0, kQ4_0 = 2, kF64 = 28;
constexpr uint64_t k2To63 = 1ull << 63;
constexpr uint64_t kMax64 = ~0ull;

// The CLI prints a gguftool::Error as "gguftool: <file>: offset <N>: <problem>".
inline std::string at(uint64_t offset, const std::string &problem) {
    return fmt::format("gguftool: {{file}}: offset {}: {}", offset, problem);
}
inline std::string cut_short(uint64_t offset, const char *what, uint64_t needed, uint64_t remain) {
    return at(offset, fmt::format("unexpected end of file reading {} ({} bytes needed, {} remain)",
                                  what, needed, remain));
}
inline std::string too_long(uint64_t offset, const char *what, uint64_t length, uint64_t remain) {
    return at(offset, fmt::format("{} has length {}, past the end of the file ({} bytes remain)",
                                  what, length, remain));
}
inline std::string past_end(uint64_t field, const std::string &tensor, uint64_t bytes,
                            uint64_t offset, uint64_t data, uint64_t size) {
    return at(field, fmt::format("tensor '{}': {} bytes of data at offset {} (data section at {}) "
                                 "extend past the end of the file ({} bytes)",
                                 tensor, bytes, offset, data, size));
}

inline std::vector<uint8_t> first(const std::vector<uint8_t> &bytes, uint64_t n) {
    return {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)};
}

// --- truncations of one small valid file, at every section boundary ---

// Three keys (a string, a uint32, an array of strings) and one f32 tensor of shape [4, 2], with
// the offsets of the fields the cuts fall in.
struct Sample {
    RawGguf raw;
    uint64_t arch_value, count_value, tokens, tokens_type, tokens_array, tokens_length,
        tokens_first, tokens_last, infos, dims, type, offset_field, infos_end, data;
};

inline Sample sample() {
    Sample s;
    RawGguf &r = s.raw;
    r.header(3, 1, 3);
    r.str("general.architecture").u32(kString);
    s.arch_value = r.pos();
    r.str("llama");
    r.str("llama.block_count").u32(kU32);
    s.count_value = r.pos();
    r.u32(2);
    s.tokens = r.pos();
    r.str("tokenizer.ggml.tokens");
    s.tokens_type = r.pos();
    r.u32(kArray);
    s.tokens_array = r.pos();
    r.u32(kString);
    s.tokens_length = r.pos();
    r.u64(3);
    s.tokens_first = r.pos();
    r.str("<s>").str("a");
    s.tokens_last = r.pos();
    r.str("");
    s.infos = r.pos();
    r.str("token_embd.weight").u32(2);
    s.dims = r.pos();
    r.u64(4).u64(2);
    s.type = r.pos();
    r.u32(kF32);
    s.offset_field = r.pos();
    r.u64(0);
    s.infos_end = r.pos();
    r.pad_to(32);
    s.data = r.pos();
    r.zeros(32);
    return s;
}

inline void add_truncations(std::vector<BrokenFile> &out) {
    Sample s = sample();
    const std::vector<uint8_t> &b = s.raw.bytes();
    const auto cut = [&](const char *name, const char *why, uint64_t n, std::string error,
                         LlamaVerdict llama = LlamaVerdict::rejects) {
        out.push_back({name, why, first(b, n), std::move(error), llama});
    };
    cut("truncated-empty", "an empty file", 0, cut_short(0, "magic", 4, 0));
    cut("truncated-in-magic", "2 bytes of the magic", 2, cut_short(0, "magic", 4, 2));
    cut("truncated-after-magic", "the magic only", 4, cut_short(4, "version", 4, 0));
    cut("truncated-after-version", "cut after the version", 8, cut_short(8, "tensor count", 8, 0));
    cut("truncated-after-tensor-count", "cut after the tensor count", 16,
        cut_short(16, "metadata count", 8, 0));
    cut("truncated-after-header", "the 24-byte header only: no room for its one tensor info", 24,
        at(8, "tensor count 1 cannot fit in the 0 bytes after the header"));
    cut("truncated-in-first-key",
        "cut in the first key: the counts are checked first (a tensor info takes 24 bytes or more)",
        44, at(8, "tensor count 1 cannot fit in the 20 bytes after the header"));
    cut("truncated-in-string-value", "cut in the bytes of a string value", s.arch_value + 8 + 2,
        too_long(s.arch_value, "string value", 5, 2));
    cut("truncated-in-scalar-value", "cut in a uint32 value", s.count_value + 2,
        cut_short(s.count_value, "metadata value", 4, 2));
    cut("truncated-in-key-length", "cut in the length of a key", s.tokens + 3,
        cut_short(s.tokens, "metadata key", 8, 3));
    cut("truncated-in-key", "cut in the bytes of a key", s.tokens + 8 + 10,
        too_long(s.tokens, "metadata key", 21, 10));
    cut("truncated-before-value-type", "cut between a key and its value type", s.tokens_type,
        cut_short(s.tokens_type, "metadata value type", 4, 0));
    cut("truncated-in-array-type", "cut in the element type of an array", s.tokens_array + 2,
        cut_short(s.tokens_array, "array element type", 4, 2));
    cut("truncated-in-array-length", "cut in the length of an array", s.tokens_length + 4,
        cut_short(s.tokens_length, "array length", 8, 4));
    cut("truncated-in-array-strings",
        "cut in the strings of an array: 3 strings need 24 bytes or more, 16 remain",
        s.tokens_first + 16,
        at(s.tokens_length,
           "key 'tokenizer.ggml.tokens': array of 3 string elements cannot fit "
           "in the 16 bytes that remain"));
    cut("truncated-in-last-string", "cut in the length of the last string of an array",
        s.tokens_last + 4, cut_short(s.tokens_last, "string in array", 8, 4));
    cut("truncated-after-metadata", "cut after the metadata, before the tensor infos", s.infos,
        at(8, "tensor count 1 cannot fit in the 0 bytes after the metadata"));
    cut("truncated-in-tensor-name", "cut in the bytes of a tensor name", s.infos + 24,
        too_long(s.infos, "tensor name", 17, 16));
    cut("truncated-in-tensor-dims", "cut in the second dimension of a tensor", s.dims + 12,
        cut_short(s.dims + 8, "tensor dimension", 8, 4));
    cut("truncated-in-tensor-type", "cut in the type of a tensor", s.type + 2,
        cut_short(s.type, "tensor type", 4, 2));
    cut("truncated-in-tensor-offset", "cut in the data offset of a tensor", s.offset_field + 4,
        cut_short(s.offset_field, "tensor data offset", 8, 4));
    cut("truncated-after-tensor-infos", "cut after the tensor infos, before the padding",
        s.infos_end,
        at(s.infos_end, fmt::format("padding to the data section (at {}) runs past the end of the "
                                    "file ({} bytes)",
                                    s.data, s.infos_end)));
    cut("truncated-in-padding", "cut in the padding before the data section", s.infos_end + 4,
        at(s.infos_end, fmt::format("padding to the data section (at {}) runs past the end of the "
                                    "file ({} bytes)",
                                    s.data, s.infos_end + 4)));
    cut("truncated-before-data", "cut where the data section starts (llama.cpp: no data read)",
        s.data, past_end(s.offset_field, "token_embd.weight", 32, 0, s.data, s.data),
        LlamaVerdict::accepts);
    cut("truncated-in-data", "cut in the tensor data (llama.cpp: no data read)", s.data + 13,
        past_end(s.offset_field, "token_embd.weight", 32, 0, s.data, s.data + 13),
        LlamaVerdict::accepts);
}

// --- header ---

inline void add_header(std::vector<BrokenFile> &out) {
    const auto magic = [](const char m[4]) {
        RawGguf r;
        r.raw(m, 4).u32(3).u64(0).u64(0);
        return r.bytes();
    };
    out.push_back({"wrong-magic", "magic GGUX", magic("GGUX"),
                   at(0, "not a GGUF file: magic is 'GGUX', expected 'GGUF'")});
    out.push_back({"wrong-magic-elf", "an ELF file: non-printable bytes are escaped",
                   magic("\x7f"
                         "ELF"),
                   at(0, "not a GGUF file: magic is '\\x7fELF', expected 'GGUF'")});
    const auto version = [&](const char *name, const char *why, uint32_t v, bool big_endian) {
        out.push_back(
            {name, why, RawGguf(big_endian).header(v, 0, 0).bytes(),
             at(4,
                fmt::format("unsupported GGUF version {}: only versions 2 and 3 can be read", v))});
    };
    version("version-0", "version 0", 0, false);
    version("version-1", "GGUF version 1 (no longer supported)", 1, false);
    version("version-4", "a future version", 4, false);
    version("version-4-big-endian", "a future version in a big-endian file", 4, true);
    version("version-max", "version 2^32 - 1", 0xffffffffu, false);
}

// --- counts and lengths beyond the file ---

inline void add_counts(std::vector<BrokenFile> &out) {
    out.push_back({"tensor-count-2-63", "tensor count 2^63",
                   RawGguf().header(3, k2To63, 0).zeros(64).bytes(),
                   at(8,
                      "tensor count 9223372036854775808 cannot fit in the 64 bytes after the "
                      "header")});
    out.push_back({"tensor-count-max", "tensor count 2^64 - 1",
                   RawGguf().header(3, kMax64, 0).zeros(64).bytes(),
                   at(8,
                      "tensor count 18446744073709551615 cannot fit in the 64 bytes after the "
                      "header")});
    out.push_back({"metadata-count-2-63", "metadata count 2^63",
                   RawGguf().header(3, 0, k2To63).zeros(64).bytes(),
                   at(16,
                      "metadata count 9223372036854775808 cannot fit in the 64 bytes after "
                      "the header")});
    out.push_back({"metadata-count-max", "metadata count 2^64 - 1",
                   RawGguf().header(3, 0, kMax64).zeros(64).bytes(),
                   at(16,
                      "metadata count 18446744073709551615 cannot fit in the 64 bytes after "
                      "the header")});
    {
        RawGguf r;
        r.header(3, 2, 1).str("k").u32(kU64).u64(1);
        const uint64_t metadata_end = r.pos();
        r.tensor("a", {8}, kF32, 0).zeros(8);
        out.push_back({"tensor-count-past-infos",
                       "2 tensors: room for them after the header, not after the metadata",
                       r.bytes(),
                       at(8, fmt::format("tensor count 2 cannot fit in the {} bytes after the "
                                         "metadata",
                                         r.pos() - metadata_end))});
    }

    const auto key_length = [&](const char *name, const char *why, uint64_t length) {
        RawGguf r;
        r.header(3, 0, 1).u64(length).raw("abc", 3).zeros(20);
        out.push_back({name, why, r.bytes(), too_long(24, "metadata key", length, 23)});
    };
    key_length("key-length-past-end", "a key of length 1000 in a 55-byte file", 1000);
    key_length("key-length-2-63", "a key of length 2^63", k2To63);
    key_length("key-length-max", "a key of length 2^64 - 1", kMax64);

    const auto string_length = [&](const char *name, const char *why, uint64_t length) {
        RawGguf r;
        r.header(3, 0, 1).str("k").u32(kString);
        const uint64_t value = r.pos();
        r.u64(length).raw("xyz", 3);
        out.push_back({name, why, r.bytes(), too_long(value, "string value", length, 3)});
    };
    string_length("string-length-past-end", "a string value of length 100", 100);
    string_length("string-length-2-63", "a string value of length 2^63", k2To63);
    string_length("string-length-max", "a string value of length 2^64 - 1", kMax64);
    {
        RawGguf r;
        r.header(3, 0, 1).str("tokens").u32(kArray).u32(kString).u64(3).str("a");
        const uint64_t second = r.pos();
        r.u64(500).raw("bc", 2).str("d");
        out.push_back({"string-in-array-past-end", "the second of 3 strings has length 500",
                       r.bytes(), too_long(second, "string in array", 500, 11)});
    }
    {
        RawGguf r;
        r.header(3, 1, 0).u64(k2To63).zeros(32);
        out.push_back({"tensor-name-length-2-63", "a tensor name of length 2^63", r.bytes(),
                       too_long(24, "tensor name", k2To63, 32)});
    }

    const auto array_length = [&](const char *name, const char *why, uint32_t type,
                                  const char *type_name, uint64_t length) {
        RawGguf r;
        r.header(3, 0, 1).str("k").u32(kArray).u32(type);
        const uint64_t field = r.pos();
        r.u64(length).u32(1).u32(2);
        out.push_back({name, why, r.bytes(),
                       at(field, fmt::format("key 'k': array of {} {} elements cannot fit in the 8 "
                                             "bytes that remain",
                                             length, type_name))});
    };
    array_length("array-length-2-63", "an array of 2^63 uint32", kU32, "uint32", k2To63);
    array_length("array-length-max", "an array of 2^64 - 1 uint8", kU8, "uint8", kMax64);
    array_length("array-of-strings-length-2-63", "an array of 2^63 strings", kString, "string",
                 k2To63);
    array_length("array-of-arrays-length-2-63", "an array of 2^63 arrays", kArray, "array", k2To63);
}

// --- metadata: nesting, duplicates, types, alignment ---

// Arrays nested `levels` deep under key "deep": every level but the innermost holds one array.
inline BrokenFile nested(const char *name, const char *why, uint32_t levels) {
    RawGguf r;
    r.header(3, 0, 1).str("deep").u32(kArray);
    const uint64_t value = r.pos();
    for (uint32_t level = 1; level < levels; ++level) r.u32(kArray).u64(1);
    r.u32(kU8).u64(0);
    // Each level takes 12 bytes (element type, length); level 65 is the first one refused.
    return {name, why, r.bytes(),
            at(value + 12 * 64, "key 'deep': arrays nested more than 64 levels deep")};
}

inline void add_metadata(std::vector<BrokenFile> &out) {
    out.push_back(nested("arrays-nested-1000-deep", "arrays of arrays 1000 levels deep", 1000));
    out.push_back(nested("arrays-nested-65-deep", "one level more than allowed", 65));
    {
        RawGguf r;
        r.header(3, 0, 2).str("a.b").u32(kU8).u8(1);
        const uint64_t second = r.pos();
        r.str("a.b").u32(kU32).u32(2);
        out.push_back({"duplicate-key", "key a.b twice", r.bytes(),
                       at(second, "duplicate key 'a.b' (first at offset 24)")});
    }
    out.push_back({"empty-key", "a key of length 0",
                   RawGguf().header(3, 0, 1).str("").u32(kU8).u8(1).bytes(),
                   at(24, "metadata key 0 is empty")});

    const auto value_type = [&](const char *name, const char *why, uint32_t type) {
        RawGguf r;
        r.header(3, 0, 1).str("k");
        const uint64_t field = r.pos();
        r.u32(type).u64(0);
        out.push_back({name, why, r.bytes(),
                       at(field, fmt::format("key 'k' has invalid value type {}", type))});
    };
    value_type("value-type-13", "value type 13 (the last valid one is 12, float64)", 13);
    value_type("value-type-max", "value type 2^32 - 1", 0xffffffffu);
    const auto element_type = [&](const char *name, const char *why, uint32_t type) {
        RawGguf r;
        r.header(3, 0, 1).str("k").u32(kArray);
        const uint64_t field = r.pos();
        r.u32(type).u64(0);
        out.push_back({name, why, r.bytes(),
                       at(field, fmt::format("key 'k': invalid array element type {}", type))});
    };
    element_type("array-element-type-13", "an array of elements of type 13", 13);
    element_type("array-element-type-max", "an array of elements of type 2^32 - 1", 0xffffffffu);

    // general.alignment, in a file with one tensor.
    const auto alignment = [&](const char *name, const char *why, uint32_t type, uint64_t value,
                               const std::string &problem) {
        RawGguf r;
        r.header(3, 1, 1).str("general.alignment").u32(type);
        type == kU32 ? r.u32(static_cast<uint32_t>(value)) : r.u64(value);
        r.tensor("w", {8}, kF32, 0).pad_to(32).zeros(64);
        out.push_back({name, why, r.bytes(), at(24, problem)});
    };
    alignment("alignment-0", "general.alignment 0", kU32, 0,
              "general.alignment 0 is not a power of two");
    alignment("alignment-3", "general.alignment 3", kU32, 3,
              "general.alignment 3 is not a power of two");
    alignment("alignment-uint64", "general.alignment stored as a uint64", kU64, 32,
              "general.alignment must be of type uint32, not uint64");
}

// --- tensor infos ---

// One tensor 'w' with `dims` (ggml order), then padding and 64 zero bytes. The info starts at 24:
// name at 24, dimension count at 33, dimensions from 37, then type and data offset.
inline std::vector<uint8_t> one_tensor(const std::vector<uint64_t> &dims, uint32_t type,
                                       uint64_t offset = 0) {
    RawGguf r;
    r.header(3, 1, 0).tensor("w", dims, type, offset).pad_to(32).zeros(64);
    return r.bytes();
}
constexpr uint64_t kDimCount = 33;
inline uint64_t dim_at(uint32_t j) {
    return 37 + 8 * uint64_t{j};
}
inline uint64_t type_at(size_t n_dims) {
    return 37 + 8 * uint64_t{n_dims};
}

inline void add_tensor_infos(std::vector<BrokenFile> &out) {
    {
        RawGguf r;
        r.header(3, 1, 0).tensor(std::string(65, 'n'), {1}, kF32, 0).pad_to(32).zeros(32);
        out.push_back({"tensor-name-too-long", "a tensor name of 65 bytes", r.bytes(),
                       at(24, "tensor 0: name is 65 bytes long, at most 64 are allowed")});
    }
    {
        RawGguf r;
        r.header(3, 2, 0).tensor("w", {8}, kF32, 0);
        const uint64_t second = r.pos();
        r.tensor("w", {8}, kF32, 32).pad_to(32).zeros(64);
        out.push_back({"duplicate-tensor-name", "two tensors named w", r.bytes(),
                       at(second, "duplicate tensor name 'w' (tensors 0 and 1)")});
    }
    out.push_back({"five-dimensions", "a tensor with 5 dimensions",
                   one_tensor({1, 1, 1, 1, 1}, kF32),
                   at(kDimCount, "tensor 'w': 5 dimensions, at most 4 are allowed")});
    {
        RawGguf r;
        r.header(3, 1, 0).str("w").u32(0xffffffffu).zeros(64);
        out.push_back({"dimension-count-max", "a tensor with 2^32 - 1 dimensions", r.bytes(),
                       at(kDimCount, "tensor 'w': 4294967295 dimensions, at most 4 are allowed")});
    }
    out.push_back({"negative-dimension", "ne[1] = 2^64 - 1, which is -1 as ggml's int64",
                   one_tensor({4, kMax64}, kF32),
                   at(dim_at(1), "tensor 'w': dimension 1 is negative (-1)")});
    out.push_back({"negative-first-dimension", "ne[0] = 2^63", one_tensor({k2To63}, kF32),
                   at(dim_at(0), "tensor 'w': dimension 0 is negative (-9223372036854775808)")});
    out.push_back({"element-count-overflow", "(2^32 + 1) x 2^32 elements",
                   one_tensor({(1ull << 32) + 1, 1ull << 32}, kF32),
                   at(kDimCount,
                      "tensor 'w': element count of shape [4294967297, 4294967296] "
                      "overflows int64")});
    out.push_back({"element-count-wraps-to-zero",
                   "2^32 x 2^32 elements: 0 in 64 bits (llama.cpp's check sees 0 and passes)",
                   one_tensor({1ull << 32, 1ull << 32}, kF32),
                   at(kDimCount,
                      "tensor 'w': element count of shape [4294967296, 4294967296] "
                      "overflows int64"),
                   LlamaVerdict::accepts});
    out.push_back({"element-count-wraps-4d",
                   "2^16 in each of 4 dimensions: 2^64, 0 in 64 bits (llama.cpp passes it too)",
                   one_tensor({1 << 16, 1 << 16, 1 << 16, 1 << 16}, kF32),
                   at(kDimCount,
                      "tensor 'w': element count of shape [65536, 65536, 65536, "
                      "65536] overflows int64"),
                   LlamaVerdict::accepts});
    out.push_back({"dimension-int64-max", "ne[0] = 2^63 - 1", one_tensor({k2To63 - 1}, kF32),
                   at(kDimCount,
                      "tensor 'w': element count of shape [9223372036854775807] "
                      "overflows int64")});
    out.push_back({"byte-size-overflow", "2^62 f64 elements: 2^65 bytes",
                   one_tensor({1ull << 62}, kF64),
                   at(type_at(1),
                      "tensor 'w': size in bytes of shape [4611686018427387904] "
                      "overflows")});
    for (const uint32_t type : {43u, 255u, 1u << 31, 0xffffffffu}) {
        out.push_back({fmt::format("unknown-type-{}", type), fmt::format("type id {}", type),
                       one_tensor({8}, type),
                       at(type_at(1), fmt::format("tensor 'w': unknown type id {}", type))});
    }
    const auto removed = [&](uint32_t type, const char *old_name) {
        out.push_back({fmt::format("removed-type-{}", type),
                       fmt::format("type id {} ({}), retired by ggml", type, old_name),
                       one_tensor({32}, type),
                       at(type_at(1), fmt::format("tensor 'w': type id {} ({}) is a removed type "
                                                  "that ggml no longer supports",
                                                  type, old_name))});
    };
    removed(4, "q4_2");
    removed(5, "q4_3");
    removed(31, "q4_0_4_4");
    removed(36, "iq4_nl_4_4");
    out.push_back({"row-not-whole-blocks", "a q4_0 row of 33 elements (blocks of 32)",
                   one_tensor({33, 2}, kQ4_0),
                   at(type_at(2),
                      "tensor 'w': row of 33 elements is not a multiple of the q4_0 "
                      "block size 32")});
}

// --- tensor data layout ---

inline void add_layout(std::vector<BrokenFile> &out) {
    // Offsets of a tensor info's data-offset field, from its start: name "a" (8 + 1), dimension
    // count 4, one dimension 8, type 4.
    constexpr uint64_t kOffsetField1d = 8 + 1 + 4 + 8 + 4;
    {
        RawGguf r;
        r.header(3, 2, 0).tensor("a", {4}, kF32, 0);
        const uint64_t b = r.pos();
        r.tensor("b", {4}, kF32, 16).pad_to(32).zeros(64);
        out.push_back({"misaligned-offset", "tensor b at data offset 16", r.bytes(),
                       at(b + kOffsetField1d,
                          "tensor 'b': data offset 16 is not a multiple of the alignment 32")});
    }
    {
        RawGguf r;
        r.header(3, 2, 1).str("general.alignment").u32(kU32).u32(64);
        r.tensor("a", {16}, kF32, 0);
        const uint64_t b = r.pos();
        r.tensor("b", {4}, kF32, 96).pad_to(64).zeros(192);
        out.push_back({"misaligned-offset-alignment-64",
                       "general.alignment 64, tensor b at data offset 96", r.bytes(),
                       at(b + kOffsetField1d,
                          "tensor 'b': data offset 96 is not a multiple of the alignment 64")});
    }
    {
        RawGguf r;
        r.header(3, 2, 0).tensor("a", {8}, kF32, 0);
        const uint64_t b = r.pos();
        r.tensor("b", {16}, kF32, 32).pad_to(32);
        const uint64_t data = r.pos();
        r.zeros(32 + 63);
        out.push_back({"tensor-past-end",
                       "the last tensor's 64 bytes end 1 byte past the end of the file (llama.cpp: "
                       "no data read)",
                       r.bytes(), past_end(b + kOffsetField1d, "b", 64, 32, data, r.pos()),
                       LlamaVerdict::accepts});
    }
    const auto far = [&](const char *name, const char *why, uint64_t offset) {
        out.push_back({name, why, one_tensor({8}, kF32, offset),
                       past_end(type_at(1) + 4, "w", 32, offset, 64, 128)});
    };
    far("offset-2-63", "tensor data offset 2^63", k2To63);
    far("offset-wraps-around", "offset 2^64 - 32: offset + size wraps around to 0", kMax64 - 31);
    {
        RawGguf r;
        r.header(3, 2, 0).tensor("a", {16}, kF32, 0);
        const uint64_t b = r.pos();
        r.tensor("b", {16}, kF32, 32).pad_to(32).zeros(96);
        out.push_back({"overlapping-tensors", "b starts in the middle of a", r.bytes(),
                       at(b + kOffsetField1d,
                          "tensor 'b': data [32, 96) overlaps the data of tensor 'a' [0, 64)")});
    }
    {
        RawGguf r;
        r.header(3, 3, 0);
        const uint64_t a = r.pos();
        r.tensor("a", {16}, kF32, 128).tensor("b", {4}, kF32, 0).tensor("c", {32}, kF32, 64);
        r.pad_to(32).zeros(192);
        out.push_back({"overlapping-tensors-unordered",
                       "infos out of offset order; c [64, 192) covers a [128, 192)", r.bytes(),
                       at(a + kOffsetField1d,
                          "tensor 'a': data [128, 192) overlaps the data of "
                          "tensor 'c' [64, 192)")});
    }
    {
        RawGguf r;
        r.header(3, 1, 0).tensor("w", {0}, kF32, 0);
        const uint64_t end = r.pos();
        out.push_back({"padding-past-end",
                       "one empty tensor and no padding: the data section must start aligned",
                       r.bytes(),
                       at(end, fmt::format("padding to the data section (at 64) runs past the end "
                                           "of the file ({} bytes)",
                                           end))});
    }
}

// --- split models (llama.cpp's gguf-split) ---

// One shard: the split keys gguf-split writes (split.no and split.count as uint16,
// split.tensors.count as int32), the first shard also general.architecture, and one f32 tensor
// of 4 elements.
struct Shard {
    std::vector<uint8_t> bytes;
    uint64_t no_at, count_at, tensors_at;  // offsets of the split keys' entries
};

struct ShardSpec {
    uint16_t no = 0;
    uint16_t count = 3;
    int32_t tensors = 3;
    bool count_as_string = false;
    std::string tensor = "";  // name of its tensor; "s<no>" when empty
};

inline Shard shard(const ShardSpec &s, uint16_t file_no) {
    Shard out;
    RawGguf r;
    r.header(3, 1, file_no == 0 ? 4 : 3);
    if (file_no == 0) r.str("general.architecture").u32(kString).str("llama");
    out.no_at = r.pos();
    r.str("split.no").u32(kU16).u16(s.no);
    out.count_at = r.pos();
    if (s.count_as_string)
        r.str("split.count").u32(kString).str(std::to_string(s.count));
    else
        r.str("split.count").u32(kU16).u16(s.count);
    out.tensors_at = r.pos();
    r.str("split.tensors.count").u32(kI32).u32(static_cast<uint32_t>(s.tensors));
    const std::string name = s.tensor.empty() ? fmt::format("s{}", file_no) : s.tensor;
    r.tensor(name, {4}, kF32, 0).pad_to(32).zeros(16);
    out.bytes = r.bytes();
    return out;
}

inline std::string shard_name(const std::string &set, uint16_t no) {
    return fmt::format("{}-{:05}-of-00003", set, no + 1);
}

// The error line for a problem found in another file of the set than the one given.
inline std::string in_shard(const std::string &set, uint16_t no, std::optional<uint64_t> offset,
                            const std::string &problem) {
    std::string s = fmt::format("gguftool: {{dir}}/{}.gguf: ", shard_name(set, no));
    if (offset) s += fmt::format("offset {}: ", *offset);
    return s + problem;
}

inline void add_splits(std::vector<BrokenFile> &out) {
    // Each shard on its own is a valid GGUF file: llama.cpp's gguf reader (one file) accepts it;
    // split models are checked by libllama's model loader, not by the gguf reader.
    const auto add = [&](const std::string &set, uint16_t no, const Shard &s, const char *why,
                         std::string error) {
        out.push_back({shard_name(set, no), why, s.bytes, std::move(error), LlamaVerdict::accepts});
    };
    const auto normal = [](uint16_t no) { return shard({.no = no}, no); };

    {
        const std::string set = "split-missing-last";
        const std::string error =
            in_shard(set, 2, std::nullopt, "missing shard 3 of 3 of split model '{file}'");
        add(set, 0, normal(0), "shard 1 of 3; shard 3 is missing", error);
        add(set, 1, normal(1), "shard 2 of 3; shard 3 is missing", error);
    }
    {
        const std::string set = "split-missing-first";
        const std::string error =
            in_shard(set, 0, std::nullopt, "missing shard 1 of 3 of split model '{file}'");
        add(set, 1, normal(1), "shard 2 of 3; shard 1 is missing", error);
        add(set, 2, normal(2), "shard 3 of 3; shard 1 is missing", error);
    }
    {
        const std::string set = "split-foreign-count";
        const Shard foreign = shard({.no = 2, .count = 4}, 2);
        const std::string error =
            in_shard(set, 2, foreign.count_at,
                     "shard belongs to another model: split.count is 4, expected 3");
        add(set, 0, normal(0), "shard 1 of 3; shard 3 says split.count 4", error);
        add(set, 1, normal(1), "shard 2 of 3; shard 3 says split.count 4", error);
        add(set, 2, foreign, "named shard 3 of 3 but says split.count 4",
            "gguftool: {file}: shard 3 of 4 of a split model must be named "
            "<prefix>-00003-of-00004.gguf");
    }
    {
        const std::string set = "split-foreign-tensors";
        const Shard foreign = shard({.no = 2, .tensors = 9}, 2);
        const Shard first = normal(0);
        const std::string error =
            in_shard(set, 2, foreign.tensors_at,
                     "shard belongs to another model: split.tensors.count is 9, expected 3");
        add(set, 0, first, "shard 1 of 3; shard 3 says split.tensors.count 9", error);
        add(set, 1, normal(1), "shard 2 of 3; shard 3 says split.tensors.count 9", error);
        add(set, 2, foreign, "shard 3 of 3 with split.tensors.count 9 (the others say 3)",
            in_shard(set, 0, first.tensors_at,
                     "shard belongs to another model: split.tensors.count is 3, expected 9"));
    }
    {
        const std::string set = "split-wrong-no";
        const Shard wrong = shard({.no = 2}, 1);
        const std::string error =
            in_shard(set, 1, wrong.no_at, "wrong shard: split.no is 2, expected 1");
        add(set, 0, normal(0), "shard 1 of 3; shard 2 says split.no 2", error);
        add(set, 1, wrong, "named shard 2 of 3 but says split.no 2",
            "gguftool: {file}: shard 3 of 3 of a split model must be named "
            "<prefix>-00003-of-00003.gguf");
        add(set, 2, normal(2), "shard 3 of 3; shard 2 says split.no 2", error);
    }
    {
        const std::string set = "split-tensor-total";
        const Shard first = shard({.no = 0, .tensors = 4}, 0);
        const std::string error = in_shard(
            set, 0, first.tensors_at, "split.tensors.count is 4 but the 3 shards hold 3 tensors");
        add(set, 0, first, "shard 1 of 3; all say split.tensors.count 4, they hold 3", error);
        add(set, 1, shard({.no = 1, .tensors = 4}, 1),
            "shard 2 of 3; all say split.tensors.count 4, they hold 3", error);
        add(set, 2, shard({.no = 2, .tensors = 4}, 2),
            "shard 3 of 3; all say split.tensors.count 4, they hold 3", error);
    }
    {
        const std::string set = "split-duplicate-tensor";
        const std::string error = in_shard(set, 2, std::nullopt, "tensor 's0' is also in shard 1");
        const Shard copy = shard({.no = 2, .tensor = "s0"}, 2);
        add(set, 0, normal(0), "shard 1 of 3; shard 3 holds tensor s0 too", error);
        add(set, 1, normal(1), "shard 2 of 3; shard 3 holds tensor s0 too", error);
        add(set, 2, copy, "shard 3 of 3 holding tensor s0 of shard 1", error);
    }
    {
        const std::string set = "split-count-string";
        const Shard odd = shard({.no = 1, .count_as_string = true}, 1);
        const std::string problem = "split.count must be an integer, not string";
        add(set, 0, normal(0), "shard 1 of 3; shard 2 stores split.count as a string",
            in_shard(set, 1, odd.count_at, problem));
        add(set, 1, odd, "shard 2 of 3 with split.count the string \"3\"",
            at(odd.count_at, problem));
        add(set, 2, normal(2), "shard 3 of 3; shard 2 stores split.count as a string",
            in_shard(set, 1, odd.count_at, problem));
    }
    {
        const Shard s = shard({.no = 3}, 0);
        add("split-no-out-of-range", 0, s, "split.no 3 of split.count 3 (numbers start at 0)",
            at(s.no_at, "split.no is 3, expected a shard number below split.count 3"));
    }
}

}  // namespace detail

inline std::vector<BrokenFile> broken_files() {
    std::vector<BrokenFile> out;
    detail::add_truncations(out);
    detail::add_header(out);
    detail::add_counts(out);
    detail::add_metadata(out);
    detail::add_tensor_infos(out);
    detail::add_layout(out);
    detail::add_splits(out);
    return out;
}

// Files that look odd but are valid: both readers must open them.
inline std::vector<ValidFile> valid_edge_files() {
    using namespace detail;
    std::vector<ValidFile> out;
    out.push_back({"header-only", RawGguf().header(3, 0, 0).bytes()});
    {
        RawGguf r;
        r.header(3, 0, 2).str("general.architecture").u32(kString).str("llama");
        r.str("llama.block_count").u32(kU32).u32(0);
        out.push_back({"no-tensors", r.bytes()});
    }
    {
        // A [4, 0] tensor has no data: the next tensor starts at the same offset.
        RawGguf r;
        r.header(3, 2, 0).tensor("empty", {4, 0}, kF32, 0).tensor("x", {4}, kF32, 0);
        r.pad_to(32).zeros(16);
        out.push_back({"zero-dimension", r.bytes()});
    }
    {
        RawGguf r;
        r.header(3, 1, 0).tensor("w", {0}, kF32, 0).pad_to(32);
        out.push_back({"only-empty-tensor", r.bytes()});
    }
    {
        RawGguf r;
        r.header(3, 0, 2).str("general.name").u32(kString).str("");
        r.str("general.architecture").u32(kString).str("llama");
        out.push_back({"empty-string", r.bytes()});
    }
    {
        RawGguf r;
        r.header(3, 0, 2).str("numbers").u32(kArray).u32(kU32).u64(0);
        r.str("strings").u32(kArray).u32(kString).u64(0);
        out.push_back({"empty-array", r.bytes()});
    }
    {
        RawGguf r;
        r.header(3, 0, 1).str("tokenizer.ggml.tokens").u32(kArray).u32(kString).u64(3);
        r.str("").str("a").str("");
        out.push_back({"empty-string-in-array", r.bytes()});
    }
    return out;
}

// The manifest, testdata/broken/EXPECTED: "<file> <exit code> <llama.cpp> <stderr line>".
inline std::string manifest(const std::vector<BrokenFile> &files) {
    std::string s =
        "# Broken GGUF files and the error each must give; written by tools/make_broken_files.\n"
        "# <file> <exit code> <llama.cpp's reader: rejects|accepts> <the line gguftool dump and\n"
        "# to-onnx print on stderr>; {file} is the path given to gguftool, {dir} its directory.\n";
    for (const BrokenFile &f : files)
        s += fmt::format("\n# {}\n{}.gguf 1 {} {}\n", f.why, f.name,
                         f.llama == LlamaVerdict::rejects ? "rejects" : "accepts", f.error);
    return s;
}

// Writes <dir>/broken/*.gguf with <dir>/broken/EXPECTED, and <dir>/valid-edge/*.gguf. Files left
// from an earlier corpus (*.gguf, EXPECTED) in those two directories are removed first.
inline void write_corpus(const std::filesystem::path &dir) {
    namespace fs = std::filesystem;
    const fs::path broken = dir / "broken", valid = dir / "valid-edge";
    for (const fs::path &d : {broken, valid}) {
        fs::create_directories(d);
        for (const auto &e : fs::directory_iterator(d))
            if (e.path().extension() == ".gguf" || e.path().filename() == "EXPECTED")
                fs::remove(e.path());
    }
    const std::vector<BrokenFile> files = broken_files();
    for (const BrokenFile &f : files) write_file(broken / (f.name + ".gguf"), f.bytes);
    const std::string m = manifest(files);
    write_file(broken / "EXPECTED", m);
    for (const ValidFile &f : valid_edge_files()) write_file(valid / (f.name + ".gguf"), f.bytes);
}

}  // namespace gguftool::testkit
