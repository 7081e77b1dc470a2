// Files for tests, tools and generators: a temporary directory, whole files read and written, and
// files changed in place. No GoogleTest: the tools and fuzz/make_seeds use it too.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace gguftool::testkit {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
public:
    TempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gguftool-test-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;

    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Writes `bytes` to `path`, replacing the file; throws std::runtime_error naming it when it
// cannot.
inline void write_file(const std::filesystem::path &path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void write_file(const std::filesystem::path &path, const std::vector<uint8_t> &bytes) {
    write_file(path, {reinterpret_cast<const char *>(bytes.data()), bytes.size()});
}

// The bytes of the file at `path`: empty when it cannot be read.
inline std::string read_text(const std::filesystem::path &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<uint8_t> read_file(const std::filesystem::path &path) {
    const std::string bytes = read_text(path);
    return {bytes.begin(), bytes.end()};
}

// Shrinks or grows a file in place. (Rewriting a file with O_TRUNC is slow on ext4, which
// flushes on truncate-and-rewrite; sweeps use this instead.)
inline void resize_file(const std::string &path, uint64_t size) {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
        throw std::runtime_error("cannot resize " + path);
}

// Overwrites bytes of an existing file in place.
inline void patch_file(const std::string &path, uint64_t offset, const void *data, size_t n) {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(static_cast<const char *>(data), static_cast<std::streamsize>(n));
    if (!f) throw std::runtime_error("cannot patch " + path);
}

}  // namespace gguftool::testkit
