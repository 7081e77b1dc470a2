// Manifest::read: llama-gguf-hash's lines, and a clear error for every line it cannot use.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gguftool/hash_manifest.hpp"

namespace gguftool::hash {
namespace {

using Reason = ManifestError::Reason;

class ManifestTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("gguftool-manifest-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string &text) {
        const std::string path = (dir_ / "m.txt").string();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    // The error reading `text` throws.
    ManifestError error_of(const std::string &text) {
        const std::string path = write(text);
        try {
            Manifest::read(path);
        } catch (const ManifestError &e) {
            return e;
        }
        ADD_FAILURE() << "no error for:\n" << text;
        return ManifestError(Reason::malformed, "", "");
    }

    std::filesystem::path dir_;
};

const std::string kSha = "7dd641b32f59b60dbd4b5420c4b0f6321ccf48f58f6ae201a3dbc4a58a27c6e4";

TEST_F(ManifestTest, ReadsLlamaGgufHashLines) {
    // As llama.cpp's examples/gguf-hash/README.md shows them.
    const Manifest m = Manifest::read(
        write("xxh64     f66e9cd66a4396a0  test.gguf:tensor_0\n"
              "sha1      59f79ecefd8125a996fdf419239051a7e99e5f20  test.gguf:tensor_0\n"
              "sha256    " +
              kSha + "  test.gguf\n"));
    EXPECT_EQ(m.kinds(), KindSet().add(Kind::xxh64).add(Kind::sha1).add(Kind::sha256));
    EXPECT_EQ(m.find(Kind::xxh64, "test.gguf:tensor_0"), "f66e9cd66a4396a0");
    EXPECT_EQ(m.find(Kind::sha1, "test.gguf:tensor_0"), "59f79ecefd8125a996fdf419239051a7e99e5f20");
    EXPECT_EQ(m.find(Kind::sha256, "test.gguf"), kSha);
    EXPECT_FALSE(m.find(Kind::sha256, "test.gguf:tensor_0"));
    EXPECT_FALSE(m.find(Kind::xxh3, "test.gguf:tensor_0"));
}

TEST_F(ManifestTest, BlankLinesCrlfTabsSpacesInNamesUpperCaseAndFirstEntryWins) {
    const Manifest m =
        Manifest::read(write("\n   \r\n"
                             "xxh3\tF66E9CD66A4396A0\tmy model.gguf:t 1  \r\n"
                             "xxh3  0000000000000000  my model.gguf:t 1\n"
                             "uuid  ef001206-dadc-5f6d-a15f-3359e577d4e5  m.gguf"));
    EXPECT_EQ(m.find(Kind::xxh3, "my model.gguf:t 1"), "f66e9cd66a4396a0");
    EXPECT_EQ(m.find(Kind::uuid, "m.gguf"), "ef001206-dadc-5f6d-a15f-3359e577d4e5");
    EXPECT_EQ(m.kinds(), KindSet().add(Kind::xxh3).add(Kind::uuid));
}

TEST_F(ManifestTest, ErrorsNameTheLine) {
    struct Case {
        std::string text;
        Reason reason;
        std::string message;  // after "<path>"
    };
    const std::vector<Case> cases = {
        {"xxh64  f66e9cd66a4396a0  a.gguf\nsha256  zz  a.gguf\n", Reason::malformed,
         ":2: 'zz' is not a sha256 hash (64 hex digits)"},
        {"xxh64  f66e9cd66a4396a0\n", Reason::malformed, ":1: xxh64 line without a name"},
        {"\nsha1\n", Reason::malformed, ":2: sha1 line without a hash"},
        {"uuid  ef001206dadc5f6da15f3359e577d4e5  a.gguf\n", Reason::malformed,
         ":1: 'ef001206dadc5f6da15f3359e577d4e5' is not a uuid hash (8-4-4-4-12 hex digits)"},
        {"xxh64  f66e9cd66a4396a0  a.gguf\nmd5  d41d8cd98f00b204e9800998ecf8427e  a.gguf\n",
         Reason::unknown_type,
         ":2: unknown hash type 'md5' (known: xxh64, xxh3, sha1, sha256, uuid)"},
        {"manifest  m.txt  sha256\n", Reason::unknown_type, ":1: unknown hash type 'manifest'"},
        {"", Reason::no_entries, ": no hash in the manifest"},
        {"\n \n", Reason::no_entries, ": no hash in the manifest"},
    };
    for (const Case &c : cases) {
        const ManifestError e = error_of(c.text);
        EXPECT_EQ(e.reason(), c.reason) << c.text;
        const std::string want = (dir_ / "m.txt").string() + c.message;
        EXPECT_EQ(std::string(e.what()).substr(0, want.size()), want) << e.what();
    }
}

TEST_F(ManifestTest, UnreadableFiles) {
    const std::string missing = (dir_ / "none.txt").string();
    try {
        Manifest::read(missing);
        FAIL();
    } catch (const ManifestError &e) {
        EXPECT_EQ(e.reason(), Reason::unreadable);
        EXPECT_EQ(std::string(e.what()), missing + ": cannot open: No such file or directory");
    }
    try {
        Manifest::read(dir_.string());
        FAIL();
    } catch (const ManifestError &e) {
        EXPECT_EQ(e.reason(), Reason::unreadable);
        EXPECT_EQ(std::string(e.what()), dir_.string() + ": cannot read: Is a directory");
    }
}

}  // namespace
}  // namespace gguftool::hash
