// Writes one of the tiny random decoder models of tests/support/tiny_decoder.hpp (F32 GGUF), or
// with --encoder one of the tiny embedding models of tests/support/tiny_encoder.hpp (their
// vocabularies fetched as the tests fetch them), or lists them.
//
//   make_tiny_decoder NAME OUT.gguf [--seed N]   (default: the variant's own seed)
//   make_tiny_decoder --encoder NAME OUT.gguf
//   make_tiny_decoder --list
#include <fmt/core.h>

#include <cstdint>
#include <exception>
#include <string>

#include "tiny_decoder.hpp"
#include "tiny_encoder.hpp"

namespace {

int usage() {
    fmt::print(stderr,
               "usage: make_tiny_decoder NAME OUT.gguf [--seed N]\n"
               "       make_tiny_decoder --encoder NAME OUT.gguf\n"
               "       make_tiny_decoder --list\n");
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace gguftool::testkit;
    std::string name, path;
    uint32_t seed = 0;  // the variant's own
    bool list = false, encoder = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--list") {
            list = true;
        } else if (arg == "--encoder") {
            encoder = true;
        } else if (arg == "--seed" && i + 1 < argc) {
            try {
                seed = uint32_t(std::stoul(argv[++i]));
            } catch (const std::exception &) {
                return usage();
            }
        } else if (arg.starts_with("-")) {
            return usage();
        } else if (name.empty()) {
            name = arg;
        } else if (path.empty()) {
            path = arg;
        } else {
            return usage();
        }
    }
    if (list) {
        for (const std::string &n : tiny_decoder_names()) {
            const TinyDecoder d = tiny_decoder(n);
            fmt::print("{:<16} {:<9} {}\n", d.name, d.arch, d.features);
        }
        fmt::print("\n--encoder:\n");
        for (const std::string &n : tiny_encoder_names()) {
            const TinyEncoder e = tiny_encoder(n);
            fmt::print("{:<16} {:<16} {} (vocabulary {})\n", e.name, e.arch, e.features, e.vocab);
        }
        return 0;
    }
    if (name.empty() || path.empty()) return usage();
    try {
        if (encoder)
            write_tiny_encoder(name, path);
        else
            write_tiny_decoder(name, path, seed);
    } catch (const std::exception &e) {
        fmt::print(stderr, "make_tiny_decoder: {}\n", e.what());
        return 1;
    }
    fmt::print("wrote {} ({}, {})\n", path, name,
               seed ? fmt::format("seed {}", seed) : std::string("its own seed"));
    return 0;
}
