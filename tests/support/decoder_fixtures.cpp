// decoder_gguf / decoder_package: made on first use, then read from the cache.
#include "decoder_fixtures.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/llama_reference.hpp"
#include "tiny_decoder.hpp"

namespace gguftool::testkit {
namespace {

namespace fs = std::filesystem;

// Bump when the tiny models or the exporter's output change meaning: it names the cache folder.
constexpr const char *kVersion = "decoders-2";

fs::path cache_dir() {
    return fs::path(GGUFTOOL_TESTKIT_CACHE_DIR) / kVersion;
}

// Holds the cache's lock for its lifetime.
class Lock {
public:
    Lock() {
        std::error_code ec;
        fs::create_directories(cache_dir(), ec);
        fd_ = ::open((cache_dir() / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ >= 0) flock(fd_, LOCK_EX);
    }
    ~Lock() {
        if (fd_ >= 0) ::close(fd_);
    }

private:
    int fd_ = -1;
};

std::string make_gguf(const std::string &variant, const std::string &type) {
    const fs::path path = cache_dir() / (variant + "-" + type + ".gguf");
    if (fs::exists(path)) return path.string();
    const fs::path tmp = path.string() + ".tmp";
    if (type == "F32") {
        write_tiny_decoder(variant, tmp.string());
    } else {
        const std::string f32 = make_gguf(variant, "F32");
        const std::optional<int> ftype = reference::llama_ftype_from_name(type);
        if (!ftype) throw std::runtime_error("unknown llama.cpp type " + type);
        std::string why;
        auto lib = reference::load_llama(&why);
        if (!lib) throw std::runtime_error("libllama is not available: " + why);
        reference::quantize_model(lib, f32, tmp.string(), *ftype);
    }
    fs::rename(tmp, path);
    return path.string();
}

}  // namespace

std::string decoder_gguf(const std::string &variant, const std::string &type) {
    Lock lock;
    return make_gguf(variant, type);
}

std::string decoder_package(const std::string &variant, const std::string &type, int opset,
                            bool nbits) {
    Lock lock;
    const std::string gguf = make_gguf(variant, type);
    const fs::path dir = cache_dir() / (variant + "-" + type + "-opset" + std::to_string(opset) +
                                        (nbits ? "-nbits" : ""));
    if (fs::exists(dir / "onnx" / "model.onnx")) return dir.string();
    std::error_code ec;
    fs::remove_all(dir, ec);
    decoder::Options o;
    if (opset != 29) o.opset = opset;
    if (nbits) o.weights = decoder::Weights::nbits;
    decoder::export_decoder(gguf::Model::open(gguf), dir.string(), o);
    return dir.string();
}

}  // namespace gguftool::testkit
