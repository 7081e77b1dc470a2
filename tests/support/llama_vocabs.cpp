// llama_vocab_dir: llama.cpp's vocab files fetched from the pinned npm package, cached.
#include "llama_vocabs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "files.hpp"
#include "process.hpp"

namespace gguftool::testkit {
namespace {

namespace fs = std::filesystem;

constexpr const char *kPackage = "node-llama-cpp@3.22.1";
constexpr const char *kCommit = "de3ff815ea7d559ee917f063901b8986f038abc6";  // its llama.cpp

fs::path cache_dir() {
    return fs::path(GGUFTOOL_TESTKIT_CACHE_DIR) / "llama-vocabs-3.22.1";
}

}  // namespace

std::string llama_vocab_dir() {
    const fs::path dir = cache_dir() / "models";
    const fs::path done = cache_dir() / "complete";
    std::error_code ec;
    if (fs::exists(done, ec)) return dir.string();
    fs::create_directories(cache_dir(), ec);
    const int lock = ::open((cache_dir() / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    struct Unlock {
        int fd;
        ~Unlock() {
            if (fd >= 0) ::close(fd);
        }
    } unlock{lock};
    if (fs::exists(done, ec)) return dir.string();

    const fs::path work = cache_dir() / "work";
    fs::remove_all(work, ec);
    fs::remove_all(dir, ec);
    fs::create_directories(work, ec);
    // npm pack fetches the package's tarball only (no install, no scripts).
    const std::string script =
        "set -e\n"
        "cd '" +
        work.string() +
        "'\n"
        "npm pack --silent " +
        kPackage +
        " > /dev/null\n"
        "tar xzf node-llama-cpp-*.tgz package/llama/gitRelease.bundle\n"
        "git clone -q --bare package/llama/gitRelease.bundle llama.git\n"
        "test \"$(git -C llama.git rev-parse HEAD)\" = " +
        kCommit + " || { echo 'the bundle is not llama.cpp " + kCommit +
        "' >&2; exit 1; }\n"
        "mkdir -p out\n"
        "git -C llama.git archive HEAD models | tar x -C out --wildcards 'models/ggml-vocab-*'\n";
    ProcessOptions o;
    o.timeout = std::chrono::minutes(10);
    const ProcessResult r = run({"/bin/sh", "-c", script}, o);
    if (r.status != 0)
        throw std::runtime_error(std::string("cannot get llama.cpp's vocab files from ") +
                                 kPackage + " (npm pack, tar, git): " + r.err + r.out);
    fs::rename(work / "out" / "models", dir);
    fs::remove_all(work, ec);
    std::ofstream(done) << kCommit << "\n";
    return dir.string();
}

VocabVectors read_vocab_vectors(const std::string &gguf_path) {
    VocabVectors v;
    std::error_code ec;
    if (!fs::exists(gguf_path + ".inp", ec)) return v;
    const std::string raw = read_text(gguf_path + ".inp");
    const std::string sep = "\n__ggml_vocab_test__\n";
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        if (next == std::string::npos) {
            v.texts.push_back(raw.substr(pos));
            break;
        }
        v.texts.push_back(raw.substr(pos, next - pos));
        pos = next + sep.size();
    }
    std::istringstream out(read_text(gguf_path + ".out"));
    for (std::string line; std::getline(out, line);) {
        std::istringstream ids(line);
        v.ids.emplace_back();
        for (int id; ids >> id;) v.ids.back().push_back(id);
    }
    if (v.ids.size() != v.texts.size())
        throw std::runtime_error(gguf_path + ": .inp has " + std::to_string(v.texts.size()) +
                                 " chunks, .out " + std::to_string(v.ids.size()) + " lines");
    return v;
}

}  // namespace gguftool::testkit
