// The corpus of broken files (testdata/broken, manifest EXPECTED) and of valid edge cases
// (testdata/valid-edge), run through the built CLI in a child process with a memory limit and a
// timeout: every broken file gives exactly its expected error line and exit code 1 in `dump`,
// `dump --json` and `to-onnx` (which leaves no output behind); llama.cpp's reader agrees on each
// file; the valid edge cases open everywhere. The committed files must be byte for byte what
// tests/support/broken_corpus.hpp builds.
#include "broken_corpus.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;

const fs::path kTestdata = fs::path(GGUFTOOL_SOURCE_DIR) / "testdata";
const fs::path kBroken = kTestdata / "broken";
const fs::path kValidEdge = kTestdata / "valid-edge";

constexpr rlim_t kMemoryLimit = rlim_t{1} << 30;  // the child's memory: 1 GiB
constexpr auto kTimeout = std::chrono::seconds(20);

using Limited = testkit::ProcessResult;
using testkit::read_file;

// Runs the CLI with `args` in a child limited to kMemoryLimit of memory, killed after kTimeout.
Limited run_limited(const std::vector<std::string> &args) {
    std::vector<std::string> argv = {GGUFTOOL_EXE};
    argv.insert(argv.end(), args.begin(), args.end());
    testkit::ProcessOptions o;
    testkit::limit_memory(o, kMemoryLimit);
    o.timeout = kTimeout;
    return testkit::run(argv, o);
}

// One line of testdata/broken/EXPECTED: "<file> <exit code> <rejects|accepts> <stderr line>".
struct Expected {
    std::string file;
    int exit_code = -1;  // -1: the line does not parse
    bool llama_rejects = true;
    std::string error;
    std::string line;  // as written, for messages
};

void PrintTo(const Expected &e, std::ostream *os) {
    *os << e.file;
}

std::vector<Expected> read_manifest() {
    std::vector<Expected> out;
    std::ifstream in(kBroken / "EXPECTED");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        Expected e;
        e.line = line;
        std::istringstream fields(line);
        std::string llama;
        if (fields >> e.file >> e.exit_code >> llama &&
            (llama == "rejects" || llama == "accepts")) {
            e.llama_rejects = llama == "rejects";
            fields >> std::ws;
            std::getline(fields, e.error);
        } else {
            e.exit_code = -1;
        }
        out.push_back(std::move(e));
    }
    return out;
}

const std::vector<Expected> &manifest() {
    static const std::vector<Expected> m = read_manifest();
    return m;
}

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// A gtest name from a file name: letters, digits and '_'.
std::string test_name(const std::string &file) {
    std::string s = fs::path(file).stem().string();
    for (char &c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s.empty() ? "unnamed" : s;
}

std::string describe(const Limited &r) {
    if (r.timed_out) return "killed after the timeout";
    if (r.signal) return "killed by signal " + std::to_string(r.signal);
    return "exit " + std::to_string(r.status) + ", stderr: " + r.err;
}

std::vector<std::string> gguf_files(const fs::path &dir) {
    std::vector<std::string> names;
    if (fs::is_directory(dir))
        for (const auto &e : fs::directory_iterator(dir))
            if (e.path().extension() == ".gguf") names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// --- broken files ---

class BrokenCorpus : public ::testing::TestWithParam<Expected> {};

TEST_P(BrokenCorpus, GivesTheExpectedErrorInEveryCommand) {
    const Expected &e = GetParam();
    ASSERT_NE(e.exit_code, -1) << "malformed manifest line: " << e.line;
    const std::string path = (kBroken / e.file).string();
    const std::string line =
        replace_all(replace_all(e.error, "{file}", path), "{dir}", kBroken.string()) + "\n";

    for (const std::vector<std::string> &args :
         {std::vector<std::string>{"dump", path},
          std::vector<std::string>{"dump", "--json", path}}) {
        const Limited r = run_limited(args);
        ASSERT_FALSE(r.timed_out) << args[0] << ": " << describe(r);
        EXPECT_EQ(r.signal, 0) << describe(r);
        EXPECT_EQ(r.status, e.exit_code) << describe(r);
        EXPECT_EQ(r.err, line) << (args.size() == 3 ? "dump --json" : "dump");
        EXPECT_EQ(r.out, "") << "output on stdout for a broken file";
        // Under a sanitizer, one command: the others read the file with the same reader and stop
        // at the same error (all three are checked in the release build).
        if (GGUFTOOL_TEST_SANITIZED) return;
    }

    const testkit::TempDir out;
    const Limited r = run_limited({"to-onnx", path, out.file("model.onnx")});
    ASSERT_FALSE(r.timed_out) << "to-onnx: " << describe(r);
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.status, e.exit_code) << describe(r);
    EXPECT_EQ(r.err, line) << "to-onnx";
    EXPECT_TRUE(fs::is_empty(out.path())) << "to-onnx left files in " << out.path();
}

// Where the manifest says llama.cpp accepts a file we reject, the reason is documented
// (docs/VALIDATION.md, "Reading GGUF: what is validated"; testdata/README.md for split models) and
// checked here, so the list of differences stays true.
TEST_P(BrokenCorpus, LlamaCppAgrees) {
    const Expected &e = GetParam();
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    const std::string path = (kBroken / e.file).string();
    if (e.llama_rejects)
        EXPECT_TRUE(testkit::llama_rejects(path)) << "llama.cpp accepts " << e.file;
    else
        EXPECT_FALSE(testkit::llama_rejects(path))
            << "llama.cpp now rejects " << e.file << ": mark it 'rejects' in the corpus";
}

INSTANTIATE_TEST_SUITE_P(Files, BrokenCorpus, ::testing::ValuesIn(manifest()),
                         [](const ::testing::TestParamInfo<Expected> &info) {
                             return test_name(info.param.file);
                         });

std::string names_only_in(const std::vector<std::string> &a, const std::vector<std::string> &b) {
    std::vector<std::string> only;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only));
    std::string s;
    for (const std::string &n : only) s += " " + n;
    return s;
}

TEST(BrokenCorpusManifest, ListsEveryFileExactlyOnce) {
    std::vector<std::string> listed;
    for (const Expected &e : manifest()) listed.push_back(e.file);
    std::sort(listed.begin(), listed.end());
    EXPECT_EQ(std::adjacent_find(listed.begin(), listed.end()), listed.end())
        << "a file is listed twice";
    const std::vector<std::string> present = gguf_files(kBroken);
    EXPECT_GT(present.size(), 50u);
    EXPECT_TRUE(listed == present) << "listed but missing:" << names_only_in(listed, present)
                                   << "\npresent but not listed:" << names_only_in(present, listed);
}

// --- valid edge cases ---

class ValidEdge : public ::testing::TestWithParam<std::string> {};

TEST_P(ValidEdge, OpensInEveryCommandAndInLlamaCpp) {
    const std::string path = (kValidEdge / GetParam()).string();
    const Limited text = run_limited({"dump", path});
    EXPECT_EQ(text.status, 0) << describe(text);
    EXPECT_EQ(text.err, "");
    const Limited json = run_limited({"dump", "--json", path});
    EXPECT_EQ(json.status, 0) << describe(json);
    EXPECT_EQ(json.err, "");
    EXPECT_TRUE(nlohmann::json::accept(json.out)) << json.out;
    const testkit::TempDir out;
    const Limited onnx = run_limited({"to-onnx", "--quiet", path, out.file("model.onnx")});
    EXPECT_EQ(onnx.status, 0) << describe(onnx);
    EXPECT_TRUE(fs::exists(out.file("model.onnx")));

    testkit::expect_same_as_llama(path, *gguf::File::open(path));
}

INSTANTIATE_TEST_SUITE_P(Files, ValidEdge, ::testing::ValuesIn(gguf_files(kValidEdge)),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                             return test_name(info.param);
                         });

TEST(ValidEdgeCorpus, HasTheRequiredCases) {
    const std::vector<std::string> present = gguf_files(kValidEdge);
    for (const char *name : {"zero-dimension.gguf", "no-tensors.gguf", "empty-string.gguf",
                             "empty-array.gguf", "empty-string-in-array.gguf"})
        EXPECT_NE(std::find(present.begin(), present.end(), name), present.end()) << name;
}

// --- the corpus is what the generator writes ---

std::vector<std::string> all_files(const fs::path &dir) {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(BrokenCorpusGenerator, ReproducesTheCommittedFilesByteForByte) {
    const testkit::TempDir tmp;
    testkit::write_corpus(tmp.path());
    for (const char *sub : {"broken", "valid-edge"}) {
        const fs::path fresh = fs::path(tmp.path()) / sub, committed = kTestdata / sub;
        ASSERT_TRUE(fs::is_directory(committed)) << committed;
        const std::vector<std::string> names = all_files(fresh);
        const std::vector<std::string> have = all_files(committed);
        ASSERT_TRUE(have == names)
            << "missing:" << names_only_in(names, have)
            << "\nnot written by the generator:" << names_only_in(have, names)
            << "\nregenerate with: make_broken_files " << kTestdata.string();
        for (const std::string &name : names)
            EXPECT_TRUE(read_file(fresh / name) == read_file(committed / name))
                << sub << "/" << name
                << " differs from what tests/support/broken_corpus.hpp builds";
    }
}

}  // namespace
}  // namespace gguftool
