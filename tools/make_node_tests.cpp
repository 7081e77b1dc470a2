// Writes the repository's ONNX backend node tests (tests/support/node_tests.hpp):
// DIR/test_<name>/model.onnx and DIR/test_<name>/test_data_set_0/{input,output}_K.pb.
//
//   make_node_tests [DIR]     (default: testdata/node-tests)
#include <fmt/core.h>

#include <exception>

#include "node_tests.hpp"

int main(int argc, char **argv) {
    if (argc > 2) {
        fmt::print(stderr, "usage: make_node_tests [DIR]\n");
        return 2;
    }
    const std::string dir = argc == 2 ? argv[1] : "testdata/node-tests";
    try {
        const size_t n = gguftool::testkit::write_node_tests(dir);
        fmt::print("wrote {} node tests under {}\n", n, dir);
    } catch (const std::exception &e) {
        fmt::print(stderr, "make_node_tests: {}\n", e.what());
        return 1;
    }
    return 0;
}
