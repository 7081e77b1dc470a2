#include <array>

#include "formats.hpp"

namespace gguftool::formats {

BlockDecoder block_decoder(GgmlType t) {
    static const auto table = [] {
        std::array<BlockDecoder, kGgmlTypeCount> tab{};
        for (auto family : {legacy_kernels, kquant_kernels, iq_kernels, ternary_kernels,
                            fp4_kernels, q1q2_kernels})
            for (const DecodeKernel &k : family()) tab[static_cast<uint32_t>(k.type)] = k.decode;
        return tab;
    }();
    return table[static_cast<uint32_t>(t)];
}

}  // namespace gguftool::formats
