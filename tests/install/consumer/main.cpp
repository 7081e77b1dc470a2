// Opens a GGUF file with the installed library and decodes two tensors: a plain f32 one, which
// must come out as its stored bytes, and a quantized one, which must come out finite.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gguftool/gguf.hpp"
#include "gguftool/quant.hpp"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: consumer FILE.gguf\n");
        return 2;
    }
    try {
        const gguftool::gguf::Model model = gguftool::gguf::Model::open(argv[1]);
        bool plain = false, quantized = false;
        for (const gguftool::gguf::TensorInfo &t : model.tensors()) {
            const bool is_f32 = t.type == gguftool::GgmlType::f32;
            if ((is_f32 && plain) || (!is_f32 && quantized)) continue;
            std::vector<float> out(t.elements);
            gguftool::quant::decode_f32(t.type, t.data, t.elements, out.data());
            if (is_f32 && std::memcmp(out.data(), t.data.data(), t.bytes) != 0) {
                std::fprintf(stderr, "%.*s: decoded f32 differs from the stored bytes\n",
                             int(t.name.size()), t.name.data());
                return 1;
            }
            for (float v : out)
                if (!std::isfinite(v)) {
                    std::fprintf(stderr, "%.*s: non-finite value\n", int(t.name.size()),
                                 t.name.data());
                    return 1;
                }
            std::printf("decoded %.*s (%llu values)\n", int(t.name.size()), t.name.data(),
                        static_cast<unsigned long long>(t.elements));
            (is_f32 ? plain : quantized) = true;
        }
        if (!plain || !quantized) {
            std::fprintf(stderr, "%s: wanted an f32 and a quantized tensor\n", argv[1]);
            return 1;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
