// Fuzz target: the ONNX model loader of `gguftool run` and the operators it executes
// (DequantizePacked, Unpack, Unsqueeze, OneHot, ...), attributes included. The input is a
// serialized ModelProto; a model that loads is run once with small inputs made up from a hash of
// the bytes. Loading and running must end in outputs or a gguftool::Error.
#include <cstring>
#include <random>
#include <string_view>

#include "gguftool/error.hpp"
#include "gguftool/runtime.hpp"

using namespace gguftool;
namespace rt = gguftool::runtime;

namespace {

// An input of the declared dtype; unknown dims become 1..4, known dims above 64 make the whole
// input skipped (the run then fails on the missing input, which is fine).
bool make_input(const rt::ValueInfo &info, std::mt19937_64 &rng, rt::Tensor &out) {
    rt::Shape shape;
    uint64_t elements = 1;
    const size_t rank = info.has_shape ? info.dims.size() : rng() % 3;
    for (size_t i = 0; i < rank; ++i) {
        const bool known = info.has_shape && info.dims[i].has_value();
        const int64_t d = known ? *info.dims[i] : int64_t(1 + rng() % 4);
        if (d < 0 || d > 64) return false;
        shape.push_back(d);
        elements *= uint64_t(d);
    }
    if (elements > 4096) return false;
    const DataType dtype = info.dtype == DataType::undefined ? DataType::float32 : info.dtype;
    out = rt::Tensor::allocate(dtype, shape);
    uint8_t *p = out.mutable_data();
    if (dtype == DataType::int64) {  // indices, depths, axes: mostly small, sometimes not
        for (uint64_t i = 0; i < elements; ++i) {
            const int64_t v = rng() % 8 ? int64_t(rng() % 12) - 4 : int64_t(rng());
            std::memcpy(p + 8 * i, &v, 8);
        }
    } else {
        for (size_t i = 0; i < out.nbytes(); ++i) p[i] = uint8_t(rng());
    }
    return true;
}

}  // namespace

// Tensors the input asks for may be huge; refuse them early instead of hitting the fuzzer's
// memory limit (the refusal is the behaviour under test).
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    gguftool::runtime::set_tensor_byte_limit(uint64_t(256) << 20);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        // No directory for external data: every external reference must be refused cleanly.
        rt::Model model = rt::Model::from_bytes({data, size}, "/nonexistent-fuzz-dir", "<fuzz>");
        std::mt19937_64 rng(std::hash<std::string_view>{}(
            std::string_view(reinterpret_cast<const char *>(data), size)));
        rt::Inputs inputs;
        for (const rt::ValueInfo &info : model.inputs()) {
            rt::Tensor t;
            if (make_input(info, rng, t)) inputs[info.name] = t;
        }
        rt::Session session(model, rt::RunOptions{.backend = "cpu", .threads = 1});
        session.run(inputs, [](const std::string &, const rt::Tensor &t) {
            volatile uint64_t sink = t.nbytes();
            (void)sink;
        });
    } catch (const Error &) {
    }
    return 0;
}
