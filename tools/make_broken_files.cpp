// Writes the corpus of broken GGUF files and valid edge cases (tests/support/broken_corpus.hpp):
// DIR/broken/*.gguf with the expected errors in DIR/broken/EXPECTED, and DIR/valid-edge/*.gguf.
//
//   make_broken_files [DIR]     (default: testdata)
#include <fmt/core.h>

#include <exception>

#include "broken_corpus.hpp"

int main(int argc, char **argv) {
    if (argc > 2) {
        fmt::print(stderr, "usage: make_broken_files [DIR]\n");
        return 2;
    }
    const std::string dir = argc == 2 ? argv[1] : "testdata";
    try {
        gguftool::testkit::write_corpus(dir);
    } catch (const std::exception &e) {
        fmt::print(stderr, "make_broken_files: {}\n", e.what());
        return 1;
    }
    fmt::print("wrote {} broken files and {} valid edge cases under {}\n",
               gguftool::testkit::broken_files().size(),
               gguftool::testkit::valid_edge_files().size(), dir);
    return 0;
}
