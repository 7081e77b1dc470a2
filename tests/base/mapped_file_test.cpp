// MappedFile: the bytes of a file, an empty file, and errors that name the path and the cause.
#include "gguftool/mapped_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "gguf_test_support.hpp"
#include "gguftool/error.hpp"

namespace gguftool {
namespace {

TEST(MappedFile, HoldsTheFilesBytes) {
    testkit::TempDir dir;
    testkit::write_file(dir.file("f"), {1, 2, 3, 250});
    const MappedFile m(dir.file("f"));
    ASSERT_EQ(m.size(), 4u);
    EXPECT_EQ(std::vector<uint8_t>(m.bytes().begin(), m.bytes().end()),
              (std::vector<uint8_t>{1, 2, 3, 250}));
    EXPECT_EQ(m.data(), m.bytes().data());
}

TEST(MappedFile, SharedMappingOutlivesTheFile) {
    testkit::TempDir dir;
    testkit::write_file(dir.file("f"), {9, 8});
    const std::shared_ptr<const MappedFile> m = MappedFile::open(dir.file("f"));
    std::filesystem::remove(dir.file("f"));
    ASSERT_EQ(m->size(), 2u);
    EXPECT_EQ(m->bytes()[0], 9);
    EXPECT_EQ(m->bytes()[1], 8);
}

TEST(MappedFile, EmptyFileHasNoBytes) {
    testkit::TempDir dir;
    testkit::write_file(dir.file("empty"), "");
    const MappedFile m(dir.file("empty"));
    EXPECT_EQ(m.size(), 0u);
    EXPECT_TRUE(m.bytes().empty());
}

std::string open_error(const std::string &path) {
    try {
        MappedFile::open(path);
    } catch (const Error &e) {
        EXPECT_EQ(e.where(), path);
        return e.problem();
    }
    ADD_FAILURE() << path << " opened";
    return "";
}

TEST(MappedFile, ErrorsNameThePathAndTheCause) {
    testkit::TempDir dir;
    EXPECT_EQ(open_error(dir.file("absent")), "cannot open: No such file or directory");
    EXPECT_EQ(open_error(dir.path()), "not a regular file");
}

}  // namespace
}  // namespace gguftool
