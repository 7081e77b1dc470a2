// Hash manifests: the lines `gguftool hash` and llama.cpp's llama-gguf-hash print,
//     xxh64     f66e9cd66a4396a0  model.gguf:token_embd.weight
//     sha256    7dd641b32f59b6...  model.gguf
// read back to check a model against.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gguftool/error.hpp"
#include "gguftool/hash.hpp"

namespace gguftool::hash {

// Why a manifest cannot be used. llama-gguf-hash has an exit code for each group: an unknown hash
// type or no entry at all is one (4), a file that cannot be read or a malformed line another (5).
class ManifestError : public Error {
public:
    enum class Reason { unreadable, malformed, unknown_type, no_entries };
    ManifestError(Reason reason, std::string where, std::string what)
        : Error(std::move(where), std::nullopt, std::move(what)), reason_(reason) {}
    Reason reason() const { return reason_; }

private:
    Reason reason_;
};

class Manifest {
public:
    // Reads `path` (any file a read(2) loop can read: a pipe too). Each line that is not blank is
    // an entry: TYPE, HASH and NAME separated by spaces or tabs, TYPE one of the kind names, HASH
    // of that kind's form (is_digest_text), NAME the rest of the line (it may hold spaces; a
    // trailing CR or blank is dropped). Throws ManifestError: `path` "cannot open"/"cannot read";
    // `path:LINE` for a line of an unknown TYPE or missing its HASH or NAME or with a HASH of
    // the wrong form; `path` when there is no entry at all.
    static Manifest read(const std::string &path);

    const std::string &path() const { return path_; }
    KindSet kinds() const { return kinds_; }  // the kinds with at least one entry
    // The digest (lower case) of the first entry of kind `k` for `name`, or nullopt. Later entries
    // for the same kind and name are ignored, as llama-gguf-hash does.
    std::optional<std::string_view> find(Kind k, std::string_view name) const;

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Entries = std::unordered_map<std::string, std::string, Hash, std::equal_to<>>;

    std::string path_;
    KindSet kinds_;
    std::array<Entries, kKindCount> entries_;  // by Kind: name -> digest
};

}  // namespace gguftool::hash
