// Fuzz target: the .npy reader behind `gguftool run --input` and `--compare`. Any bytes must give
// a tensor whose size matches its dtype and shape, or a gguftool::Error; an accepted tensor must
// survive a write and re-read unchanged.
#include <cstring>

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
    try {
        const runtime::Tensor t = runtime::decode_npy({data, size}, "<fuzz>");
        const std::vector<uint8_t> again = runtime::encode_npy(t);
        const runtime::Tensor u = runtime::decode_npy(again, "<re-encoded>");
        if (u.dtype() != t.dtype() || u.shape() != t.shape() || u.nbytes() != t.nbytes() ||
            std::memcmp(u.data(), t.data(), t.nbytes()) != 0)
            std::abort();
    } catch (const Error &) {
    }
    return 0;
}
