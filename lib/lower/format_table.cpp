// The lowering of each quantized type, from the families' rows.
#include <fmt/format.h>

#include <array>

#include "formats.hpp"
#include "gguftool/error.hpp"

namespace gguftool::lower::detail {

FormatLowering format_lowering(GgmlType type) {
    static const auto table = [] {
        std::array<FormatLowering, kGgmlTypeCount> tab{};
        for (auto family : {legacy_lowerings, kquant_lowerings, iq_lowerings, ternary_lowerings,
                            fp4_lowerings, q1q2_lowerings})
            for (const Lowering &l : family()) tab[static_cast<uint32_t>(l.type)] = l.lower;
        return tab;
    }();
    const auto id = static_cast<uint32_t>(type);
    if (id < kGgmlTypeCount && table[id]) return table[id];
    throw Error(fmt::format("internal: {} is not a block format", type_name(type)));
}

}  // namespace gguftool::lower::detail
