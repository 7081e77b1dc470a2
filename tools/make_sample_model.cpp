// Writes testdata/sample.gguf (sample_model.hpp), or with --f16 its unquantized source.
//
//   make_sample_model [--f16] [OUTPUT]     (default: testdata/sample.gguf)
#include <fmt/core.h>

#include <string>

#include "sample_model.hpp"

int main(int argc, char **argv) {
    using gguftool::testkit::SampleTypes;
    SampleTypes types = SampleTypes::mixed;
    std::string path = "testdata/sample.gguf";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--f16")
            types = SampleTypes::f16;
        else
            path = arg;
    }
    const auto g = gguftool::reference::ggml();
    if (!g || !g->gguf_init_empty || !g->quantize_chunk || !g->ggml_new_tensor) {
        fmt::print(stderr,
                   "make_sample_model: llama.cpp's libggml-base.so is not available "
                   "(run npm ci, or set GGUFTOOL_GGML_LIB)\n");
        return 1;
    }
    if (!gguftool::testkit::write_sample(*g, path, types)) {
        fmt::print(stderr, "make_sample_model: cannot write {}\n", path);
        return 1;
    }
    fmt::print("wrote {}\n", path);
    return 0;
}
