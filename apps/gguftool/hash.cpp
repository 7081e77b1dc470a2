// gguftool hash: llama.cpp's llama-gguf-hash — the same hashes of each tensor's bytes and of the
// whole model's, the same lines, manifests, --check and exit codes — on gguf::Model (mapped; a
// split model as one) with the hashing of lib/hash (parallel, no copies).
#include "gguftool/hash.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/hash_manifest.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace {

namespace hs = gguftool::hash;
using hs::Kind;

// llama-gguf-hash's exit codes (its hash_exit_code_t), which this command has instead of the
// CLI's usual ones. Usage errors are kHashExitUsage (commands.hpp), its generic failure.
enum HashExit : int {
    kSuccess = 0,
    kFailure = 1,  // an invalid or unreadable model (gguftool::Error), a write error
    kMismatch = 2,
    kMissingEntry = 3,       // checking, but the manifest has no entry for anything hashed
    kUnknownHash = 4,        // the manifest has no hash, or a line of a type we do not know
    kManifestFileError = 5,  // the manifest cannot be read, or has a malformed line
};
static_assert(kFailure == kHashExitUsage);

const char *exit_name(int code) {
    switch (code) {
        case kSuccess:
            return "Success";
        case kFailure:
            return "Failure";
        case kMismatch:
            return "Mismatch";
        case kMissingEntry:
            return "Manifest Missing Entry";
        case kUnknownHash:
            return "Manifest Unknown Hash";
        case kManifestFileError:
            return "Manifest File Error";
    }
    return "?";
}

struct Options {
    std::string file;
    bool xxh64 = false, xxh3 = false, sha1 = false, sha256 = false, uuid = false, all = false;
    bool no_layer = false;
    std::string manifest;
    unsigned threads = 0;
};

hs::KindSet asked_kinds(const Options &opt) {
    hs::KindSet k;
    if (opt.xxh64 || opt.all) k.add(Kind::xxh64);
    if (opt.xxh3 || opt.all) k.add(Kind::xxh3);
    if (opt.sha1 || opt.all) k.add(Kind::sha1);
    if (opt.sha256 || opt.all) k.add(Kind::sha256);
    if (opt.uuid) k.add(Kind::uuid);  // not in --all: an ID, not a hash
    return k;
}

// What --check found, gathered over the lines, and llama-gguf-hash's verdict on it.
class Check {
public:
    explicit Check(const hs::Manifest &m) : manifest_(m) {}

    // "Ok", "Mismatch" or "Not Found" for one line, counted for the verdict.
    std::string_view judge(Kind k, std::string_view digest, std::string_view name, bool model) {
        const auto want = manifest_.find(k, name);
        if (!want) return "Not Found";
        const bool ok = *want == digest;
        (model ? model_found_ : tensor_found_) = true;
        if (!ok) (model ? model_mismatch_ : tensor_mismatch_) = true;
        return ok ? "Ok" : "Mismatch";
    }

    // As llama-gguf-hash decides: with no model line in the manifest, the tensor lines decide
    // (none found: a missing entry); with one, any mismatch fails. A mismatch is kMismatch
    // here, where llama-gguf-hash returns its generic failure (1) although it defines 2 for it.
    int exit_code() const {
        if (!model_found_) {
            if (!tensor_found_) return kMissingEntry;
            return tensor_mismatch_ ? kMismatch : kSuccess;
        }
        return tensor_mismatch_ || model_mismatch_ ? kMismatch : kSuccess;
    }

private:
    const hs::Manifest &manifest_;
    bool tensor_found_ = false, tensor_mismatch_ = false;
    bool model_found_ = false, model_mismatch_ = false;
};

// One line, llama-gguf-hash's "%-8s  %s  %s" (and "  -  %s" when checking).
void put_line(Out &out, Kind k, std::string_view digest, std::string_view name, Check *check,
              bool model) {
    out.put_left(hs::kind_name(k), 8);
    out.put("  ");
    out.put(digest);
    out.put("  ");
    out.put(name);
    if (check) {
        out.put("  -  ");
        out.put(check->judge(k, digest, name, model));
    }
    out.put('\n');
}

int run(const Options &opt) {
    hs::KindSet kinds = asked_kinds(opt);
    std::unique_ptr<hs::Manifest> manifest;
    if (!opt.manifest.empty()) {
        try {
            manifest = std::make_unique<hs::Manifest>(hs::Manifest::read(opt.manifest));
        } catch (const hs::ManifestError &e) {
            fmt::print(stderr, "gguftool: {}\n", e.what());
            using R = hs::ManifestError::Reason;
            return e.reason() == R::unknown_type || e.reason() == R::no_entries
                       ? kUnknownHash
                       : kManifestFileError;
        }
        if (kinds.empty())  // the manifest's strongest
            for (Kind k : hs::kByStrength)
                if (manifest->kinds().has(k)) {
                    kinds.add(k);
                    break;
                }
    }
    if (kinds.empty()) kinds.add(Kind::xxh64);  // llama-gguf-hash's default

    const gguf::Model model = gguf::Model::open(opt.file);
    std::vector<std::span<const uint8_t>> parts;
    parts.reserve(model.tensors().size());
    for (const gguf::TensorInfo &t : model.tensors()) parts.push_back(t.data);
    const hs::Hashes hashes =
        hs::hash_parts(parts, {.kinds = kinds, .per_part = !opt.no_layer, .threads = opt.threads});

    Out out(stdout);
    std::unique_ptr<Check> check;
    if (manifest) {
        out.put("manifest  ");
        out.put(manifest->path());
        for (Kind k : hs::kByStrength)
            if (manifest->kinds().has(k)) out.print("  {}", hs::kind_name(k));
        out.put('\n');
        check = std::make_unique<Check>(*manifest);
    }
    std::string name;
    for (size_t i = 0; i < hashes.parts.size(); ++i) {
        name = opt.file + ':' + std::string(model.tensors()[i].name);
        for (Kind k : hs::kKinds)
            if (!hashes.parts[i][size_t(k)].empty())
                put_line(out, k, hashes.parts[i][size_t(k)], name, check.get(), false);
    }
    for (Kind k : hs::kKinds)
        if (kinds.has(k)) put_line(out, k, hashes.whole[size_t(k)], opt.file, check.get(), true);

    int code = kSuccess;
    if (check) {
        code = check->exit_code();
        out.print("\nVerification results for {} - {}\n", manifest->path(), exit_name(code));
    }
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kFailure;
    }
    return code;
}

}  // namespace

Runner add_hash(CLI::App &app) {
    auto opt = std::make_shared<Options>();
    auto *cmd = app.add_subcommand(
        "hash", "Hash each tensor's data and the whole model's, as llama-gguf-hash does");
    cmd->add_option("FILE", opt->file, "GGUF file (any shard of a split model)")->required();
    cmd->add_flag("--xxh64", opt->xxh64, "XXH64 (the default)");
    cmd->add_flag("--xxh3", opt->xxh3, "XXH3, 64-bit");
    cmd->add_flag("--sha1", opt->sha1, "SHA-1");
    cmd->add_flag("--sha256", opt->sha256, "SHA-256");
    cmd->add_flag("--uuid", opt->uuid, "UUIDv5 of the model's tensor data");
    cmd->add_flag("--all", opt->all, "Every hash but the UUID");
    cmd->add_flag("--no-layer", opt->no_layer, "The whole model's hashes only, no tensor lines");
    cmd->add_option("-c,--check", opt->manifest,
                    "Check against MANIFEST (by default with its strongest hash)")
        ->type_name("MANIFEST");
    cmd->add_option("--threads", opt->threads, "Threads (0 = all cores)")
        ->check(CLI::NonNegativeNumber)
        ->type_name("N");
    return [opt] { return run(*opt); };
}

}  // namespace gguftool::cli
