// The non-linear 4-bit code book of iq4_nl and iq4_xs.
//
// Exact copies of the tables in ggml-org/ggml src/ggml-common.h at commit
// d99724f2b141fed9e1a9f402213506c081433465. Names kept so they can be compared with the source.
#pragma once

#include <cstdint>

namespace gguftool::formats::codebooks {

// kvalues_iq4nl[q]: the value of 4-bit code q, before scaling.
// clang-format off
inline constexpr int8_t kvalues_iq4nl[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};
// clang-format on

}  // namespace gguftool::formats::codebooks
