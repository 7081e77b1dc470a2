// Fuzz target: the serialized onnx.TensorProto (.pb) reader behind `gguftool run --input` and the
// node tests. Any bytes must give a tensor or a gguftool::Error. External data is looked up beside
// the input (a memfd, so in /proc/self/fd, where no data file can be found).
#include "fuzz_support.hpp"
#include "gguftool/error.hpp"
#include "gguftool/runtime.hpp"

using namespace gguftool;

// Tensors the input asks for may be huge; refuse them early instead of hitting the fuzzer's
// memory limit (the refusal is the behaviour under test).
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    gguftool::runtime::set_tensor_byte_limit(uint64_t(256) << 20);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fuzz::MemoryFile file;
    try {
        const runtime::Tensor t = runtime::read_tensor_pb(file.write(data, size));
        volatile uint64_t sink = t.nbytes();
        for (size_t i = 0; i < t.nbytes(); i += 4096) sink = sink + t.data()[i];
    } catch (const Error &) {
    }
    return 0;
}
