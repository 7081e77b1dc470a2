// `gguftool hash`: every digest checked against Debian's xxhsum, sha1sum and sha256sum run on the
// tensor bytes llama.cpp's reader extracts; the UUID against sha1sum and RFC 9562's recipe;
// manifests written by gguftool and in llama-gguf-hash's format; split models; bad input.
#include "gguftool/hash.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using gguf::MetaValue;

// Debian's tools (packages xxhash and coreutils; setup.sh installs them).
const std::string kXxhsum = "/usr/bin/xxhsum";
const std::string kSha1sum = "/usr/bin/sha1sum";
const std::string kSha256sum = "/usr/bin/sha256sum";

struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> dims;
    size_t bytes;
};
// Sizes below, at and across the hashing's 32 KiB chunks, in several types.
const std::vector<Tensor> kTensors = {
    {"token_embd.weight", GgmlType::q8_0, {64, 700}, 700 * 2 * 34},
    {"output_norm.weight", GgmlType::f32, {64}, 256},
    {"blk.0.attn_q.weight", GgmlType::f16, {100, 900}, 180000},
    {"blk.0.odd", GgmlType::i8, {7}, 7},
    {"blk.0.ffn_up.weight", GgmlType::q4_0, {32, 1024}, 1024 * 18},
};

// kTensors[first, last), as shard `no` of `count` (split keys) when no >= 0.
gguf::Writer model_writer(size_t first, size_t last, int no = -1, int count = 0) {
    gguf::Writer w;
    if (no <= 0) w.add("general.architecture", MetaValue::str("llama"));
    if (no >= 0) {
        w.add("split.no", MetaValue::u16(uint16_t(no)));
        w.add("split.count", MetaValue::u16(uint16_t(count)));
        w.add("split.tensors.count", MetaValue::i32(int32_t(kTensors.size())));
    }
    for (size_t i = first; i < last; ++i) {
        const Tensor &t = kTensors[i];
        w.add_tensor(t.name, t.type, t.dims, filler(t.bytes, uint32_t(100 + i)));
    }
    return w;
}

std::string shard_name(const std::string &prefix, int no, int count) {
    return prefix + fmt::format("-{:05}-of-{:05}.gguf", no + 1, count);
}

// The digest a tool prints for `bytes` (written to a file for it): "HASH  FILE", or for xxhsum
// -H3 "XXH3 (FILE) = HASH".
std::string tool_digest(const TempDir &dir, std::vector<std::string> argv,
                        const std::vector<uint8_t> &bytes) {
    const std::string path = dir.file("tool-input.bin");
    write_file(path, bytes);
    argv.push_back(path);
    const RunResult r = testkit::run(argv);
    EXPECT_EQ(r.status, 0) << argv[0] << ": " << r.err;
    const size_t eq = r.out.find(" = ");
    if (eq != std::string::npos) return r.out.substr(eq + 3, r.out.find('\n') - eq - 3);
    return r.out.substr(0, r.out.find(' '));
}

// RFC 9562's UUIDv5: SHA-1 (sha1sum) of the namespace's bytes and then the name's; its first 16
// bytes with the version (5) and variant (0b10) bits set.
std::string uuid5(const TempDir &dir, const std::vector<uint8_t> &ns,
                  const std::vector<uint8_t> &name) {
    std::vector<uint8_t> input = ns;
    input.insert(input.end(), name.begin(), name.end());
    std::string h = tool_digest(dir, {kSha1sum}, input).substr(0, 32);
    h[12] = '5';
    const unsigned v = (unsigned(std::stoul(h.substr(16, 2), nullptr, 16)) & 0x3f) | 0x80;
    h.replace(16, 2, fmt::format("{:02x}", v));
    return h.substr(0, 8) + '-' + h.substr(8, 4) + '-' + h.substr(12, 4) + '-' + h.substr(16, 4) +
           '-' + h.substr(20);
}

std::string line(const std::string &type, const std::string &hash, const std::string &name) {
    return fmt::format("{:<8}  {}  {}\n", type, hash, name);
}

struct Expected {
    std::vector<std::string> tensor_lines;  // per tensor, in file order: xxh64, xxh3, sha1, sha256
    std::vector<std::string> model_lines;   // xxh64, xxh3, sha1, sha256, uuid
    std::string all() const {
        std::string s;
        for (const std::string &l : tensor_lines) s += l;
        for (const std::string &l : model_lines) s += l;
        return s;
    }
};

// What `hash --all --uuid` must print for the model at `path` (named `shown` in the lines),
// computed by the tools from the tensor bytes llama.cpp reads from each of `files`.
Expected expected_lines(const TempDir &dir, const std::vector<std::string> &files,
                        const std::string &shown) {
    Expected e;
    std::vector<uint8_t> model;
    for (const std::string &f : files)
        for (const LlamaTensorView &t : llama_tensors(f)) {
            const std::string name = shown + ":" + t.name;
            e.tensor_lines.push_back(
                line("xxh64", tool_digest(dir, {kXxhsum, "-H64"}, t.bytes), name));
            e.tensor_lines.push_back(
                line("xxh3", tool_digest(dir, {kXxhsum, "-H3"}, t.bytes), name));
            e.tensor_lines.push_back(line("sha1", tool_digest(dir, {kSha1sum}, t.bytes), name));
            e.tensor_lines.push_back(line("sha256", tool_digest(dir, {kSha256sum}, t.bytes), name));
            model.insert(model.end(), t.bytes.begin(), t.bytes.end());
        }
    e.model_lines = {line("xxh64", tool_digest(dir, {kXxhsum, "-H64"}, model), shown),
                     line("xxh3", tool_digest(dir, {kXxhsum, "-H3"}, model), shown),
                     line("sha1", tool_digest(dir, {kSha1sum}, model), shown),
                     line("sha256", tool_digest(dir, {kSha256sum}, model), shown)};
    const std::vector<uint8_t> ns(hash::kUuidNamespace.begin(), hash::kUuidNamespace.end());
    e.model_lines.push_back(line("uuid", uuid5(dir, ns, model), shown));
    return e;
}

class HashCli : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_NE(ggml(), nullptr);
        for (const std::string &tool : {kXxhsum, kSha1sum, kSha256sum})
            ASSERT_EQ(::access(tool.c_str(), X_OK), 0) << tool << " missing (see setup.sh)";
        path_ = dir_.file("model.gguf");
        model_writer(0, kTensors.size()).write(path_);
    }
    RunResult hash(std::vector<std::string> args) {
        args.insert(args.begin(), "hash");
        return run_gguftool(args);
    }
    std::string write_text(const std::string &name, const std::string &text) {
        const std::string p = dir_.file(name);
        write_file(p, std::vector<uint8_t>(text.begin(), text.end()));
        return p;
    }

    TempDir dir_;
    std::string path_;
};

TEST_F(HashCli, LlamaCppNamespaceIsUuid5OfItsUrl) {
    // uuid.NAMESPACE_URL, 6ba7b811-9dad-11d1-80b4-00c04fd430c8 (RFC 9562, appendix A).
    const std::vector<uint8_t> url_ns = {0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
                                         0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};
    const std::string name = "en.wikipedia.org/wiki/Llama.cpp";
    const std::string got = uuid5(dir_, url_ns, std::vector<uint8_t>(name.begin(), name.end()));
    EXPECT_EQ(got, "ef001206-dadc-5f6d-a15f-3359e577d4e5");  // llama-gguf-hash's README
    std::string ours;
    for (uint8_t b : hash::kUuidNamespace) ours += fmt::format("{:02x}", b);
    std::string plain = got;
    std::erase(plain, '-');
    EXPECT_EQ(ours, plain);
}

TEST_F(HashCli, EveryHashMatchesTheToolsOnTheExtractedBytes) {
    const Expected want = expected_lines(dir_, {path_}, path_);
    ASSERT_EQ(want.tensor_lines.size(), 4 * kTensors.size());
    for (const char *threads : {"1", "2", "3", "0"}) {
        const RunResult r = hash({"--all", "--uuid", "--threads", threads, path_});
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.out, want.all()) << threads << " threads";
        EXPECT_EQ(r.err, "");
    }
}

TEST_F(HashCli, DefaultNoLayerAndSingleKinds) {
    const Expected want = expected_lines(dir_, {path_}, path_);
    // No option: xxh64, per tensor and the model.
    std::string xxh64;
    for (size_t i = 0; i < kTensors.size(); ++i) xxh64 += want.tensor_lines[4 * i];
    xxh64 += want.model_lines[0];
    RunResult r = hash({path_});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, xxh64);
    r = hash({"--xxh64", path_});
    EXPECT_EQ(r.out, xxh64);

    r = hash({"--sha256", "--xxh3", "--no-layer", path_});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, want.model_lines[1] + want.model_lines[3]);
    r = hash({"--uuid", path_});  // the UUID is the model's only
    EXPECT_EQ(r.out, want.model_lines[4]);
    r = hash({"--sha1", "--threads", "2", path_});
    std::string sha1;
    for (size_t i = 0; i < kTensors.size(); ++i) sha1 += want.tensor_lines[4 * i + 2];
    EXPECT_EQ(r.out, sha1 + want.model_lines[2]);
}

// The lines of `out` that mention `name` exactly as the line's name (third field).
std::vector<std::string> lines_named(const std::string &out, const std::string &name) {
    std::vector<std::string> got;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) {
        std::istringstream ws(l);
        std::string type, hash, n;
        if (ws >> type >> hash >> n && n == name) got.push_back(l);
    }
    return got;
}

TEST_F(HashCli, ManifestChecksCleanAndNamesTheFlippedTensor) {
    RunResult r = hash({"--all", path_});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string manifest = write_text("model.manifest", r.out);

    // By default the manifest's strongest hash, sha256.
    r = hash({"--check", manifest, path_});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    std::istringstream in(r.out);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, "manifest  " + manifest + "  sha256  sha1  xxh64  xxh3");
    const Expected want = expected_lines(dir_, {path_}, path_);
    std::string body = first + "\n";
    for (size_t i = 0; i < kTensors.size(); ++i) {
        std::string l = want.tensor_lines[4 * i + 3];
        l.insert(l.size() - 1, "  -  Ok");
        body += l;
    }
    std::string model = want.model_lines[3];
    model.insert(model.size() - 1, "  -  Ok");
    body += model + "\nVerification results for " + manifest + " - Success\n";
    EXPECT_EQ(r.out, body);

    r = hash({"-c", manifest, "--all", path_});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(lines_named(r.out, path_ + ":blk.0.odd").size(), 4u);

    // One byte of blk.0.attn_q.weight flipped.
    const auto tensors = llama_tensors(path_);
    LlamaGguf l(path_);
    const uint64_t at = l.g->gguf_get_data_offset(l.ctx) + tensors[2].offset + 12345;
    std::vector<uint8_t> bytes = read_file(path_);
    uint8_t flipped = bytes[at] ^ 0x10;
    patch_file(path_, at, &flipped, 1);
    for (const char *kind : {"--sha256", "--xxh64", "--xxh3", "--sha1"}) {
        r = hash({"--check", manifest, kind, path_});
        EXPECT_EQ(r.status, 2) << kind << "\n" << r.out;
        for (const Tensor &t : kTensors) {
            const auto got = lines_named(r.out, path_ + ":" + t.name);
            ASSERT_EQ(got.size(), 1u) << t.name;
            const bool bad = t.name == "blk.0.attn_q.weight";
            EXPECT_TRUE(got[0].ends_with(bad ? "  -  Mismatch" : "  -  Ok")) << got[0];
        }
        EXPECT_TRUE(lines_named(r.out, path_).at(0).ends_with("  -  Mismatch"));
        EXPECT_TRUE(r.out.ends_with("\nVerification results for " + manifest + " - Mismatch\n"))
            << r.out;
    }
}

// A manifest written by hand in llama-gguf-hash's format (its README's example, with this
// model's names and hashes from the tools) checks, with its rules: the lines of tensors decide
// when the model has none; nothing found is a missing entry.
TEST_F(HashCli, LlamaGgufHashManifestsCheck) {
    const std::vector<LlamaTensorView> tensors = llama_tensors(path_);
    std::string text;
    std::vector<uint8_t> model;
    for (const LlamaTensorView &t : tensors) {
        text += "xxh64     " + tool_digest(dir_, {kXxhsum, "-H64"}, t.bytes) + "  " + path_ + ":" +
                t.name + "\n";
        text += "sha1      " + tool_digest(dir_, {kSha1sum}, t.bytes) + "  " + path_ + ":" +
                t.name + "\n";
        model.insert(model.end(), t.bytes.begin(), t.bytes.end());
    }
    const std::string tensors_only = write_text("tensors.manifest", text);
    text += "xxh64     " + tool_digest(dir_, {kXxhsum, "-H64"}, model) + "  " + path_ + "\n";
    text += "sha1      " + tool_digest(dir_, {kSha1sum}, model) + "  " + path_ + "\n";
    const std::string full = write_text("llama.manifest", text);

    RunResult r = hash({"--check", full, path_});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(r.out.starts_with("manifest  " + full + "  sha1  xxh64\nsha1      ")) << r.out;
    EXPECT_EQ(lines_named(r.out, path_).at(0),
              "sha1      " + tool_digest(dir_, {kSha1sum}, model) + "  " + path_ + "  -  Ok");

    r = hash({"--check", tensors_only, "--xxh64", path_});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(lines_named(r.out, path_).at(0).ends_with("  -  Not Found"));

    r = hash({"--check", full, "--sha256", path_});  // no sha256 line: nothing to check
    EXPECT_EQ(r.status, 3) << r.out;
    EXPECT_TRUE(r.out.ends_with(" - Manifest Missing Entry\n")) << r.out;
    r = hash({"--check", full, dir_.file("other.gguf")});
    EXPECT_EQ(r.status, 1);  // the model does not exist
}

TEST_F(HashCli, UuidLinesCheck) {
    RunResult r = hash({"--uuid", path_});
    const std::string manifest = write_text("uuid.manifest", r.out);
    r = hash({"--check", manifest, path_});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(r.out.starts_with("manifest  " + manifest + "  uuid\nuuid      ")) << r.out;
    EXPECT_NE(r.out.find("  -  Ok\n"), std::string::npos);
}

TEST_F(HashCli, BadManifestsAreNamedWithTheirLine) {
    const std::string good = hash({"--xxh64", path_}).out;
    struct Case {
        std::string text;
        int status;
        std::string error;  // after "gguftool: <manifest>"
    };
    const std::vector<Case> cases = {
        {good + "sha256  12ab  " + path_ + "\n", 5,
         fmt::format(":{}: '12ab' is not a sha256 hash (64 hex digits)", kTensors.size() + 2)},
        {"xxh64  0123456789abcdef\n", 5, ":1: xxh64 line without a name"},
        {"md5  d41d8cd98f00b204e9800998ecf8427e  " + path_ + "\n", 4,
         ":1: unknown hash type 'md5'"},
        {"\n", 4, ": no hash in the manifest"},
    };
    for (const Case &c : cases) {
        const std::string m = write_text("bad.manifest", c.text);
        const RunResult r = hash({"--check", m, path_});
        EXPECT_EQ(r.status, c.status) << c.text;
        EXPECT_TRUE(r.err.starts_with("gguftool: " + m + c.error)) << r.err;
        EXPECT_EQ(r.out, "");
    }
    const RunResult missing = hash({"--check", dir_.file("none"), path_});
    EXPECT_EQ(missing.status, 5);
    EXPECT_EQ(missing.err,
              "gguftool: " + dir_.file("none") + ": cannot open: No such file or directory\n");
}

TEST_F(HashCli, BadModelsAndUsage) {
    RunResult r = hash({dir_.file("none.gguf")});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err,
              "gguftool: " + dir_.file("none.gguf") + ": cannot open: No such file or directory\n");
    resize_file(path_, 1000);
    r = hash({path_});
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(r.err.starts_with("gguftool: " + path_ + ": ")) << r.err;
    EXPECT_EQ(r.out, "");
    // Usage errors exit 1 (llama-gguf-hash's failure), never 2, which means a mismatch here.
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{"--md5", path_}, {}, {"--threads", "x", path_}, {"--check"}}) {
        r = hash(args);
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err, "");
    }
    EXPECT_EQ(run_gguftool({"dump", "--md5", kSample}).status, 2);  // the other commands' 2
}

TEST_F(HashCli, SplitModelHashesAsTheWhole) {
    const std::string prefix = dir_.file("split");
    const std::vector<std::pair<size_t, size_t>> ranges = {{0, 2}, {2, 3}, {3, kTensors.size()}};
    std::vector<std::string> shards;
    for (int no = 0; no < 3; ++no) {
        shards.push_back(shard_name(prefix, no, 3));
        model_writer(ranges[no].first, ranges[no].second, no, 3).write(shards.back());
    }
    const Expected want = expected_lines(dir_, shards, shards[0]);
    const Expected whole = expected_lines(dir_, {path_}, shards[0]);
    EXPECT_EQ(want.all(), whole.all());  // the shards hold the same bytes
    const RunResult r = hash({"--all", "--uuid", shards[0]});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, want.all());
    // Any shard names the model; lines carry the path given.
    const RunResult second = hash({"--all", "--uuid", shards[1]});
    EXPECT_EQ(second.out, expected_lines(dir_, shards, shards[1]).all());

    // A shard of another split: split.count 4.
    gguf::Writer foreign = model_writer(ranges[1].first, ranges[1].second, 1, 4);
    foreign.write(shards[1]);
    const RunResult bad = hash({shards[0]});
    EXPECT_EQ(bad.status, 1);
    EXPECT_EQ(bad.out, "");
    EXPECT_NE(bad.err.find("shard belongs to another model: split.count is 4, expected 3"),
              std::string::npos)
        << bad.err;
}

}  // namespace
}  // namespace gguftool::test
