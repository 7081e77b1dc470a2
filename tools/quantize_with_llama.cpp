// Quantizes a GGUF model with llama.cpp's own llama_model_quantize (the test kit's llama_ref.hpp,
// testkit::model_quantize): for the README's diff example and for checking by hand.
//
//   quantize_with_llama IN OUT [FTYPE]     (FTYPE: a llama_ftype number; default 15, Q4_K_M)
#include <fmt/core.h>

#include <string>

#include "llama_ref.hpp"

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fmt::print(stderr, "usage: quantize_with_llama IN OUT [FTYPE]\n");
        return 2;
    }
    const int ftype = argc > 3 ? std::stoi(argv[3]) : gguftool::testkit::kFtypeMostlyQ4_K_M;
    const std::string why = gguftool::testkit::model_quantize(argv[1], argv[2], ftype);
    if (!why.empty()) {
        fmt::print(stderr, "quantize_with_llama: {}\n", why);
        return 1;
    }
    fmt::print("wrote {}\n", argv[2]);
    return 0;
}
